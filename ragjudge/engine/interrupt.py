"""Ctrl-C during a run: the LLM calls on their way are paid for, so their answers are kept (docs/benches/index.md).
The run stops with KeyboardInterrupt (the CLI's exit 130) once the requests in flight are answered or
`DRAIN_SECONDS` have passed; a run whose last calls were those in flight simply ends, its results whole.
Python's own `asyncio.run` cancels everything on the first Ctrl-C, dropping answers about to arrive; so the run
installs its own SIGINT handler where it can (the main thread, Python's default handler in place: not under a host
that handles Ctrl-C itself).
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from ragjudge.llm import LLMGateway

T = TypeVar("T")

DRAIN_SECONDS = 10.0
"""The longest the first Ctrl-C waits for requests already sent (a judge's answer takes seconds)."""

SETTLE_STEPS = 100
"""Event-loop turns given to the answers that arrived, to travel from the cache through the judge to the journal
(no I/O on the way: a few turns each)."""


def run_keeping_answers(main: Coroutine[Any, Any, T], gateway: LLMGateway | None, say: Callable[[str], None],
                        grace: float = DRAIN_SECONDS) -> T:
    """`asyncio.run(main)`, where the first Ctrl-C lets the requests on their way finish before it stops."""
    if (gateway is None or threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        return asyncio.run(main)
    interrupts = 0
    first: list[Callable[[], None]] = []  # set once the loop runs: what the first Ctrl-C does there

    def on_sigint(signum: int, frame: object) -> None:
        nonlocal interrupts
        interrupts += 1
        if interrupts > 1 or not first:
            raise KeyboardInterrupt
        first[0]()

    async def guarded() -> T:
        loop = asyncio.get_running_loop()
        task = asyncio.ensure_future(main)

        def stop_gently() -> None:
            if task.done():
                return
            n = gateway.hold()
            if not n:
                task.cancel()
                return
            say(f"interrupted: waiting up to {grace:g} s for {n} LLM call{'s' if n != 1 else ''} in flight to "
                "finish (Ctrl-C again to stop now)")
            loop.create_task(_cancel_when_drained(task, gateway, grace, say))

        first.append(lambda: loop.call_soon_threadsafe(stop_gently))
        try:
            return await task
        except asyncio.CancelledError:
            if task.cancelled() and not asyncio.current_task().cancelling():  # type: ignore[union-attr]
                raise KeyboardInterrupt from None  # stopped by the first Ctrl-C
            raise  # asyncio.run cancelling everything after a second Ctrl-C

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        return asyncio.run(guarded())
    finally:
        signal.signal(signal.SIGINT, previous)


async def _cancel_when_drained(task: asyncio.Future[Any], gateway: LLMGateway, grace: float,
                               say: Callable[[str], None]) -> None:
    try:
        await asyncio.wait_for(gateway.drained(), grace)
    except asyncio.TimeoutError:
        n = gateway.sending
        say(f"interrupted: {n} LLM call{'s' if n != 1 else ''} still in flight after {grace:g} s: stopping without "
            f"{'them' if n != 1 else 'it'}")
    for _ in range(SETTLE_STEPS):
        if task.done():
            return
        await asyncio.sleep(0)
    task.cancel()

"""Slow start-up work (importing ragas, loading a local model) done in one background thread, so that a run's first
LLM requests go out while it happens; a judge awaits only the piece it is about to use.

One thread, jobs in the order asked: ragas's import (needed first) before a model's load (needed after the first
answers). Each job runs once per process (`start` with the same name returns the same future) in the context of the
run that asked (the run's embedding store follows it, as in `asyncio.to_thread`). Model loading takes the one
re-entrant lock every load goes through (`embeddings.quiet_loading`), so a model needed before its warm-up finished
is loaded once.

A run ends with `settle()`: jobs not started are dropped and the one running is waited for. The thread is a daemon
(a process never waits on it for work nobody needs), and a daemon thread stopped by the interpreter's exit in the
middle of an import would keep that module's import lock: the next import at exit (a library's `__del__`) would wait
forever. A stopped run (an error, a second Ctrl-C) so waits for the import under way, seconds at most.
"""

from __future__ import annotations

import asyncio
import contextvars
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future, wait
from typing import Any

_jobs: dict[str, Future[Any]] = {}
_optional: set[Future[Any]] = set()
_lock = threading.Lock()
_queue: queue.SimpleQueue[tuple[Future[Any], contextvars.Context, Callable[[], Any]]] | None = None


def _work() -> None:
    assert _queue is not None
    while True:
        future, context, job = _queue.get()
        if not future.set_running_or_notify_cancel():
            continue
        try:
            future.set_result(context.run(job))
        except BaseException as exc:  # the awaiting judge raises it where it needs the result
            future.set_exception(exc)


def start(name: str, job: Callable[[], Any], *, optional: bool = False) -> Future[Any]:
    """`job` queued for the background thread, once per process under `name`: the same future every time.
    `optional`: a warm-up nobody awaits, dropped by `settle` when it has not started."""
    global _queue
    with _lock:
        if (known := _jobs.get(name)) is not None and not known.cancelled():
            return known
        if _queue is None:
            _queue = queue.SimpleQueue()
            threading.Thread(target=_work, name="ragjudge-loading", daemon=True).start()
        future: Future[Any] = Future()
        _jobs[name] = future
        if optional:
            _optional.add(future)
        _queue.put((future, contextvars.copy_context(), job))
        return future


def settle() -> None:
    """Drop the warm-ups not started yet and wait for the jobs under way (the end of a run, however it ends)."""
    with _lock:
        jobs = list(_jobs.values())
        for job in _optional:
            job.cancel()  # only if still queued: a running or finished job is left as it is
    wait(jobs)


async def ready(name: str, job: Callable[[], Any]) -> Any:
    """`job`'s result, waiting for it without blocking the event loop (started now if nothing started it)."""
    return await asyncio.wrap_future(start(name, job))


def _import_ragas() -> None:
    import ragjudge.judges.ragas_llm  # noqa: F401  (ragas, LangChain's core, the adapter's classes)
    import ragjudge.retrieval.encoders  # noqa: F401  (what the judges read embeddings and their errors with)


def import_ragas() -> Future[Any]:
    """ragas (and the adapter over it) imported in the background thread: queued first, awaited when needed."""
    return start("ragas", _import_ragas)

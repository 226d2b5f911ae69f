"""Run one coroutine per item concurrently and hand back each result as soon as it is ready: solvers and scorers
form one work queue (the gateway's limits bound what reaches a provider), and the engine journals each result the
moment it arrives, instead of waiting for the slowest request of a fixed batch.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


async def each_as_completed(items: Sequence[T], work: Callable[[T], Awaitable[R]]) -> AsyncIterator[tuple[T, R]]:
    """(item, result) pairs in completion order. An exception in `work` propagates after the others are
    cancelled; so does cancellation (Ctrl-C)."""

    async def tagged(item: T) -> tuple[T, R]:
        return item, await work(item)

    tasks = [asyncio.ensure_future(tagged(item)) for item in items]
    try:
        for next_done in asyncio.as_completed(tasks):
            yield await next_done
    finally:
        await cancel_pending(tasks)


async def all_or_none(coroutines: Sequence[Awaitable[object]]) -> None:
    """Run together; the first exception cancels the others and is raised as it is (not in a group)."""
    tasks = [asyncio.ensure_future(c) for c in coroutines]
    try:
        await asyncio.gather(*tasks)
    finally:
        await cancel_pending(tasks)


async def cancel_pending(tasks: Sequence[asyncio.Future[object]]) -> None:
    """Cancel what is still running and collect every task's exception: once the first failure propagates,
    tasks that failed too (the other requests of an endpoint that cannot be reached) must not surface at exit
    as asyncio's "Task exception was never retrieved" with a traceback each."""
    pending = [t for t in tasks if not t.done()]
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.gather(*pending, return_exceptions=True)
    for task in tasks:
        if task.done() and not task.cancelled():
            task.exception()  # marks it retrieved; the first failure was already raised to the caller

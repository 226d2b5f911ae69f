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

Each job runs with Python's cyclic garbage collector paused (`collector_paused`): imports and model loads make objects
that live as long as the process (modules, classes, weights), and the collector's full passes over them while they
are made find nothing: ragas's import (with torch, pandas and transformers under it) and MiniLM's load cost about
1.2 s of CPU in the collector (issue 44), a tenth of a six-judge run on 50 samples, 0.1 s with it paused.
"""

from __future__ import annotations

import asyncio
import contextvars
import gc
import queue
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, wait
from contextlib import contextmanager
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
            with collector_paused():
                result = context.run(job)
            future.set_result(result)
        except BaseException as exc:  # the awaiting judge raises it where it needs the result
            future.set_exception(exc)


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for the block, on again after it (however it ends) if it was on before
    (a process that turned it off keeps it off). The young objects, the block's mostly, then move untraversed to the
    oldest generation (`gc.freeze()` and `gc.unfreeze()`: two list splices), where a full collection still finds
    any garbage in them; otherwise the next young collections would walk every object the imports made (about
    0.4 s). Reference counting still frees what the block drops; cyclic garbage other threads make meanwhile waits
    for the next collection."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        if not gc.get_freeze_count():  # none frozen by the process (for a fork): unfreezing would thaw those
            gc.freeze()
            gc.unfreeze()
        gc.enable()


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

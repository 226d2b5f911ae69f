"""Slow start-up work (importing ragas, loading a local model) done in one background thread, so that a run's first
LLM requests go out while it happens; a judge awaits only the piece it is about to use.

One thread, jobs in the order asked: ragas's import (needed first) before a model's load (needed after the first
answers). Each job runs once per process (`start` with the same name returns the same future) in the context of the
run that asked (the run's embedding store follows it, as in `asyncio.to_thread`). The thread is a daemon: a process
that ends before a job is needed does not wait for it. Model loading takes the one re-entrant lock every load goes
through (`embeddings.quiet_loading`), so a model needed before its warm-up finished is loaded once.
"""

from __future__ import annotations

import asyncio
import contextvars
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

_jobs: dict[str, Future[Any]] = {}
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


def start(name: str, job: Callable[[], Any]) -> Future[Any]:
    """`job` queued for the background thread, once per process under `name`: the same future every time."""
    global _queue
    with _lock:
        if (known := _jobs.get(name)) is not None:
            return known
        if _queue is None:
            _queue = queue.SimpleQueue()
            threading.Thread(target=_work, name="ragjudge-loading", daemon=True).start()
        future: Future[Any] = Future()
        _jobs[name] = future
        _queue.put((future, contextvars.copy_context(), job))
        return future


async def ready(name: str, job: Callable[[], Any]) -> Any:
    """`job`'s result, waiting for it without blocking the event loop (started now if nothing started it)."""
    return await asyncio.wrap_future(start(name, job))


def _import_ragas() -> None:
    import ragjudge.judges.ragas_llm  # noqa: F401  (ragas, LangChain's core, the adapter's classes)
    import ragjudge.retrieval.encoders  # noqa: F401  (what the judges read embeddings and their errors with)


async def ragas_imported() -> None:
    """Wait until ragas (and the adapter over it) is imported, in the background thread."""
    await ready("ragas", _import_ragas)

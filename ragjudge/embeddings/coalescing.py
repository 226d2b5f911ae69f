"""Encode requests made at once on one event loop, merged into one model call at a time.

A judge embeds a few texts per item while many items run at once: a local model called once per item spends most of
its CPU on each call's fixed cost (a MiniLM call for one short text costs a good part of one for 32, and the calls
of concurrent items contend for the same two cores). Texts asked for while a call runs wait for the next one, so an
idle encoder starts at once and a busy one batches.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

import numpy as np


class Coalescer:
    """`encode` (texts -> one row per text, in a worker thread) shared by the tasks of one event loop."""

    def __init__(self, encode: Callable[[list[str]], np.ndarray]):
        self._encode = encode
        self._waiting: dict[str, asyncio.Future[np.ndarray]] = {}
        self._drainer: asyncio.Task[None] | None = None

    async def encode(self, texts: Sequence[str]) -> np.ndarray:
        loop = asyncio.get_running_loop()
        futures = []
        for text in texts:
            if text not in self._waiting:
                future = self._waiting[text] = loop.create_future()
                future.add_done_callback(_retrieve)
            futures.append(self._waiting[text])
        if self._drainer is None or self._drainer.done():
            self._drainer = loop.create_task(self._drain())  # runs in this caller's context (its embedding store)
        # shielded: a caller cancelled does not cancel the texts other callers wait for too
        return np.stack(await asyncio.gather(*map(asyncio.shield, futures)))

    async def _drain(self) -> None:
        while self._waiting:
            batch, self._waiting = self._waiting, {}
            try:
                matrix = await asyncio.to_thread(self._encode, list(batch))
            except asyncio.CancelledError:  # the loop is ending
                for future in [*batch.values(), *self._waiting.values()]:
                    future.cancel()
                raise
            except BaseException as exc:  # each waiting caller raises it (an encoding error is its item's error)
                for future in batch.values():
                    future.set_exception(exc)
                continue
            for future, row in zip(batch.values(), matrix, strict=True):
                future.set_result(row)


def _retrieve(future: asyncio.Future) -> None:
    """Marks an error as seen: a caller cancelled meanwhile never awaits it, and asyncio would log it."""
    if not future.cancelled():
        future.exception()

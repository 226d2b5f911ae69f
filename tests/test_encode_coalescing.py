"""Concurrent encode requests on one event loop share model calls (`ragjudge.embeddings.coalescing`)."""

from __future__ import annotations

import asyncio
import threading
import time

import numpy as np
import pytest

from ragjudge.embeddings.coalescing import Coalescer
from ragjudge.embeddings.scope import embedding_store_scope
from ragjudge.retrieval.encoders import SentenceTransformerEncoder


class Recorder:
    """An encode function that records each call's texts and takes `seconds` (a model call)."""

    def __init__(self, seconds: float = 0.05, fail_on: str | None = None):
        self.calls: list[list[str]] = []
        self.seconds = seconds
        self.fail_on = fail_on
        self.threads: set[int] = set()

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        self.threads.add(threading.get_ident())
        time.sleep(self.seconds)
        if self.fail_on in texts:
            raise ValueError(f"cannot encode {self.fail_on!r}")
        return np.array([[float(len(t)), float(sum(map(ord, t)))] for t in texts], dtype=np.float32)


def test_texts_asked_while_a_call_runs_go_together_in_the_next() -> None:
    encode = Recorder()
    coalescer = Coalescer(encode)

    async def main() -> list[np.ndarray]:
        first = asyncio.ensure_future(coalescer.encode(["a"]))
        await asyncio.sleep(0.01)  # the first call is running: the next ten wait for one call together
        rest = [coalescer.encode([f"text {i}", "shared"]) for i in range(10)]
        return [await first, *await asyncio.gather(*rest)]

    results = asyncio.run(main())
    assert encode.calls == [["a"], ["text 0", "shared", *(f"text {i}" for i in range(1, 10))]]  # "shared" once
    assert threading.get_ident() not in encode.threads  # the model runs in a worker thread: the loop keeps going
    assert results[0].tolist() == [[1.0, 97.0]]
    for i, rows in enumerate(results[1:]):
        assert rows.tolist() == encode([f"text {i}", "shared"]).tolist()


def test_an_idle_coalescer_calls_at_once() -> None:
    encode = Recorder(seconds=0)
    coalescer = Coalescer(encode)

    async def main() -> None:
        for text in ("x", "y", "x"):
            await coalescer.encode([text])

    asyncio.run(main())
    assert encode.calls == [["x"], ["y"], ["x"]]  # one at a time: nothing waited, nothing was held back


def test_an_error_reaches_every_caller_of_its_call_and_the_next_call_runs() -> None:
    encode = Recorder(fail_on="bad")
    coalescer = Coalescer(encode)

    async def main() -> list:
        first = asyncio.ensure_future(coalescer.encode(["warm"]))
        await asyncio.sleep(0.01)
        failing = await asyncio.gather(coalescer.encode(["bad"]), coalescer.encode(["good"]),
                                       return_exceptions=True)
        return [await first, *failing, await coalescer.encode(["later"])]

    warm, bad, good, later = asyncio.run(main())
    assert isinstance(bad, ValueError) and isinstance(good, ValueError)  # they shared the failed call
    assert "cannot encode 'bad'" in str(good)
    assert later.tolist() == [[5.0, float(sum(map(ord, "later")))]]


def test_a_caller_cancelled_leaves_the_others_their_vectors() -> None:
    encode = Recorder()
    coalescer = Coalescer(encode)

    async def main() -> np.ndarray:
        first = asyncio.ensure_future(coalescer.encode(["warm"]))
        await asyncio.sleep(0.01)
        quitter = asyncio.ensure_future(coalescer.encode(["shared"]))
        stayer = asyncio.ensure_future(coalescer.encode(["shared", "mine"]))
        await asyncio.sleep(0.01)
        quitter.cancel()
        await first
        return await stayer

    assert asyncio.run(main()).tolist() == encode(["shared", "mine"]).tolist()


def test_the_bundled_model_encodes_concurrent_items_in_few_calls_with_the_same_vectors() -> None:
    """Forty judged items asking for two texts each at once: a handful of model calls, not forty, and each text's
    vector as it is alone (within float32 tolerance: batch padding is masked)."""

    class Counting(SentenceTransformerEncoder):
        def __init__(self) -> None:
            super().__init__("minilm")
            self.batches: list[int] = []

        def encode(self, texts, on_progress=None):  # type: ignore[no-untyped-def]
            self.batches.append(len(texts))
            return super().encode(texts, on_progress)

    texts = [[f"Why does question {i} ask about the colour of the sky?", f"An answer of {i * 7} words."]
             for i in range(40)]
    encoder = Counting()

    async def main() -> list[np.ndarray]:
        with embedding_store_scope(None, enabled=False):
            return await asyncio.gather(*(encoder.aencode(pair) for pair in texts))

    together = asyncio.run(main())
    assert len(encoder.batches) <= 5 and sum(encoder.batches) == 80
    with embedding_store_scope(None, enabled=False):
        alone = [SentenceTransformerEncoder("minilm").encode(pair) for pair in texts[:5]]
    for got, want in zip(together, alone):
        np.testing.assert_allclose(got, want, atol=1e-5)

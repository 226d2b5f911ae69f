"""The local sentence encoder's indexing pipeline: host work overlapped with the model's forward pass.

Tokenizing runs ahead in bounded background threads (`prefetched`: the Rust encoder on one chunk while the previous
one is padded into arrays); each batch's forward pass is launched before
the previous batch's vectors are fetched and stored (`encoded_batches`), so on a GPU, whose launches return at
once, the copy back and the store write of one batch happen while the next one computes. On the CPU the same
steps run in the same order and the forward pass, synchronous there, simply dominates.

A chunk's encodings, once padded, go back to the tokenizing thread to be dropped between encoder calls: dropped in
the padding thread they freed the encoder's many small allocations while its threads were allocating again, and
the allocator's locks made the host side spend 3 us of CPU a text more (95,000 futex calls in 46,000 texts, 9,000 so).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import numpy as np

from ragjudge.embeddings.batch_tokenizer import BatchTokenizer

TOKENIZE_CHUNK = 1024
"""Texts per `encode_batch` call: enough to keep every core busy, little enough for the first batch to come soon."""
PREFETCH = 4
"""Items a `prefetched` stream holds ready by default: bounded, so memory does not grow with the corpus."""
WRITE_INTERVAL = 0.25
"""Seconds between store writes, at least, once `store_every` texts are held (and at a tokenizer call's end): where
encoding is fast (a GPU) a write takes many batches, so each transaction rewrites the store's index pages once for
many entries, not once per 128; the last tokenizer calls are small, so the last write stays small too."""

T = TypeVar("T")


@dataclass(frozen=True)
class TokenBatch:
    """Texts and their padded token ids and attention mask (int64, one row per text)."""

    texts: list[str]
    ids: np.ndarray
    mask: np.ndarray
    ends_chunk: bool = False
    """The last batch of its tokenizer call."""


class Forward(Protocol):
    """A model's forward pass in two steps: `launch` starts it (it may return before the result is ready), `fetch`
    answers the float32 vectors on the host."""

    def launch(self, batch: TokenBatch) -> Any: ...

    def fetch(self, handle: Any) -> np.ndarray: ...


def chunk_bounds(total: int, chunk: int, smallest: int) -> Iterator[tuple[int, int]]:
    """(start, end) of each tokenizer call over `total` texts: `chunk` at a time, the last ones halving down to
    `smallest`. What the encoder's end leaves to do (padding, copying and storing the last chunk, with nothing left
    to overlap) then starts from a small chunk, not a whole one (522 of 4,618 texts with chunks of 1,024). Texts
    that fit one call take one (the pipeline tokenizes those in its caller's thread: nothing to overlap)."""
    if total <= chunk:
        yield from [(0, total)] if total else []
        return
    start = 0
    while start < total:
        left = total - start
        size = min(left, chunk if left >= 2 * chunk else max(smallest, -(-left // 2)))
        yield start, start + size
        start += size


Spent = queue.SimpleQueue
"""Encodings handed back by `padded_batches` to be dropped in `tokenized_chunks`' thread, between encoder calls."""


def tokenized_chunks(texts: Sequence[str], tokenizer: BatchTokenizer, chunk: int, smallest: int,
                     spent: Spent[list[Any]] | None = None) -> Iterator[tuple[list[str], list[Any]]]:
    """(texts, their encodings) a chunk at a time (`chunk_bounds`): the Rust encoder's part of the work. The lists of
    encodings the consumer put in `spent` are emptied before each encoder call, while the encoder's threads are idle."""
    for start, end in chunk_bounds(len(texts), chunk, smallest):
        while spent is not None and not spent.empty():
            spent.get().clear()  # the encodings go here, whichever thread drops the emptied list
        part = list(texts[start:end])
        yield part, tokenizer.encodings(part)


def padded_batches(chunks: Iterable[tuple[list[str], list[Any]]], tokenizer: BatchTokenizer, batch_size: int,
                   spent: Spent[list[Any]] | None = None) -> Iterator[TokenBatch]:
    """Each chunk sorted by token count (longest first) and cut into padded batches of `batch_size`, so a batch
    pads little: the Python part of the work. A chunk's encodings then go to `spent` (`tokenized_chunks`)."""
    for part, encodings in chunks:
        lengths = np.fromiter(map(len, encodings), dtype=np.int64, count=len(encodings))
        order = np.argsort(-lengths, kind="stable").tolist()
        for first in range(0, len(order), batch_size):
            rows = order[first : first + batch_size]
            tokens, mask = tokenizer.arrays([encodings[i] for i in rows])
            yield TokenBatch([part[i] for i in rows], tokens, mask, ends_chunk=first + batch_size >= len(order))
        if spent is not None:
            spent.put(encodings)


def smallest_chunk(chunk: int, batch_size: int) -> int:
    """The last tokenizer calls' floor (`chunk_bounds`): a batch (the texts still to pad, copy and store when the
    encoder ends are then the last few calls', about three batches)."""
    return min(chunk, batch_size)


def token_batches(texts: Sequence[str], tokenizer: BatchTokenizer, batch_size: int,
                  chunk: int = TOKENIZE_CHUNK) -> Iterator[TokenBatch]:
    """`texts` as the pipeline batches them (`tokenized_chunks`, then `padded_batches`), in this thread."""
    chunks = tokenized_chunks(texts, tokenizer, chunk, smallest_chunk(chunk, batch_size))
    return padded_batches(chunks, tokenizer, batch_size)


_DONE = object()


def prefetched(items: Iterable[T], depth: int = PREFETCH, name: str = "ragjudge-tokenize") -> Iterator[T]:
    """`items`, produced in a background thread at most `depth` ahead; an error there is raised here, and a
    consumer that stops early (an exception, a closed generator) stops the thread."""
    box: queue.Queue[Any] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(item: Any) -> bool:
        while not stop.is_set():
            try:
                box.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in items:
                if not put(item):
                    return
        except BaseException as exc:  # handed to the consumer, raised there
            put((_DONE, exc))
            return
        finally:
            close = getattr(items, "close", None)
            if close is not None:  # a generator (maybe a prefetched one): its own threads stop now, not at GC
                close()
        put((_DONE, None))

    thread = threading.Thread(target=produce, name=name, daemon=True)
    thread.start()
    try:
        while True:
            item = box.get()
            if isinstance(item, tuple) and len(item) == 2 and item[0] is _DONE:
                if item[1] is not None:
                    raise item[1]
                return
            yield item
    finally:
        stop.set()
        thread.join()


def encoded_batches(batches: Iterable[TokenBatch], forward: Forward) -> Iterator[tuple[TokenBatch, np.ndarray]]:
    """(batch, vectors) per batch, in order; batch i+1 is launched before batch i's vectors are fetched."""
    pending: tuple[TokenBatch, Any] | None = None
    for batch in batches:
        handle = forward.launch(batch)
        if pending is not None:
            yield pending[0], forward.fetch(pending[1])
        pending = (batch, handle)
    if pending is not None:
        yield pending[0], forward.fetch(pending[1])


def run_pipeline(texts: Sequence[str], tokenizer: BatchTokenizer, forward: Forward, *, batch_size: int,
                 store_every: int, keep: Callable[[list[str], np.ndarray], None],
                 chunk: int = TOKENIZE_CHUNK, write_interval: float = WRITE_INTERVAL) -> None:
    """Encode `texts` through the pipeline, handing `keep` the vectors at least `store_every` texts at a time
    (a store write per batch would cost a transaction each), and no more often than `write_interval` seconds except
    at a tokenizer call's end (`WRITE_INTERVAL`). Texts that fit one tokenizer call (`chunk`, at least four
    batches) are tokenized here: with nothing to tokenize ahead, threads would only add their start-up (a judge
    encodes a few texts at a time)."""
    chunk = max(chunk, 4 * batch_size)
    if len(texts) <= chunk:
        ahead: Iterable[TokenBatch] = token_batches(texts, tokenizer, batch_size, chunk)
    else:
        # two chunks' batches ready: the tokenizer starts on the next chunk as soon as one is tokenized, instead of
        # waiting on a full queue while the model and the store drain it (a few MB of int64 ids at most); and the
        # Rust encoder works on the next chunk while this one is padded (two threads: padding holds the GIL, the
        # encoder does not)
        spent: Spent[list[Any]] = Spent()
        chunks = prefetched(tokenized_chunks(texts, tokenizer, chunk, smallest_chunk(chunk, batch_size), spent),
                            depth=1)
        ahead = prefetched(padded_batches(chunks, tokenizer, batch_size, spent),
                           depth=2 * -(-chunk // batch_size), name="ragjudge-pad")
    held: list[str] = []
    parts: list[np.ndarray] = []
    written = time.monotonic()
    for batch, vectors in encoded_batches(ahead, forward):
        held += batch.texts
        parts.append(vectors)
        if len(held) >= store_every and (batch.ends_chunk or time.monotonic() - written >= write_interval):
            keep(held, np.concatenate(parts))
            held, parts = [], []
            written = time.monotonic()
    if held:
        keep(held, np.concatenate(parts))

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

from ragjudge.embeddings.batch_tokenizer import BatchTokenizer, attention_mask

TOKENIZE_CHUNK = 1024
"""Texts per `encode_batch` call: enough to keep every core busy, little enough for the first batch to come soon."""
SORT_BATCHES = 16
"""Batches of texts sorted by token count together at most (`sort_window`), over several tokenizer calls where a
batch is large. Indexing `bench_embedding_store.py`'s 50,000 passages (given longest first by characters, an order
that follows token counts loosely), a GPU's batches of 512 cut from one call (of 2,048 texts) at a time were 8.7 %
padding tokens and 14.6 % padded attention work; from windows of up to 16 batches, 2.9 % and 4.7 % (the forward
pass's operations 6.3 % fewer). The CPU's batches of 32, 32 to a call, pad 1 % as before: a window is its one call."""
PREFETCH = 4
"""Items a `prefetched` stream holds ready by default: bounded, so memory does not grow with the corpus."""
WRITE_INTERVAL = 0.25
"""Seconds between store writes, at least, once `store_every` texts are held (and at a sorting window's end): where
encoding is fast (a GPU) a write takes many batches, so each transaction rewrites the store's index pages once for
many entries, not once per 128; the last tokenizer calls are small windows, so the last write stays small too."""

T = TypeVar("T")


@dataclass(frozen=True)
class TokenBatch:
    """Texts and their padded token ids and attention mask (int64, one row per text)."""

    texts: list[str]
    ids: np.ndarray
    mask: np.ndarray
    ends_window: bool = False
    """The last batch of its sorting window (its tokenizer call, or several: `padded_batches`)."""


class Forward(Protocol):
    """A model's forward pass in two steps: `launch` starts it (it may return before the result is ready), `fetch`
    answers the float32 vectors on the host."""

    def launch(self, batch: TokenBatch) -> Any: ...

    def fetch(self, handle: Any) -> np.ndarray: ...


def chunk_bounds(total: int, chunk: int, smallest: int) -> Iterator[tuple[int, int]]:
    """(start, end) of each tokenizer call over `total` texts: the first a quarter of `chunk` or `smallest` (a batch),
    whichever is more, each next one twice the last up to `chunk`, the last ones halving down to `smallest`. The
    first batch then goes to the model soon: indexing hands texts over longest first, and those tokenize at a third of
    the average rate (on 2 cores the longest 2,048 of 20,000 MTRAG-length passages took 0.55 s, 512 of them 0.17 s:
    with a device twice as fast as that host, idle 0.58 s before its first batch and 93 % of its rate over the run,
    0.18-0.33 s and 96-97 % so; starting from a CPU's batch of 32 instead of a quarter, the calls' gaps cost the host
    side 2 points). What the encoder's end leaves to do (padding, copying and storing the last chunk, with nothing
    left to overlap) likewise starts from a small chunk, not a whole one. Texts that fit one call take one (the
    pipeline tokenizes those in its caller's thread: nothing to overlap)."""
    if total <= chunk:
        yield from [(0, total)] if total else []
        return
    start, growing = 0, max(smallest, chunk // 4)
    while start < total:
        left = total - start
        ending = chunk if left >= 2 * chunk else max(smallest, -(-left // 2))
        size = min(left, growing, ending)
        yield start, start + size
        start += size
        growing = min(chunk, 2 * growing)


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
                   spent: Spent[list[Any]] | None = None, window: int = 0) -> Iterator[TokenBatch]:
    """The texts sorted by token count (longest first) a window at a time and cut into padded batches of
    `batch_size`, so a batch pads little: the Python part of the work. A window is whole tokenizer calls: the first
    call alone (the first batch comes as soon as it can), then twice the last window's texts, up to `window`
    (`sort_window`; 0: each call alone); a call smaller than the one before it (the last, halving calls: little is
    to be left when the encoder ends) closes its window. Each call's ids are read into an array at once, and its
    encodings then go to `spent` (`tokenized_chunks`)."""
    held: list[tuple[list[str], np.ndarray, np.ndarray]] = []
    count = target = last = 0
    for part, encodings in chunks:
        ids, lengths = tokenizer.padded_ids(encodings)
        if spent is not None:
            spent.put(encodings)
        held.append((part, ids, lengths))
        count += len(part)
        if count >= target or len(part) < last:
            yield from window_batches(held, tokenizer.pad_id, batch_size)
            held, target = [], min(window, 2 * count)
            count = 0
        last = len(part)
    if held:
        yield from window_batches(held, tokenizer.pad_id, batch_size)


def window_batches(calls: list[tuple[list[str], np.ndarray, np.ndarray]], pad_id: int,
                   batch_size: int) -> Iterator[TokenBatch]:
    """The padded batches of one window of tokenizer calls, each call as (texts, padded ids, lengths): sorted
    together by length, longest first."""
    if len(calls) == 1:
        [(texts, ids, lengths)] = calls
    else:
        texts = [text for part, _, _ in calls for text in part]
        lengths = np.concatenate([part_lengths for _, _, part_lengths in calls])
        ids = np.full((len(texts), max(part_ids.shape[1] for _, part_ids, _ in calls)), pad_id, dtype=np.int64)
        row = 0
        for _, part_ids, _ in calls:
            ids[row : row + len(part_ids), : part_ids.shape[1]] = part_ids
            row += len(part_ids)
    order = np.argsort(-lengths, kind="stable")
    for first in range(0, len(order), batch_size):
        rows = order[first : first + batch_size]
        size = lengths[rows]
        width = int(size[0]) if len(size) else 0  # the longest: sorted
        yield TokenBatch([texts[i] for i in rows.tolist()], ids[rows, :width], attention_mask(size, width),
                         ends_window=first + batch_size >= len(order))


def sort_window(chunk: int, batch_size: int) -> int:
    """Texts sorted together at most (`padded_batches`): whole tokenizer calls, up to `SORT_BATCHES` batches."""
    return max(chunk, SORT_BATCHES * batch_size)


def smallest_chunk(chunk: int, batch_size: int) -> int:
    """The first tokenizer call's floor, and the last calls' (`chunk_bounds`): a batch (the model starts once a batch
    is tokenized, and the texts still to pad, copy and store when the encoder ends are the last few calls', about
    three batches)."""
    return min(chunk, batch_size)


def token_batches(texts: Sequence[str], tokenizer: BatchTokenizer, batch_size: int,
                  chunk: int = TOKENIZE_CHUNK) -> Iterator[TokenBatch]:
    """`texts` as the pipeline batches them (`tokenized_chunks`, then `padded_batches`), in this thread."""
    chunks = tokenized_chunks(texts, tokenizer, chunk, smallest_chunk(chunk, batch_size))
    return padded_batches(chunks, tokenizer, batch_size, window=sort_window(chunk, batch_size))


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
    at a sorting window's end (`WRITE_INTERVAL`). Texts that fit one tokenizer call (`chunk`, at least four
    batches) are tokenized here: with nothing to tokenize ahead, threads would only add their start-up (a judge
    encodes a few texts at a time)."""
    chunk = max(chunk, 4 * batch_size)
    if len(texts) <= chunk:
        ahead: Iterable[TokenBatch] = token_batches(texts, tokenizer, batch_size, chunk)
    else:
        # two windows' batches ready: the tokenizer starts on the next chunk as soon as one is tokenized, instead of
        # waiting on a full queue while the model and the store drain it (int64 ids and masks: at a GPU's batch of
        # 512, 64 MB at most; at the CPU's 32, 8 MB); and the Rust encoder works on the next chunk while this one is
        # padded (two threads: padding holds the GIL, the encoder does not)
        spent: Spent[list[Any]] = Spent()
        chunks = prefetched(tokenized_chunks(texts, tokenizer, chunk, smallest_chunk(chunk, batch_size), spent),
                            depth=1)
        window = sort_window(chunk, batch_size)
        ahead = prefetched(padded_batches(chunks, tokenizer, batch_size, spent, window),
                           depth=2 * -(-window // batch_size), name="ragjudge-pad")
    held: list[str] = []
    parts: list[np.ndarray] = []
    written = time.monotonic()
    for batch, vectors in encoded_batches(ahead, forward):
        held += batch.texts
        parts.append(vectors)
        if len(held) >= store_every and (batch.ends_window or time.monotonic() - written >= write_interval):
            keep(held, np.concatenate(parts))
            held, parts = [], []
            written = time.monotonic()
    if held:
        keep(held, np.concatenate(parts))

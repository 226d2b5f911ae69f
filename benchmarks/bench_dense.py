"""Dense indexing against its limit: PyTorch, ONNX Runtime fp32 and int8 in one run, each beside the model's forward
pass alone on the same batches, with the same top-10 (fp32) and nDCG@10 on real MTRAG qrels; first the host side
alone, on the same texts: the `tokenizers` batch encoder's own rate (the model's tokenizer as the library runs it),
ragjudge's tokenizing alone (`BatchTokenizer.encodings`: BERT's normalizer done in Python for ASCII texts, the same
ids) and the indexing pipeline's rate with the forward pass replaced (tokenize, batch, copy, store), which is what
feeds a GPU, at the CPU's batch (32) and a GPU's (512), each with the CPU it used (every thread: on a machine whose
cores the encoder fills, the rate's share is their ratio, whatever else loads it) and the pipeline's own work stage
by stage (CPU per text in one thread: batching and padding, the copy, the store); then the whole pipeline at a GPU's
batch feeding a simulated device (a thread that sleeps per padded token, as a GPU computes without the host's cores)
at half the encoder's rate: the share of the device's rate the index reaches, and how long the device waits for its
first batch; and the encoder on long documents (FiQA's passages joined), whole and cut at a space as the pipeline
hands them.

    python benchmarks/bench_dense.py [--domain clapnq] [--passages 0] [--floor-passages 1000] [--queries 0]
                                     [--backends torch,onnx,int8] [--batch-size 32] [--model minilm]
                                     [--host-rounds 5]

Passages: a domain's pooled MTRAG corpus from ../shared/data/mtrag (real 512-token passages; --passages 0 = all of
it, 4,619 for clapnq, 5,083 for fiqa), --corpus for another BEIR corpus (MTRAG's cloud domain where you have it).
Queries: the domain's last turns with their qrels. Each backend indexes the same passages in an embedding store of
its own (nothing read back), model load and ONNX export timed apart. The floor is the transformer's forward pass
alone (no tokenising, pooling or storing) on about --floor-passages of the passages: every k-th of the batches
indexing runs (the pipeline's own, length-sorted), so their lengths and padding are the whole index's. "x the floor"
says how close the whole indexing is to what no pipeline around the model can beat; "x the slower of tokenizing and
the forward pass" whether tokenizing overlaps the model (1.0) or adds to it (their sum).
Needs onnxruntime for the onnx and int8 rows (`pip install 'ragjudge[onnx]'`).
"""

from __future__ import annotations

import argparse
import os
import queue
import resource
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any

import numpy as np

from ragjudge.embeddings.batch_tokenizer import BatchTokenizer, space_cut
from ragjudge.embeddings.device import available_cores
from ragjudge.embeddings.pipeline import (TOKENIZE_CHUNK, TokenBatch, padded_batches, run_pipeline, smallest_chunk,
                                          sort_window, token_batches, tokenized_chunks)
from ragjudge.embeddings.scope import embedding_store_scope
from ragjudge.embeddings.torch_pooling import host_copy
from ragjudge.formats.beir import read_corpus, read_qrels, read_queries
from ragjudge.metrics.ranking import ndcg_at
from ragjudge.models import Passage
from ragjudge.retrieval.base import index_text
from ragjudge.retrieval.dense import DenseRetriever
from ragjudge.retrieval.encoders import CPU_BATCH_SIZE, GPU_BATCH_SIZE, SentenceTransformerEncoder

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data" / "mtrag"
ROWS = {"torch": {"backend": "torch"}, "onnx": {"backend": "onnx"}, "int8": {"backend": "onnx", "precision": "int8"}}


def peak_rss_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def index_texts(retriever: DenseRetriever, passages: list[Passage]) -> list[str]:
    """The distinct texts indexing encodes, in the order the encoder takes them (longest first)."""
    return sorted({retriever.options.passage_prefix + index_text(p, retriever.options.title) for p in passages},
                  key=len, reverse=True)


def pipeline_batches(retriever: DenseRetriever, texts: list[str]) -> list[TokenBatch]:
    """The padded batches indexing runs, as the pipeline makes them (its tokenizer, chunks and batch size)."""
    encoder = retriever.encoder
    tokenizer = encoder.batch_tokenizer()  # type: ignore[union-attr]
    chunk = max(TOKENIZE_CHUNK, 4 * encoder.batch_size)  # type: ignore[union-attr]
    return list(token_batches(texts, tokenizer, encoder.batch_size, chunk))  # type: ignore[union-attr]


def padding(batches: list[TokenBatch]) -> tuple[float, float]:
    """(padding's share of the tokens, of the attention work) in `batches`: what a forward pass computes for nothing
    (attention's work grows with the square of a batch's width, the rest with its width)."""
    lengths = [b.mask.sum(axis=1) for b in batches]
    tokens = 1 - sum(int(n.sum()) for n in lengths) / sum(b.ids.size for b in batches)
    attention = 1 - sum(int((n * n).sum()) for n in lengths) / sum(b.ids.shape[0] * b.ids.shape[1] ** 2
                                                                   for b in batches)
    return tokens, attention


def per_call_batches(retriever: DenseRetriever, texts: list[str]) -> list[TokenBatch]:
    """`pipeline_batches` as the pipeline made them before its sorting windows: each tokenizer call sorted alone."""
    encoder = retriever.encoder
    tokenizer = encoder.batch_tokenizer()  # type: ignore[union-attr]
    size = encoder.batch_size  # type: ignore[union-attr]
    chunk = max(TOKENIZE_CHUNK, 4 * size)
    return list(padded_batches(tokenized_chunks(texts, tokenizer, chunk, smallest_chunk(chunk, size)), tokenizer,
                               size))


def floor_batches(batches: list[TokenBatch], n: int) -> list[TokenBatch]:
    """Every k-th batch up to about `n` texts (0: all), so their lengths and padding are the whole index's."""
    texts = sum(len(b.texts) for b in batches)
    return batches[:: max(1, texts // n)] if n else batches


def forward_flops(retriever: DenseRetriever, batches: list[TokenBatch]) -> float:
    """Floating-point operations of the transformer's forward pass over `batches` as padded (multiply-add = 2): per
    layer 2n(4h^2 + 2hi) for the projections and feed-forward, 4n^2 h for attention; embeddings and norms left out."""
    from ragjudge.embeddings.model_files import model_files
    from ragjudge.embeddings.onnx_export import model_config

    config = model_config(model_files(retriever.encoder._path))  # type: ignore[arg-type,union-attr]
    h, i, layers = config["hidden_size"], config["intermediate_size"], config["num_hidden_layers"]
    total = 0.0
    for batch in batches:
        rows, n = batch.ids.shape
        total += rows * layers * (2 * n * (4 * h * h + 2 * h * i) + 4 * n * n * h)
    return total


def forward_seconds(retriever: DenseRetriever, batches: list[TokenBatch]) -> float:
    """The model's forward pass and pooling alone over `batches`, tokenised beforehand; nothing else timed."""
    forward = retriever.encoder.forward_pass()  # type: ignore[union-attr]
    forward.fetch(forward.launch(batches[0]))  # warm-up: first-call allocations are not the model's pace
    started = time.perf_counter()
    for batch in batches:
        forward.fetch(forward.launch(batch))
    return time.perf_counter() - started


def minilm_tokenizer() -> tuple[SentenceTransformerEncoder, BatchTokenizer]:
    """The bundled MiniLM (on the CPU, not loaded) and the `tokenizers` batch encoder its pipeline feeds it with."""
    encoder = SentenceTransformerEncoder("minilm", device="cpu", backend="torch")
    tokenizer = encoder.batch_tokenizer()
    assert tokenizer is not None
    return encoder, tokenizer


class HostOnly:
    """The pipeline's forward pass replaced: the batch copied as the model's input would be, zero vectors out."""

    def __init__(self, dimension: int):
        self.dimension = dimension

    def launch(self, batch: TokenBatch) -> np.ndarray:
        _ = host_copy(batch.ids, pinned=False), host_copy(batch.mask, pinned=False)  # as a GPU's launch, unpinned
        return np.zeros((len(batch.texts), self.dimension), dtype=np.float32)

    def fetch(self, handle: np.ndarray) -> np.ndarray:
        return handle


class SimulatedDevice:
    """What a GPU is to the host, without one: `launch` hands the batch to a device thread and returns at once; the
    thread spends `per_token` seconds on each of the batch's padded tokens, asleep (no core, no GIL); `fetch` waits for
    the batch. How well the pipeline keeps a device busy is then measurable on any machine."""

    def __init__(self, per_token: float, dimension: int):
        self.per_token, self.dimension = per_token, dimension
        self.busy = 0.0
        self.first: float | None = None
        self._work: queue.SimpleQueue[tuple[TokenBatch, threading.Event] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while (item := self._work.get()) is not None:
            batch, done = item
            started = time.perf_counter()
            self.first = self.first or started
            time.sleep(batch.ids.size * self.per_token)
            self.busy += time.perf_counter() - started
            done.set()

    def launch(self, batch: TokenBatch) -> tuple[int, threading.Event]:
        _ = host_copy(batch.ids, pinned=False), host_copy(batch.mask, pinned=False)
        done = threading.Event()
        self._work.put((batch, done))
        return len(batch.texts), done

    def fetch(self, handle: tuple[int, threading.Event]) -> np.ndarray:
        rows, done = handle
        done.wait()
        return np.zeros((rows, self.dimension), dtype=np.float32)

    def close(self) -> None:
        self._work.put(None)
        self._thread.join()


@dataclass
class DeviceFed:
    """The pipeline feeding a `SimulatedDevice`: the index's rate as a share of the device's own, and how long the
    device waited for its first batch."""

    rate: float
    share: float
    first_batch: float


def device_fed(texts: list[str], cache: str, rate: float, rounds: int = 3) -> DeviceFed:
    """The whole pipeline (tokenize, batch, copy, store into a fresh store) at a GPU's batch size feeding a simulated
    device that computes `rate` texts/s over these texts' batches: the best of `rounds`."""
    from ragjudge.embeddings.encoding import StoredEncoding

    encoder, tokenizer = minilm_tokenizer()
    padded = sum(b.ids.size for b in token_batches(texts, tokenizer, GPU_BATCH_SIZE,
                                                    max(TOKENIZE_CHUNK, 4 * GPU_BATCH_SIZE)))
    per_token = len(texts) / rate / padded
    best: DeviceFed | None = None
    for round_ in range(rounds):
        with embedding_store_scope(f"{cache}/device-{round_}"):
            device = SimulatedDevice(per_token, 384)
            started = time.perf_counter()
            work = StoredEncoding(texts, encoder.space())
            run_pipeline(work.missing, tokenizer, device, batch_size=GPU_BATCH_SIZE, store_every=encoder.chunk,
                         keep=work.add)
            seconds = time.perf_counter() - started
            device.close()
            run = DeviceFed(len(texts) / seconds, len(texts) / seconds / rate, (device.first or started) - started)
            best = run if best is None or run.rate > best.rate else best
    assert best is not None
    return best


def process_cpu() -> float:
    """CPU seconds this process has used, every thread (the tokenizers encoder's own included)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


HOST_BATCHES = {CPU_BATCH_SIZE: "the CPU's batch", GPU_BATCH_SIZE: "a GPU's batch"}
"""Batch sizes the host side runs at: `SentenceTransformerEncoder.batch_size`'s defaults on each kind of device."""


@dataclass
class PipelineFigures:
    """The pipeline's figures at one batch size (rate in texts/s, CPU in seconds per text)."""

    rate: float
    cpu: float
    stages: dict[str, float]
    writes: int


@dataclass
class HostSide:
    """The host side's figures on one set of texts: the encoder's own, and the pipeline's per batch size."""

    encoder_rate: float
    encoder_cpu: float
    tokenizing_rate: float
    """ragjudge's tokenizing alone (`BatchTokenizer.encodings`: the ASCII texts normalized in Python, the library's
    encoder without its normalizer on them): what the pipeline calls, its overhead measured against this."""
    pipelines: dict[int, PipelineFigures]


def host_side(texts: list[str], cache: str, rounds: int = 5) -> HostSide:
    """The `tokenizers` batch encoder's own rate, and ragjudge's tokenizing alone, against the indexing pipeline's with
    the forward pass replaced (tokenize, batch, copy, store into a fresh embedding store) at each of `HOST_BATCHES`, on
    the same texts, each the best of `rounds` alternating runs (a loaded machine's noise falls on all alike); with each
    run's CPU (every thread: on a machine whose cores the encoder fills, the pipeline's rate is the encoder's CPU over
    its own, whatever the load) and, one stage at a time in this thread, the CPU of each part of the pipeline's own
    work."""
    from ragjudge.embeddings.encoding import StoredEncoding
    from ragjudge.embeddings.model_files import model_files
    from ragjudge.embeddings.onnx_export import model_config

    encoder, tokenizer = minilm_tokenizer()
    host = HostOnly(int(model_config(model_files(encoder._path))["hidden_size"]))  # no model loaded: none runs
    chunk = TOKENIZE_CHUNK  # the encoder alone: the pipeline's calls (larger at a batch over a quarter of them)
    stripped = [as_encoded(tokenizer, t) for t in texts]  # what the pipeline hands the encoder
    tokenizer.encode_batch(stripped[:64])  # warm-up
    alone: list[tuple[float, float]] = []
    tokenizing: list[float] = []
    runs: dict[int, list[tuple[float, float]]] = {size: [] for size in HOST_BATCHES}
    written: dict[int, list[int]] = {}  # each store write's texts, in the last round's run
    for round_ in range(rounds):
        started, cpu = time.perf_counter(), process_cpu()
        for start in range(0, len(texts), chunk):
            tokenizer.encode_batch(stripped[start : start + chunk])
        alone.append((time.perf_counter() - started, process_cpu() - cpu))
        started = time.perf_counter()
        for start in range(0, len(texts), chunk):
            tokenizer.encodings(texts[start : start + chunk])
        tokenizing.append(time.perf_counter() - started)
        for size in HOST_BATCHES:
            with embedding_store_scope(f"{cache}/{round_}-{size}"):
                started, cpu = time.perf_counter(), process_cpu()
                work = StoredEncoding(texts, encoder.space())
                written[size] = []

                def keep(batch: list[str], vectors: np.ndarray, sizes: list[int] = written[size]) -> None:
                    sizes.append(len(batch))
                    work.add(batch, vectors)

                run_pipeline(work.missing, tokenizer, host, batch_size=size, store_every=encoder.chunk, keep=keep)
                runs[size].append((time.perf_counter() - started, process_cpu() - cpu))
    n = len(texts)
    pipelines: dict[int, PipelineFigures] = {}
    for size, timings in runs.items():
        calls = max(TOKENIZE_CHUNK, 4 * size)  # as `run_pipeline` chooses them
        chunks = list(tokenized_chunks(texts, tokenizer, calls, smallest_chunk(calls, size)))
        stages: dict[str, float] = {}

        def stage(name: str, run: Any) -> Any:
            started = time.thread_time()
            out = run()
            stages[name] = (time.thread_time() - started) / n
            return out

        window = sort_window(calls, size)
        batches = stage("sort, batch, pad", lambda: list(padded_batches(chunks, tokenizer, size, window=window)))
        vectors = stage("copy", lambda: [host.fetch(host.launch(b)) for b in batches])
        with embedding_store_scope(f"{cache}/stages-{size}"):
            work = stage("open the store, look up", lambda: StoredEncoding(texts, encoder.space()))
            ordered, matrix = sum((b.texts for b in batches), []), np.concatenate(vectors)
            ends = np.cumsum(written[size]).tolist()  # the writes the timed runs made, of the same sizes
            writes = [(ordered[i:j], matrix[i:j]) for i, j in zip([0, *ends[:-1]], ends)]
            stage("store", lambda: [work.add(*write) for write in writes])
        pipelines[size] = PipelineFigures(n / min(w for w, _ in timings), min(c for _, c in timings) / n, stages,
                                          len(written[size]))
    return HostSide(n / min(w for w, _ in alone), min(c for _, c in alone) / n, n / min(tokenizing), pipelines)


def as_encoded(tokenizer: BatchTokenizer, text: str) -> str:
    """`text` as the pipeline hands it to the encoder: stripped, and cut at a space past `cut_at` characters."""
    return space_cut(text.strip(), tokenizer.cut_at) if tokenizer.cut_at else text.strip()


@dataclass
class LongDocuments:
    """The encoder on long documents, whole and as the pipeline cuts them (`BatchTokenizer.encodings`)."""

    count: int
    chars: float
    cut_at: int
    whole_rate: float
    cut_rate: float
    same_ids: int


def long_documents(pool: Path, size: int = 10_000, rounds: int = 3) -> LongDocuments:
    """A pool's passages joined in file order into documents of about `size` characters (real text at a long
    document's length, where truncation keeps the first 256 tokens of about 2,500), tokenized whole and as the pipeline
    cuts them: each the best of `rounds`, with the texts cut beforehand (the cut's own cost is in the pipeline's)."""
    _, tokenizer = minilm_tokenizer()
    documents: list[str] = []
    held: list[str] = []
    for passage in read_corpus(pool):
        held.append(passage.text.strip())
        if sum(map(len, held)) >= size:
            documents.append("\n".join(held))
            held = []
    cut = [as_encoded(tokenizer, text) for text in documents]

    def rate(given: list[str]) -> float:
        best = float("inf")
        for _ in range(rounds):
            started = time.perf_counter()
            tokenizer.encode_batch(given)
            best = min(best, time.perf_counter() - started)
        return len(given) / best

    same = sum(a.ids == b.ids for a, b in zip(tokenizer.encode_batch(documents), tokenizer.encodings(documents),
                                               strict=True))
    return LongDocuments(len(documents), float(np.mean([len(d) for d in documents])), tokenizer.cut_at or 0,
                         rate(documents), rate(cut), same)


def load_average() -> str:
    return f"{os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else "unknown"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domain", default="clapnq", choices=["clapnq", "fiqa", "cloud", "govt"])
    parser.add_argument("--corpus", type=Path, help="a BEIR corpus (default: the domain's shared pool)")
    parser.add_argument("--passages", type=int, default=0, help="first N passages (0: all)")
    parser.add_argument("--floor-passages", type=int, default=1000, help="passages the floor is timed on (0: all)")
    parser.add_argument("--queries", type=int, default=0, help="first N queries (0: all)")
    parser.add_argument("--backends", default="torch,onnx,int8", help="'' for the host side alone")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--model", default="minilm")
    parser.add_argument("--host-rounds", type=int, default=5, help="alternating rounds of the host-side figures")
    args = parser.parse_args()
    if args.host_rounds < 1:
        parser.error(f"--host-rounds must be at least 1, not {args.host_rounds}")
    backends = [b for b in args.backends.split(",") if b]
    if set(backends) - ROWS.keys():
        parser.error(f"--backends: unknown {', '.join(sorted(set(backends) - ROWS.keys()))} (known: {', '.join(ROWS)})")
    corpus = args.corpus or SHARED / "corpus" / f"{args.domain}_pool.jsonl"
    queries_file = SHARED / "retrieval" / args.domain / "lastturn.jsonl"
    if not corpus.exists() or not queries_file.exists():
        print(f"needs {corpus} and {queries_file} (the shared MTRAG data; --corpus for the {args.domain} corpus)",
              file=sys.stderr)
        return 2
    passages = list(islice(read_corpus(corpus), args.passages or None))
    queries = read_queries(queries_file)[: args.queries or None]
    qrels = read_qrels(SHARED / "retrieval" / args.domain / "qrels.tsv")
    words = np.mean([len(p.text.split()) for p in passages])
    print(f"{len(passages):,} {args.domain} passages ({words:.0f} words on average), {len(queries)} last-turn queries, "
          f"batch {args.batch_size}; floor on {args.floor_passages or 'all'} of them, lengths as the whole")
    with tempfile.TemporaryDirectory() as cache:
        probe = DenseRetriever({"model": args.model, "batch_size": args.batch_size, "device": "cpu"})
        texts = index_texts(probe, passages)
        load = load_average()
        host = host_side(texts, cache, args.host_rounds)
        fed = device_fed(texts, cache, host.encoder_rate / 2)
    tokenize_rate = host.encoder_rate
    print(f"host side, {len(texts):,} distinct texts, {available_cores()} cores, load average {load} -> "
          f"{load_average()}: tokenizers batch encoder alone (on the texts as the pipeline hands them) "
          f"{tokenize_rate:,.0f}/s, CPU {host.encoder_cpu * 1e6:.0f} "
          f"us a text (every thread); ragjudge's tokenizing alone (ASCII texts normalized in Python, the same ids) "
          f"{host.tokenizing_rate:,.0f}/s ({host.tokenizing_rate / tokenize_rate:.2f}x); the indexing pipeline with "
          f"the forward pass replaced (tokenize, batch, copy, store):", flush=True)
    for size, figures in host.pipelines.items():
        print(f"  batch {size} ({HOST_BATCHES[size]}): {figures.rate:,.0f}/s = {figures.rate / tokenize_rate:.0%} of the "
              f"encoder's rate (target >= 90%), {figures.rate / host.tokenizing_rate:.0%} of ragjudge's tokenizing "
              f"alone; CPU {figures.cpu * 1e6:.0f} us a text (the encoder's "
              f"{host.encoder_cpu / figures.cpu:.0%} of it: the rate's share where the encoder fills every core); "
              f"{figures.writes} store writes; its own work, one thread: "
              + ", ".join(f"{name} {seconds * 1e6:.1f} us" for name, seconds in figures.stages.items()), flush=True)
    print(f"  feeding a simulated device (batch {GPU_BATCH_SIZE}; it computes {tokenize_rate / 2:,.0f}/s, half the "
          f"encoder's rate: a GPU's pace against its host's): the index at {fed.rate:,.0f}/s = {fed.share:.0%} of the "
          f"device's rate; its first batch after {fed.first_batch:.2f} s (the longest texts come first)", flush=True)
    if (pool := SHARED / "corpus" / "fiqa_pool.jsonl").exists():
        long = long_documents(pool)
        print(f"  long documents (FiQA's pool joined into {long.count} of {long.chars:,.0f} characters on average): "
              f"the encoder on them whole {long.whole_rate:,.0f}/s, cut at a space past {long.cut_at:,} characters as "
              f"the pipeline hands them {long.cut_rate:,.0f}/s ({long.cut_rate / long.whole_rate:.1f}x); the same ids "
              f"for {long.same_ids}/{long.count}", flush=True)
    rates: dict[str, float] = {}
    tops: dict[str, list[list[str]]] = {}
    for name in backends:
        with tempfile.TemporaryDirectory() as cache, embedding_store_scope(cache):
            retriever = DenseRetriever({"model": args.model, "batch_size": args.batch_size, "device": "cpu",
                                        **ROWS[name]})
            started = time.perf_counter()
            _ = retriever.encoder._load_onnx() if retriever.encoder.backend == "onnx" else retriever.encoder._load()  # type: ignore[union-attr]
            load = time.perf_counter() - started
            started = time.perf_counter()
            retriever.index(passages)
            seconds = time.perf_counter() - started
            rates[name] = len(texts) / seconds
            batches = floor_batches(pipeline_batches(retriever, texts), args.floor_passages)
            floor = forward_seconds(retriever, batches)
            floor_rate = sum(len(b.texts) for b in batches) / floor
            slower = max(len(texts) / tokenize_rate, len(texts) / floor_rate)
            gflops = forward_flops(retriever, batches) / floor / 1e9
            tops[name] = [[p.document_id for p in hits] for hits in retriever.search_many([q.text for q in queries],
                                                                                           k=10)]
            ndcg = np.mean([ndcg_at(top, qrels.get(q.id, {}), 10) for q, top in zip(queries, tops[name], strict=True)])
            print(f"  {name:5}: {rates[name]:6.1f} texts/s ({seconds:.1f} s; load{' and export' if name != 'torch' else ''}"
                  f" {load:.1f} s) | forward pass alone {floor_rate:6.1f}/s ({gflops:.0f} GFLOP/s) -> whole indexing "
                  f"{floor_rate / rates[name]:.2f}x the floor, {seconds / slower:.2f}x the slower of tokenizing and the "
                  f"forward pass (target <= 1.1) | "
                  f"nDCG@10 {ndcg:.4f} | peak RSS {peak_rss_mb():.0f} MB", flush=True)
    if "torch" in rates:
        for name in rates.keys() - {"torch"}:
            same = sum(a == b for a, b in zip(tops["torch"], tops[name], strict=True))
            overlap = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(tops["torch"], tops[name], strict=True)])
            print(f"{name} vs torch: {rates[name] / rates['torch']:.2f}x passages/s; identical top-10 for "
                  f"{same}/{len(queries)} queries; top-10 overlap {overlap:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

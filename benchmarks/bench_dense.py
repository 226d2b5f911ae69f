"""Dense retrieval throughput and memory: encoding passages (passages/s), searching, peak memory.

    python benchmarks/bench_dense.py [--passages 2000] [--queries 1000] [--model minilm] [--batch-size 32]

Passages are the first N of the shared MTRAG clapnq pool when `../shared/data/mtrag` is present (real
512-token passages), else the bundled mini corpus repeated. Peak memory is reported two ways: the
process's peak resident set (resource.getrusage: model weights, torch buffers, everything) and the peak
of Python-level allocations during indexing (tracemalloc: the passage store and the embedding matrix;
torch's own buffers are not seen by tracemalloc).
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
import tracemalloc
from itertools import cycle, islice
from pathlib import Path

import numpy as np

from ragjudge.formats.beir import read_corpus, read_queries
from ragjudge.models import Passage
from ragjudge.retrieval.dense import DenseRetriever

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data" / "mtrag"


def peak_rss_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def load_texts(n_passages: int, n_queries: int) -> tuple[list[Passage], list[str], str]:
    pool = SHARED / "corpus" / "clapnq_pool.jsonl"
    if pool.exists():
        passages = list(islice(read_corpus(pool), n_passages))
        queries = [q.text for q in read_queries(SHARED / "retrieval" / "clapnq" / "lastturn.jsonl")]
        source = "MTRAG clapnq pool"
    else:
        passages = list(read_corpus(REPO / "examples" / "mini" / "corpus.jsonl"))
        queries = [p.title or p.text[:60] for p in passages]
        source = "mini corpus (repeated)"
    if len(passages) < n_passages:
        passages = [p.model_copy(update={"document_id": f"{p.document_id}#{i}"})
                    for i, p in enumerate(islice(cycle(passages), n_passages))]
    return passages, list(islice(cycle(queries), n_queries)), source


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--model", default="minilm")
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()

    import torch

    passages, queries, source = load_texts(args.passages, args.queries)
    words = np.mean([len(p.text.split()) for p in passages])
    print(f"{len(passages):,} passages from the {source} ({words:.0f} words on average), {len(queries):,} queries; "
          f"torch threads: {torch.get_num_threads()}")
    rss_start = peak_rss_mb()
    retriever = DenseRetriever({"model": args.model, "batch_size": args.batch_size})
    started = time.perf_counter()
    dim = retriever.encoder.dimension  # loads the model
    load_s = time.perf_counter() - started
    rss_model = peak_rss_mb()
    print(f"model {retriever.encoder.model_name} ({dim} dimensions, max {retriever.encoder._load().max_seq_length} "
          f"tokens) loaded in {load_s:.1f}s; peak RSS {rss_start:.0f} -> {rss_model:.0f} MB")

    tracemalloc.start()
    started = time.perf_counter()
    retriever.index(passages)
    index_s = time.perf_counter() - started
    _, traced_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"encode passages : {len(passages) / index_s:7.1f} passages/s ({index_s:.1f}s for {len(passages):,}, "
          f"batch {args.batch_size})")
    print(f"peak memory     : process RSS {peak_rss_mb():.0f} MB; Python allocations during indexing "
          f"{traced_peak / 2**20:.1f} MB (matrix {retriever.matrix.nbytes / 2**20:.1f} MB)")

    started = time.perf_counter()
    retriever.search_many(queries, k=10)
    search_s = time.perf_counter() - started
    print(f"search          : {len(queries) / search_s:7.1f} queries/s ({search_s:.1f}s for {len(queries):,}: "
          f"encode + exact top-10 over {len(passages):,})")


if __name__ == "__main__":
    main()

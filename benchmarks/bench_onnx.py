"""The sentence encoder on ONNX Runtime against PyTorch, in one process: passages/s and the same top-10.

    python benchmarks/bench_onnx.py [--passages 2000] [--queries 50] [--batch-size 32] [--rounds 1]

Needs onnxruntime (`pip install 'ragjudge[onnx]'`). Passages are the first N of the shared MTRAG clapnq pool
(`../shared/data/mtrag`, real 512-token passages); queries its last turns. Each backend indexes the same passages
with a model already loaded (the ONNX export and model loads are timed apart), each in an embedding store of its
own so nothing is read back; rounds alternate the backends, so a machine's load falls on both alike. Then both
answer the same queries: the top-10 documents must be the same, in the same order.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from itertools import islice
from pathlib import Path

import numpy as np

from ragjudge.embeddings.scope import embedding_store_scope
from ragjudge.formats.beir import read_corpus, read_queries
from ragjudge.retrieval.dense import DenseRetriever

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "mtrag"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    pool = SHARED / "corpus" / "clapnq_pool.jsonl"
    if not pool.exists():
        print(f"needs the shared MTRAG data: {pool} is missing", file=sys.stderr)
        return 2
    passages = list(islice(read_corpus(pool), args.passages))
    queries = [q.text for q in islice(read_queries(SHARED / "retrieval" / "clapnq" / "lastturn.jsonl"), args.queries)]
    print(f"{len(passages)} clapnq passages, {len(queries)} queries, batch size {args.batch_size}, "
          f"{args.rounds} round(s)")
    rates: dict[str, list[float]] = {"torch": [], "onnx": []}
    results: dict[str, list[list[str]]] = {}
    matrices: dict[str, np.ndarray] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(args.rounds):
            for backend in ("torch", "onnx") if round_ % 2 == 0 else ("onnx", "torch"):
                with embedding_store_scope(Path(tmp) / f"{backend}-{round_}"):
                    retriever = DenseRetriever({"model": "minilm", "backend": backend, "device": "cpu",
                                                "batch_size": args.batch_size})
                    started = time.perf_counter()
                    retriever.encoder.encode(["a text to load the model with"])  # ONNX: exported here, once
                    load = time.perf_counter() - started
                    started = time.perf_counter()
                    retriever.index(passages)
                    seconds = time.perf_counter() - started
                    rates[backend].append(len(passages) / seconds)
                    print(f"  {backend:5}: {len(passages) / seconds:6.1f} passages/s ({seconds:.1f} s; model load"
                          f"{' and export' if backend == 'onnx' and round_ == 0 else ''} {load:.1f} s)")
                    assert retriever.encoder.backend == backend  # type: ignore[union-attr]
                    matrices[backend] = np.asarray(retriever.matrix)
                    results[backend] = [[p.document_id for p in hits] for hits in retriever.search_many(queries, k=10)]
    cosine = (matrices["torch"] * matrices["onnx"]).sum(axis=1)
    same = sum(a == b for a, b in zip(results["torch"], results["onnx"], strict=True))
    torch_rate, onnx_rate = float(np.median(rates["torch"])), float(np.median(rates["onnx"]))
    print(f"ONNX Runtime {onnx_rate:.1f} passages/s, PyTorch {torch_rate:.1f}: {onnx_rate / torch_rate:.2f}x")
    print(f"largest 1 - cosine between the two backends' passage vectors: {float(np.max(np.abs(1 - cosine))):.1e}")
    print(f"identical top-10 (documents and order): {same} of {len(queries)} queries")
    return 0 if same == len(queries) else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""Dense indexing against its limit: PyTorch, ONNX Runtime fp32 and int8 in one run, each beside the model's
forward pass alone on the same batches, with the same top-10 (fp32) and nDCG@10 on real MTRAG qrels.

    python benchmarks/bench_dense.py [--domain clapnq] [--passages 0] [--floor-passages 1000] [--queries 0]
                                     [--backends torch,onnx,int8] [--batch-size 32] [--model minilm]

Passages: a domain's pooled MTRAG corpus from ../shared/data/mtrag (real 512-token passages; --passages 0 = all of
it, 4,619 for clapnq, 5,083 for fiqa), --corpus for another BEIR corpus (MTRAG's cloud domain where you have it).
Queries: the domain's last turns with their qrels. Each backend indexes the same passages in an embedding store of
its own (nothing read back), model load and ONNX export timed apart. The floor is the transformer's forward pass
alone (no tokenising, pooling or storing) on about --floor-passages of the passages: every k-th of the batches
indexing runs, so their lengths and padding are the whole index's. "x the floor" says how close the whole indexing
is to what no pipeline around the model can beat.
Needs onnxruntime for the onnx and int8 rows (`pip install 'ragjudge[onnx]'`).
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from itertools import islice
from pathlib import Path

import numpy as np

from ragjudge.embeddings.scope import embedding_store_scope
from ragjudge.formats.beir import read_corpus, read_qrels, read_queries
from ragjudge.metrics.ranking import ndcg_at
from ragjudge.models import Passage
from ragjudge.retrieval.base import index_text
from ragjudge.retrieval.dense import DenseRetriever

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data" / "mtrag"
ROWS = {"torch": {"backend": "torch"}, "onnx": {"backend": "onnx"}, "int8": {"backend": "onnx", "precision": "int8"}}


def peak_rss_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def floor_batches(retriever: DenseRetriever, passages: list[Passage], batch_size: int, n: int) -> list[list[str]]:
    """Batches of the texts indexing encodes, as it batches them (longest first, `batch_size` a batch): every k-th
    batch up to about `n` texts (0: all), so their lengths and padding are the whole index's."""
    texts = sorted({retriever.options.passage_prefix + index_text(p, retriever.options.title) for p in passages},
                   key=len, reverse=True)
    batches = [texts[i : i + batch_size] for i in range(0, len(texts), batch_size)]
    return batches[:: max(1, len(texts) // n)] if n else batches


def forward_flops(retriever: DenseRetriever, batches: list[list[str]]) -> float:
    """Floating-point operations of the transformer's forward pass over `batches` as padded (multiply-add = 2): per
    layer 2n(4h^2 + 2hi) for the projections and feed-forward, 4n^2 h for attention; embeddings and norms left out."""
    from ragjudge.embeddings.model_files import model_files
    from ragjudge.embeddings.onnx_export import model_config

    config = model_config(model_files(retriever.encoder._path))  # type: ignore[arg-type,union-attr]
    h, i, layers = config["hidden_size"], config["intermediate_size"], config["num_hidden_layers"]
    tokenizer, limit = retriever.encoder._tokenizer_and_limit()  # type: ignore[union-attr]
    total = 0.0
    for batch in batches:
        n = min(limit, max(len(ids) for ids in tokenizer(batch, truncation=False, verbose=False)["input_ids"]))
        total += len(batch) * layers * (2 * n * (4 * h * h + 2 * h * i) + 4 * n * n * h)
    return total


def forward_seconds(retriever: DenseRetriever, batches: list[list[str]]) -> float:
    """The model's forward pass alone over `batches`, tokenised beforehand; nothing else timed."""
    encoder = retriever.encoder
    if encoder.backend == "onnx":  # type: ignore[union-attr]
        model = encoder._load_onnx()  # type: ignore[union-attr]
        fed = [next(model.batches(b, len(b))) for b in batches]
        started = time.perf_counter()
        for ids, mask in fed:
            model.transformer.run(ids, mask)
        return time.perf_counter() - started
    import torch

    model = encoder._load()  # type: ignore[union-attr]
    fed = [(getattr(model, "preprocess", None) or model.tokenize)(b) for b in batches]
    started = time.perf_counter()
    with torch.inference_mode():
        for features in fed:
            model[0].auto_model(**{k: v for k, v in features.items()
                                   if k in ("input_ids", "attention_mask", "token_type_ids")})
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domain", default="clapnq", choices=["clapnq", "fiqa", "cloud", "govt"])
    parser.add_argument("--corpus", type=Path, help="a BEIR corpus (default: the domain's shared pool)")
    parser.add_argument("--passages", type=int, default=0, help="first N passages (0: all)")
    parser.add_argument("--floor-passages", type=int, default=1000, help="passages the floor is timed on (0: all)")
    parser.add_argument("--queries", type=int, default=0, help="first N queries (0: all)")
    parser.add_argument("--backends", default="torch,onnx,int8")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--model", default="minilm")
    args = parser.parse_args()
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
    rates: dict[str, float] = {}
    tops: dict[str, list[list[str]]] = {}
    for name in args.backends.split(","):
        with tempfile.TemporaryDirectory() as cache, embedding_store_scope(cache):
            retriever = DenseRetriever({"model": args.model, "batch_size": args.batch_size, "device": "cpu",
                                        **ROWS[name]})
            started = time.perf_counter()
            _ = retriever.encoder._load_onnx() if retriever.encoder.backend == "onnx" else retriever.encoder._load()  # type: ignore[union-attr]
            load = time.perf_counter() - started
            started = time.perf_counter()
            retriever.index(passages)
            seconds = time.perf_counter() - started
            rates[name] = len(passages) / seconds
            batches = floor_batches(retriever, passages, args.batch_size, args.floor_passages)
            floor = forward_seconds(retriever, batches)
            floor_rate = sum(len(b) for b in batches) / floor
            gflops = forward_flops(retriever, batches) / floor / 1e9
            tops[name] = [[p.document_id for p in hits] for hits in retriever.search_many([q.text for q in queries],
                                                                                           k=10)]
            ndcg = np.mean([ndcg_at(top, qrels.get(q.id, {}), 10) for q, top in zip(queries, tops[name], strict=True)])
            print(f"  {name:5}: {rates[name]:6.1f} passages/s ({seconds:.1f} s; load{' and export' if name != 'torch' else ''}"
                  f" {load:.1f} s) | forward pass alone {floor_rate:6.1f}/s ({gflops:.0f} GFLOP/s) -> whole indexing "
                  f"{floor_rate / rates[name]:.2f}x the floor | "
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

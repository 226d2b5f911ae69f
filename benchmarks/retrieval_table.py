"""BM25 and dense retrieval on the MTRAG clapnq and fiqa pools, last turn vs rewritten queries.

    python benchmarks/retrieval_table.py [--pipelines bm25,dense] [--domains clapnq,fiqa] [--index-dir DIR]

Uses the shared MTRAG data (`../shared/data/mtrag`: pooled corpora, BEIR queries and qrels) and prints
Recall and nDCG at 1, 3, 5 and 10 (ranx), over the queries that have qrels, as a markdown table.
Indexes are kept in --index-dir (default: ragjudge's cache), so a second run only searches.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from ranx import Qrels, Run, evaluate

from ragjudge.formats.beir import read_qrels, read_queries
from ragjudge.retrieval.pipeline import Pipeline
from ragjudge.retrieval.spec import load_pipeline

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "mtrag"
METRICS = [f"{m}@{k}" for m in ("recall", "ndcg") for k in (1, 3, 5, 10)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pipelines", default="bm25,dense")
    parser.add_argument("--domains", default="clapnq,fiqa")
    parser.add_argument("--index-dir", default=None)
    parser.add_argument("--data", default=str(SHARED))
    args = parser.parse_args()
    data = Path(args.data)
    if not data.is_dir():
        raise SystemExit(f"MTRAG data not found at {data}")

    rows = []
    for domain in args.domains.split(","):
        qrels = read_qrels(data / "retrieval" / domain / "qrels.tsv")
        for name in args.pipelines.split(","):
            pipe = Pipeline(load_pipeline(name), index_dir=args.index_dir)
            info = pipe.open(data / "corpus" / f"{domain}_pool.jsonl")
            print(f"# {domain} {name}: index {'reused' if info.reused else 'built'} in {info.seconds:.1f}s "
                  f"({info.passages} passages)", flush=True)
            for variant in ("lastturn", "rewrite"):
                queries = [q for q in read_queries(data / "retrieval" / domain / f"{variant}.jsonl") if q.id in qrels]
                started = time.perf_counter()
                results = pipe.search([q.text for q in queries], k=10)
                seconds = time.perf_counter() - started
                run = {q.id: {p.document_id: float(p.score or 0.0) for p in hits} or {"<none>": 0.0}
                       for q, hits in zip(queries, results, strict=True)}
                judged = {q.id: qrels[q.id] for q in queries}
                scores = evaluate(Qrels(judged), Run(run), METRICS, make_comparable=True)
                rows.append((domain, name, variant, len(queries), {m: float(scores[m]) for m in METRICS}, seconds))
            pipe.close()

    header = "| domain | retriever | queries | n | " + " | ".join(m.replace("recall", "R").replace("ndcg", "nDCG")
                                                                  for m in METRICS) + " |"
    print()
    print(header)
    print("|" + "---|" * (4 + len(METRICS)))
    for domain, name, variant, n, scores, _ in rows:
        print(f"| {domain} | {name} | {variant} | {n} | " + " | ".join(f"{scores[m]:.3f}" for m in METRICS) + " |")
    print()
    for domain in args.domains.split(","):
        for name in args.pipelines.split(","):
            by = {v: s for d, p, v, _, s, _ in rows if d == domain and p == name}
            delta = by["rewrite"]["recall@10"] - by["lastturn"]["recall@10"]
            print(f"{domain} {name}: rewrite - last turn Recall@10 = {delta:+.3f}")


if __name__ == "__main__":
    main()

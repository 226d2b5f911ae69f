"""The official MTRAG-UN evaluation, restated as test oracles (shared by the MTRAG-UN tests): the conditioning
(judge_wrapper.py) and the retrieval evaluation (run_retrieval_eval.py, its defects mended as each mend says)."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path


def official(answerability: str | None, idk: float, underspec: float, metric: float) -> float:
    """`get_idk_underspec_score` of the benchmark's judge_wrapper.py, restated branch by branch."""
    if answerability in ["UNDERSPECIFIED"] and underspec == 1:
        return 1
    elif answerability in ["UNDERSPECIFIED"] and underspec != 1:
        return 0
    elif answerability in ["UNANSWERABLE", "CONVERSATIONAL"] and idk == 1:
        return 1
    elif answerability in ["UNANSWERABLE", "CONVERSATIONAL"] and idk in [0, 0.5]:
        return 0
    elif idk == 1:
        return 0
    return metric


# -- the official retrieval evaluation (run_retrieval_eval.py), restated with its defects mended ----------------

K_VALUES = (1, 3, 5, 10)
"""The task page's cut-offs; the official script computes 1, 3 and 5 only (mend 1)."""
COLLECTIONS = {"clapnq": "clapnq", "cloud": "cloud", "ibmcloud": "cloud", "fiqa": "fiqa", "govt": "govt"}
"""MTRAG-UN's short `Collection` names -> its qrels file; the official script knows only MTRAG's long names
(`mt-rag-clapnq-elser-512-100-20240503`, ...), and an unknown name leaves its qrels path unset (mend 2)."""


def official_qrels(path: Path) -> dict[str, dict[str, int]]:
    """`load_qrels`: a BEIR TSV, its header line skipped. The official script reads
    `human/retrieval_tasks/<domain>/qrels/dev.tsv`, which no commit of the repository holds; the release's qrels are
    `retrieval/qrels/<domain>.tsv` (mend 3: the caller passes that path)."""
    qrels: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8") as f:
        rows = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_MINIMAL)
        next(rows)
        for query_id, corpus_id, score in rows:
            qrels.setdefault(query_id, {})[corpus_id] = int(score)
    return qrels


def _trec_order(docs: dict[str, float]) -> list[str]:
    """trec_eval's ranking: by score, higher first; ties by document id, the greater first."""
    return [d for d, _ in sorted(docs.items(), key=lambda item: (item[1], item[0]), reverse=True)]


def _ndcg_cut(ranked: list[str], rels: dict[str, int], k: int) -> float:
    """trec_eval's ndcg_cut.k: the gain is the judged relevance, the discount log2(rank + 1)."""
    dcg = sum(rels.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]) if rels.get(d, 0) > 0)
    ideal = sorted((r for r in rels.values() if r > 0), reverse=True)[:k]
    idcg = sum(r / math.log2(i + 2) for i, r in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def _recall(ranked: list[str], rels: dict[str, int], k: int) -> float:
    relevant = {d for d, r in rels.items() if r > 0}
    return len(relevant & set(ranked[:k])) / len(relevant) if relevant else 0.0


def official_retrieval(run_file: Path, qrels_folder: Path) -> dict[str, dict[str, float]]:
    """`main` of run_retrieval_eval.py, mended: per collection, the queries of the run that its qrels judge (what
    pytrec_eval scores), each figure's mean rounded to 5 decimals; then `all`, the collections' means weighted by
    their number of predictions. Returns {collection or "all": {"nDCG@k"/"R@k": value}}."""
    results: dict[str, dict[str, float]] = {}
    collection_of: dict[str, str] = {}
    for line in run_file.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        results[item["task_id"]] = {c["document_id"]: c["score"] for c in item.get("contexts", [])}
        collection_of[item["task_id"]] = item["Collection"]
    out: dict[str, dict[str, float]] = {}
    counts: dict[str, int] = {}
    for collection in sorted(set(collection_of.values())):
        qrels = official_qrels(qrels_folder / f"{COLLECTIONS[collection]}.tsv")
        preds = {q: docs for q, docs in results.items() if collection_of[q] == collection}
        scored = {q: _trec_order({d: s for d, s in docs.items() if d != q}) for q, docs in preds.items()
                  if q in qrels}
        out[collection] = {}
        for k in K_VALUES:
            out[collection][f"nDCG@{k}"] = round(sum(_ndcg_cut(r, qrels[q], k) for q, r in scored.items())
                                                 / len(scored), 5)
            out[collection][f"R@{k}"] = round(sum(_recall(r, qrels[q], k) for q, r in scored.items())
                                              / len(scored), 5)
        counts[collection] = len(preds)
    total = sum(counts.values())
    out["all"] = {m: sum(out[c][m] * n for c, n in counts.items()) / total for m in out[next(iter(counts))]}
    return out

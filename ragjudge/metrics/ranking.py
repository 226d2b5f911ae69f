"""Ranking metrics as small pure functions: one query at a time over plain ids, many rankings at once over numpy
arrays, and a whole run through ranx (`ranx_scores`, given rank-derived scores so it cannot re-break ties its own
way). Every bench and command reports through these, so the same name means the same number. Where tools differ:
- `precision_at` divides by k, also for a ranking shorter than k; `reciprocal_rank` looks within k when given;
- `hit_at` is sentence-transformers' accuracy@k, CDR's ACC@k and CXMArena's retrieval "precision";
- `ndcg_at` has **linear** gain (the grade) and discount 1/log2(rank + 1), as trec_eval and ranx compute it (with
  binary relevance linear and exponential gains agree);
- `average_precision` divides by the number of relevant documents (trec_eval's AP, ranx's `map`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

# -- one query, plain ids -------------------------------------------------------------------------------------


def precision_at(ranking: Sequence[str], relevant: Iterable[str], k: int) -> float:
    rel = set(relevant)
    return sum(doc in rel for doc in ranking[:k]) / k


def recall_at(ranking: Sequence[str], relevant: Iterable[str], k: int) -> float:
    """0 when nothing is relevant (no recall is defined; callers leave such queries out, as trec_eval does)."""
    rel = set(relevant)
    return sum(doc in rel for doc in ranking[:k]) / len(rel) if rel else 0.0


def hit_at(ranking: Sequence[str], relevant: Iterable[str], k: int) -> float:
    rel = set(relevant)
    return float(any(doc in rel for doc in ranking[:k]))


def reciprocal_rank(ranking: Sequence[str], relevant: Iterable[str], k: int | None = None) -> float:
    rel = set(relevant)
    for rank, doc in enumerate(ranking[:k] if k is not None else ranking, start=1):
        if doc in rel:
            return 1.0 / rank
    return 0.0


def ndcg_at(ranking: Sequence[str], relevance: Mapping[str, float], k: int) -> float:
    """Linear gain: a document's grade (0 or absent: not relevant)."""
    dcg = sum(relevance.get(doc, 0.0) / math.log2(rank + 1) for rank, doc in enumerate(ranking[:k], start=1))
    ideal_grades = sorted((g for g in relevance.values() if g > 0), reverse=True)[:k]
    ideal = sum(g / math.log2(rank + 1) for rank, g in enumerate(ideal_grades, start=1))
    return dcg / ideal if ideal > 0 else 0.0


def average_precision(ranking: Sequence[str], relevant: Iterable[str], k: int | None = None) -> float:
    rel = set(relevant)
    if not rel:
        return 0.0
    hits = 0
    total = 0.0
    for rank, doc in enumerate(ranking[:k] if k is not None else ranking, start=1):
        if doc in rel:
            hits += 1
            total += hits / rank
    return total / len(rel)


# -- many rankings at once: rows of 0/1 labels in rank order --------------------------------------------------


def average_precision_rows(rel: np.ndarray) -> np.ndarray:
    """`average_precision` of each row (the labels of one ranking, best first; every relevant one is in the row)."""
    rel = np.atleast_2d(rel)
    ranks = np.arange(1, rel.shape[1] + 1)
    precision = np.cumsum(rel, axis=1) / ranks
    n_rel = rel.sum(axis=1)
    return np.divide((precision * rel).sum(axis=1), n_rel, out=np.zeros(len(rel)), where=n_rel > 0)


def ndcg_rows(rel: np.ndarray, k: int) -> np.ndarray:
    """`ndcg_at` of each row of binary labels."""
    rel = np.atleast_2d(rel)
    discounts = 1.0 / np.log2(np.arange(2, k + 2))
    top = rel[:, :k]
    dcg = (top * discounts[: top.shape[1]]).sum(axis=1)
    n_rel = rel.sum(axis=1).astype(int)
    ideal = np.concatenate([[0.0], np.cumsum(discounts)])[np.minimum(n_rel, k)]
    return np.divide(dcg, ideal, out=np.zeros(len(rel)), where=ideal > 0)


def reciprocal_rank_rows(rel: np.ndarray) -> np.ndarray:
    """`reciprocal_rank` (no cut-off) of each row."""
    rel = np.atleast_2d(rel)
    hit = rel > 0
    first = hit.argmax(axis=1) + 1
    return np.where(hit.any(axis=1), 1.0 / first, 0.0)


# -- a whole run, through ranx ---------------------------------------------------------------------------------


def ranx_scores(rankings: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, int]],
                metrics: Sequence[str], keys: Sequence[str]) -> dict[str, np.ndarray]:
    """ranx's `metrics` (`ndcg@10`, `recall@5`, `precision@1`, `mrr@10`, `map@100`, `hit_rate@20`) for each query of
    `keys`, in that order: `rankings` are document ids best first (a query missing from it scores zero), `qrels`
    the relevant documents' grades."""
    import numba
    import ranx  # numba start-up cost only when evaluating
    from numba.core.errors import NumbaTypeSafetyWarning

    keys = list(keys)
    # ranx stores doc ids in numpy `<U{longest id}` arrays and numba compiles its loaders anew for every width
    # (seconds each, for every new corpus); fixed-width codes keep one compiled, cached signature.
    codes: dict[str, str] = {}

    def code(doc_id: str) -> str:
        return codes.setdefault(doc_id, f"{len(codes):012d}")

    ranx_qrels = ranx.Qrels({k: {code(d): r for d, r in qrels[k].items()} for k in keys})
    ranked = {k: {code(d): float(len(docs) - i) for i, d in enumerate(docs)}
              for k in keys if (docs := rankings.get(k))}
    ranx_run = ranx.Run(ranked) if ranked else ranx.Run()
    ranx_run.make_comparable(ranx_qrels)
    threads = numba.get_num_threads()
    try:
        with warnings.catch_warnings():
            # ranx's numba kernels warn about an index cast that cannot overflow at these sizes.
            warnings.simplefilter("ignore", NumbaTypeSafetyWarning)
            ranx.evaluate(ranx_qrels, ranx_run, list(metrics), save_results_in_run=True)
    finally:
        numba.set_num_threads(threads)  # ranx drops to one thread for small qrels and never restores it
    return {m: np.array([float(ranx_run.scores[m][k]) for k in keys]) for m in metrics}

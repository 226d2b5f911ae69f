"""CDR's metrics through `ragjudge.retrieval_eval.metrics.evaluate` (what they are: docs/benches/cdr.md, Metrics and
outputs). The paper's ACC@k is sentence-transformers' accuracy@k, ranx's `hit_rate@k`; ranx's names (`RANX`) are
used only to ask ranx, the paper's only in its transcribed tables.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ragjudge.bench.cdr.data import CdrQuery
from ragjudge.formats.runs import Hit, Qrels, Run
from ragjudge.models import normalize_task_id

FAMILIES = ("hit", "P", "R", "nDCG", "MRR")
"""In the paper's order (ACC, P, R, NDCG, MRR)."""
CUTOFFS = (1, 5, 10, 20)
METRICS = tuple(f"{f}@{k}" for f in FAMILIES for k in CUTOFFS)
RANX_FAMILIES = {"hit": "hit_rate", "P": "precision", "R": "recall", "nDCG": "ndcg", "MRR": "mrr"}
RANX = tuple(f"{RANX_FAMILIES[f]}@{k}" for f in FAMILIES for k in CUTOFFS)
"""The same metrics as ranx names them, in the same order."""
PAPER_NAMES = {"hit": "ACC", "P": "P", "R": "R", "nDCG": "NDCG", "MRR": "MRR"}
HEADLINE = "nDCG@10"
"""The paper's main figure (Table 3)."""


def paper_name(metric: str) -> str:
    """`hit@10` -> `ACC@10`, `nDCG@10` -> `NDCG@10`, as the paper's tables write it."""
    family, _, k = metric.partition("@")
    return f"{PAPER_NAMES.get(family, family)}@{k}"


def ours(ranx_name: str) -> str:
    """`hit_rate@10` (ranx) -> `hit@10`."""
    return METRICS[RANX.index(ranx_name)]


def as_run(rankings: Mapping[str, Sequence[Mapping[str, Any]]], name: str = "cdr") -> Run:
    """Conversation rankings (best first, as the solver wrote them) as a ragjudge Run."""
    run = Run(name=name)
    for qid, ranking in rankings.items():
        run.add(qid, [Hit(str(r["id"]), float(r["score"])) for r in ranking])
    return run


def as_qrels(queries: Sequence[CdrQuery]) -> Qrels:
    qrels = Qrels()
    for q in queries:
        key = normalize_task_id(q.id)
        qrels.judgments[key] = {doc: 1 for doc in q.relevant}
        qrels.ids[key] = q.id
    return qrels


def score_queries(queries: Sequence[CdrQuery], rankings: Mapping[str, Sequence[Mapping[str, Any]]]
                  ) -> dict[str, dict[str, float]]:
    """Per query id: every metric, through ranx (a query the rankings lack scores zero)."""
    from ragjudge.retrieval_eval.metrics import evaluate

    if not queries:
        return {}
    keys = [normalize_task_id(q.id) for q in queries]
    evaluation = evaluate(as_run(rankings), as_qrels(queries), list(RANX), keys)
    return {q.id: {ours(m): v for m, v in evaluation.query_scores(i).items()} for i, q in enumerate(queries)}


def means(per_query: Sequence[Mapping[str, float]]) -> dict[str, float | None]:
    if not per_query:
        return {m: None for m in METRICS}
    return {m: round(float(np.mean([s[m] for s in per_query])), 6) for m in METRICS}


def by_category(per_query: Mapping[str, Mapping[str, float]], categories: Mapping[str, str | None]
                ) -> dict[str, dict[str, Any]]:
    """category -> {"n", metric means}; queries without a category form the group `unknown`."""
    groups: dict[str, list[Mapping[str, float]]] = {}
    for qid, scores in per_query.items():
        groups.setdefault(categories.get(qid) or "unknown", []).append(scores)
    order = sorted(groups, key=lambda g: (g == "unknown", g))
    return {g: {"n": len(groups[g]), **means(groups[g])} for g in order}


def weighted_mean(groups: Mapping[str, Mapping[str, Any]], metric: str) -> float:
    """The query-weighted mean of group means: equals the overall mean when every query is in one group."""
    total = sum(g["n"] for g in groups.values())
    return sum(g["n"] * g[metric] for g in groups.values()) / total

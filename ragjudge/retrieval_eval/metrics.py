"""Which queries are evaluated, and their Recall / nDCG / Precision / MRR / MAP / hit rate at k through ranx.

The query set is docs/retrieval-eval.md's (trec_eval -c's and MTRAG's "only queries present in qrels"). Metric
definitions are ranx's: nDCG with linear gain (as trec_eval), precision@k divides by k, MAP@k by the number of
relevant passages, hit rate@k is sentence-transformers' "accuracy@k" (CDR's ACC@k). ranx gets rank-derived scores
(the ranking of `ragjudge.formats.runs`) so that it cannot re-break ties its own way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ragjudge.engine.summary import MetricInfo
from ragjudge.errors import InputError, UsageError
from ragjudge.formats.runs import Qrels, Run
from ragjudge.metrics.ranking import ranx_scores

FAMILIES = ("recall", "ndcg", "precision", "mrr", "map", "hit_rate")
"""ranx's names, used inside; results, reports and tables use LABELS (ragjudge's one retrieval vocabulary)."""
LABELS = {"recall": "R", "ndcg": "nDCG", "precision": "P", "mrr": "MRR", "map": "MAP", "hit_rate": "hit"}
ALIASES = {"r": "recall", "p": "precision", "hit": "hit_rate", "acc": "hit_rate", "accuracy": "hit_rate",
           "hit-rate": "hit_rate"}
DEFAULT_CUTOFFS = (1, 3, 5, 10, 20)

METRIC_INFOS = (
    MetricInfo("R@*", "recall at k: share of the relevant passages in the top k"),
    MetricInfo("nDCG@*", "nDCG at k, linear gains (as trec_eval)"),
    MetricInfo("P@*", "precision at k: relevant passages among the top k, over k"),
    MetricInfo("MRR@*", "reciprocal rank of the first relevant passage in the top k"),
    MetricInfo("MAP@*", "average precision at k (divided by the number of relevant passages)"),
    MetricInfo("hit@*", "a relevant passage in the top k (hit rate, accuracy@k)"),
)
"""What the retrieval metrics are, for every command and bench that reports them."""


def label(name: str) -> str:
    """`recall@5` (ranx) -> `R@5`, `ndcg@10` -> `nDCG@10`, `hit_rate@1` -> `hit@1`."""
    family, _, k = name.partition("@")
    return f"{LABELS.get(family, family)}@{k}" if k else LABELS.get(family, family)


def labelled(scores: dict[str, float]) -> dict[str, float]:
    return {label(name): value for name, value in scores.items()}


def parse_metrics(spec: str | Sequence[str] | None, cutoffs: Sequence[int] = DEFAULT_CUTOFFS) -> list[str]:
    """`R,nDCG@10` (or ranx's `recall,ndcg@10`) -> ['recall@1', ..., 'recall@10', 'ndcg@10'], ranx's names: a
    bare family is taken at every cutoff."""
    items = list(FAMILIES) if spec is None else ([s.strip() for s in spec.split(",")] if isinstance(spec, str)
                                                  else [s.strip() for s in spec])
    items = [i for i in items if i]
    if not items:
        raise UsageError("no metric given")
    if not cutoffs or any(k < 1 for k in cutoffs):
        raise UsageError("cutoffs must be positive integers")
    names: list[str] = []
    for item in items:
        family, _, k = item.lower().partition("@")
        family = ALIASES.get(family, family)
        if family not in FAMILIES:
            raise UsageError(f"unknown metric {item!r}; known: {', '.join(LABELS.values())} (optionally @k, e.g. "
                             "nDCG@10)")
        if k:
            if not k.isdigit() or int(k) < 1:
                raise UsageError(f"metric {item!r}: the cutoff after '@' must be a positive integer")
            ks = [int(k)]
        else:
            ks = sorted(set(cutoffs))
        names.extend(f"{family}@{c}" for c in ks if f"{family}@{c}" not in names)
    return names


def parse_cutoffs(spec: str) -> list[int]:
    try:
        cutoffs = sorted({int(v) for v in spec.split(",") if v.strip()})
    except ValueError:
        raise UsageError(f"--cutoffs must be comma-separated integers, got {spec!r}") from None
    if not cutoffs or cutoffs[0] < 1:
        raise UsageError(f"--cutoffs must be positive integers, got {spec!r}")
    return cutoffs


@dataclass(frozen=True)
class QuerySelection:
    """The evaluated queries (normalised ids, sorted) and how many were left out, by reason."""

    keys: list[str]
    ignored: list[str]
    """In the run, not in the qrels."""
    missing: list[str]
    """Judged relevant passages but absent from the run: scored zero, or dropped (`ignore_missing`)."""
    no_relevant: list[str]
    """In the qrels with no relevant passage: no metric is defined."""


def select_queries(qrels: Qrels, run: Run, *, ignore_missing: bool = False) -> QuerySelection:
    judged = sorted(k for k in qrels.judgments if qrels.relevant(k))
    no_relevant = sorted(k for k in qrels.judgments if not qrels.relevant(k))
    ignored = sorted(k for k in run.rankings if k not in qrels.judgments)
    if len(ignored) == len(run.rankings):
        sample_run = run.ids[next(iter(run.rankings))]
        sample_qrels = qrels.ids[next(iter(qrels.judgments))]
        raise InputError(f"none of the run's {len(run.rankings)} queries is in the qrels (run ids look like "
                         f"{sample_run!r}, qrels ids like {sample_qrels!r})", file=run.source)
    if not judged:
        raise InputError("no query in the qrels has a relevant passage (grade > 0)",
                         file=", ".join(qrels.sources) or None)
    missing = [k for k in judged if k not in run.rankings]
    keys = [k for k in judged if k in run.rankings] if ignore_missing else judged
    if not keys:
        raise InputError("no judged query is in the run", file=run.source)
    return QuerySelection(keys, ignored, missing, no_relevant)


@dataclass
class Evaluation:
    """Per-query scores of one run, aligned with `keys`."""

    run: Run
    keys: list[str]
    metrics: list[str]
    scores: dict[str, np.ndarray]

    def means(self, rows: Sequence[int] | None = None) -> dict[str, float]:
        if rows is not None and len(rows) == 0:
            return {m: float("nan") for m in self.metrics}
        return {m: float(np.mean(v if rows is None else v[list(rows)])) for m, v in self.scores.items()}

    def query_scores(self, i: int) -> dict[str, float]:
        return {m: float(v[i]) for m, v in self.scores.items()}


def evaluate(run: Run, qrels: Qrels, metrics: Sequence[str], keys: Sequence[str]) -> Evaluation:
    """Score `run` on exactly the queries `keys` (queries the run lacks get an empty ranking), through ranx
    (`ragjudge.metrics.ranking.ranx_scores`)."""
    keys = list(keys)
    rankings = {k: [h.doc_id for h in hits] for k in keys if (hits := run.rankings.get(k))}
    scores = ranx_scores(rankings, {k: qrels.relevant(k) for k in keys}, metrics, keys)
    return Evaluation(run=run, keys=keys, metrics=list(metrics), scores=scores)

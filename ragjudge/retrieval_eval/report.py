"""One retrieval evaluation end to end: query set, scores, breakdowns, comparison; as JSON-ready data."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ragjudge.formats.runs import Qrels, Run
from ragjudge.retrieval_eval.breakdowns import Labels, breakdown, label_queries
from ragjudge.retrieval_eval.metrics import Evaluation, evaluate, select_queries
from ragjudge.retrieval_eval.significance import TEST_NAME, paired_test


@dataclass
class RetrievalReport:
    summary: dict[str, Any]
    evaluation: Evaluation
    groups: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    qrels: Qrels | None = None

    def per_query(self) -> list[dict[str, Any]]:
        """One row per evaluated query: its id as the qrels write it, its labels and scores."""
        ev, run = self.evaluation, self.evaluation.run
        rows = []
        for i, key in enumerate(ev.keys):
            row: dict[str, Any] = {"query_id": self.qrels.ids.get(key, key) if self.qrels else key,
                                   "in_run": key in run.rankings, "n_retrieved": len(run.rankings.get(key, []))}
            for dim, groups in self.groups.items():
                values = groups[key]
                row[dim] = values[0] if len(values) == 1 else values
            row.update(ev.query_scores(i))
            rows.append(row)
        return rows


def _rounded(metrics: dict[str, float]) -> dict[str, float | None]:
    return {m: None if math.isnan(v) else round(v, 6) for m, v in metrics.items()}


def evaluate_run(run: Run, qrels: Qrels, *, metrics: Sequence[str], dims: Sequence[str] = (),
                 labels: Labels | None = None, default_domain: str | None = None, ignore_missing: bool = False,
                 compare: Run | None = None, alpha: float = 0.05) -> RetrievalReport:
    selection = select_queries(qrels, run, ignore_missing=ignore_missing)
    keys = selection.keys
    other = select_queries(qrels, compare, ignore_missing=ignore_missing) if compare is not None else None
    if other is not None and ignore_missing:
        keys = sorted(set(keys) & set(other.keys))  # a paired test needs one query set for both runs
    evaluation = evaluate(run, qrels, metrics, keys)
    runs = [run] if compare is None else [run, compare]
    groups = label_queries(keys, dims, runs=runs, labels=labels, default_domain=default_domain)
    summary: dict[str, Any] = {
        "run": run.source, "qrels": qrels.sources, "n_queries": len(keys),
        "metrics": _rounded(evaluation.means()),
        "n_run_queries": len(run.rankings), "n_ignored": len(selection.ignored),
        "n_missing": len(selection.missing), "missing": "dropped" if ignore_missing else "scored zero",
        "n_no_relevant": len(selection.no_relevant),
        "breakdowns": {dim: {g: {"n_queries": s["n_queries"], "metrics": _rounded(s["metrics"])}
                             for g, s in breakdown(evaluation, groups[dim], dim=dim).items()}
                       for dim in dims if dim in groups},  # a dimension nothing labels (domain of a TREC run) is left out
    }
    if compare is not None and other is not None:
        evaluation_b = evaluate(compare, qrels, metrics, keys)
        tests = paired_test(evaluation, evaluation_b, alpha=alpha)
        summary["comparison"] = {
            "run": compare.source, "test": TEST_NAME, "alpha": alpha, "n_queries": len(keys),
            "n_missing": len(other.missing), "n_ignored": len(other.ignored),
            "metrics": {m: {"a": round(t["a"], 6), "b": round(t["b"], 6), "diff": round(t["diff"], 6),
                            "p_value": t["p_value"], "significant": t["significant"]} for m, t in tests.items()},
        }
    return RetrievalReport(summary=summary, evaluation=evaluation, groups=groups, qrels=qrels)

"""One retrieval evaluation end to end: query set, scores, breakdowns, comparison, as a `Summary` (the result
contract every ragjudge command and bench writes)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ragjudge.engine.summary import Breakdown, Group, MetricCatalog, Summary, Table, headline_of, stat
from ragjudge.formats.runs import Qrels, Run
from ragjudge.retrieval_eval.breakdowns import Labels, breakdown, label_queries
from ragjudge.retrieval_eval.metrics import METRIC_INFOS, Evaluation, evaluate, label, labelled, select_queries
from ragjudge.retrieval_eval.significance import TEST_NAME, paired_test

TITLES = {"turn": "First vs later turns", "turn_number": "By turn", "domain": "By domain",
          "standalone": "Standalone vs non-standalone"}
SHOWN = ("R@5", "R@10", "nDCG@5", "nDCG@10")
"""What a breakdown table shows when there are more metrics (80 columns); the JSON has all."""
HEADLINE = ("nDCG@10", "R@5", "R@10", "nDCG@5")
"""The headline's metric: the first of these that was computed, else the first metric asked for."""


@dataclass
class RetrievalReport:
    summary: Summary
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
            row.update(labelled(ev.query_scores(i)))
            rows.append(row)
        return rows


def _rounded(value: float) -> float | None:
    return None if math.isnan(value) else round(value, 6)


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
    catalog = MetricCatalog(METRIC_INFOS, "retrieval-eval")
    metrics = {label(m): catalog.metric(label(m), _rounded(v), n=len(keys)) for m, v in evaluation.means().items()}
    shown = [m for m in SHOWN if m in metrics] if len(metrics) > len(SHOWN) else list(metrics)
    breakdowns = {}
    for dim in dims:
        if dim not in groups:  # a dimension nothing labels (no domain) is left out
            continue
        table = {g: Group(n=s["n_queries"], metrics={label(m): stat(_rounded(v), n=s["n_queries"])
                                                     for m, v in s["metrics"].items()})
                 for g, s in breakdown(evaluation, groups[dim], dim=dim).items()}
        breakdowns[dim] = Breakdown(title=TITLES.get(dim, f"By {dim}"), label=dim, groups=table,
                                    columns=shown or list(metrics)[:4])
    details: dict[str, Any] = {
        "run": run.source, "qrels": qrels.sources, "n_queries": len(keys), "n_run_queries": len(run.rankings),
        "n_ignored": len(selection.ignored), "n_missing": len(selection.missing),
        "missing": "dropped" if ignore_missing else "scored zero", "n_no_relevant": len(selection.no_relevant),
    }
    notes = []
    if selection.ignored:
        notes.append(f"{len(selection.ignored)} run queries without qrels ignored")
    if selection.missing:
        notes.append(f"{len(selection.missing)} judged queries missing from the run {details['missing']}")
    if selection.no_relevant:
        notes.append(f"{len(selection.no_relevant)} qrels queries without a relevant passage left out")
    tables = []
    if compare is not None and other is not None:
        evaluation_b = evaluate(compare, qrels, evaluation.metrics, keys)
        tests = paired_test(evaluation, evaluation_b, alpha=alpha)
        comparison = {
            "run": compare.source, "test": TEST_NAME, "alpha": alpha, "n_queries": len(keys),
            "n_missing": len(other.missing), "n_ignored": len(other.ignored),
            "metrics": {label(m): {"a": round(t["a"], 6), "b": round(t["b"], 6), "diff": round(t["diff"], 6),
                                   "p_value": t["p_value"], "significant": t["significant"]} for m, t in tests.items()},
        }
        details["comparison"] = comparison
        tables.append(Table(
            title=f"{run.name} (A) vs {compare.name} (B): {TEST_NAME}, {len(keys)} queries",
            columns=["metric", "A", "B", "B - A", "p", f"p < {alpha:g}"],
            rows=[[m, c["a"], c["b"], f"{c['diff']:+.3f}", None if c["p_value"] is None else f"{c['p_value']:.3g}",
                   c["significant"]] for m, c in comparison["metrics"].items()]))
    summary = Summary(bench="retrieval-eval", title=f"{run.name}: {len(keys)} queries", unit="queries",
                      n_samples=len(keys), n_errors=0, metrics=metrics, breakdowns=breakdowns, tables=tables,
                      notes=notes, headline=headline_of(metrics, [*HEADLINE, *metrics], "queries"),
                      details=details)
    return RetrievalReport(summary=summary, evaluation=evaluation, groups=groups, qrels=qrels)

"""Two or more runs on the same tasks, each compared with the first (the baseline): per-metric differences with a
paired test, win / tie / loss per task, and the tasks where the runs differ most.

The test is `retrieval_eval.significance`'s paired t-test over the tasks both runs scored, with a t-based 95%
interval of the mean difference; each metric on its own, with no correction for testing several (the page says so).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ragjudge.retrieval_eval.significance import paired_p_value, t_quantile

ALPHA = 0.05
TIE = 1e-9
TOP_TASKS = 10

Values = dict[str, dict[str, float]]
"""sample id → metric → value, for one run."""


@dataclass
class MetricComparison:
    metric: str
    direction: bool | None
    n: int
    mean_a: float | None
    mean_b: float | None
    diff: float | None
    ci: tuple[float, float] | None
    p_value: float | None
    higher: int
    same: int
    lower: int
    top: list[dict[str, Any]] = field(default_factory=list)
    """The tasks with the largest |b - a|: {"id", "a", "b", "diff"}."""

    @property
    def significant(self) -> bool:
        return self.p_value is not None and self.p_value < ALPHA

    @property
    def wins(self) -> int:
        """Tasks where run b is better (higher when higher is better); `higher` for metrics without a direction."""
        return self.lower if self.direction is False else self.higher

    @property
    def losses(self) -> int:
        return self.higher if self.direction is False else self.lower


@dataclass
class RunComparison:
    baseline: str
    other: str
    shared: int
    only_baseline: int
    only_other: int
    same_data: bool | None
    """Whether both runs recorded the same data hash (None when either did not record one)."""
    metrics: list[MetricComparison]


def compare_metric(metric: str, a: Values, b: Values, direction: bool | None) -> MetricComparison | None:
    ids = [i for i in a if metric in a[i] and i in b and metric in b[i]]
    if not ids:
        return None
    x = np.array([a[i][metric] for i in ids])
    y = np.array([b[i][metric] for i in ids])
    diff = y - x
    ci = None
    if len(ids) >= 2:
        half = t_quantile(1 - ALPHA / 2, len(ids) - 1) * float(diff.std(ddof=1)) / float(np.sqrt(len(ids)))
        ci = (float(diff.mean()) - half, float(diff.mean()) + half)
    order = np.argsort(-np.abs(diff), kind="stable")[:TOP_TASKS]
    top = [{"id": ids[k], "a": float(x[k]), "b": float(y[k]), "diff": float(diff[k])} for k in order
           if abs(diff[k]) > TIE]
    return MetricComparison(
        metric=metric, direction=direction, n=len(ids), mean_a=float(x.mean()), mean_b=float(y.mean()),
        diff=float(diff.mean()), ci=ci, p_value=paired_p_value(x, y), higher=int((diff > TIE).sum()),
        same=int((np.abs(diff) <= TIE).sum()), lower=int((diff < -TIE).sum()), top=top)


def compare_runs(labels: list[str], values: list[Values], metrics: list[str], directions: dict[str, bool | None],
                 data_hashes: list[str | None]) -> list[RunComparison]:
    """Every run after the first against the first, on the metrics both have."""
    out = []
    base = values[0]
    for k in range(1, len(values)):
        other = values[k]
        compared = [c for m in metrics if (c := compare_metric(m, base, other, directions.get(m, True))) is not None]
        hashes = data_hashes[0], data_hashes[k]
        out.append(RunComparison(
            baseline=labels[0], other=labels[k], shared=len(set(base) & set(other)),
            only_baseline=len(set(base) - set(other)), only_other=len(set(other) - set(base)),
            same_data=None if None in hashes else hashes[0] == hashes[1], metrics=compared))
    return out

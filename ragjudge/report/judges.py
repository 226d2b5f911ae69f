"""Judges inside one run: what each judged and how often it failed, how far a panel's members agree (the same
measures `ragjudge correlate` reports for human annotators), how judges correlate with each other, and how
often they disagree on a task."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ragjudge.formats.samples import Score

SPREAD_AT = 0.3
"""A panel whose members' scores span at least this much on a task is counted as disagreeing on it."""


@dataclass
class JudgeStats:
    name: str
    metric: str
    models: list[str]
    n: int
    errors: int
    mean: float | None
    not_applicable: int = 0
    """Tasks the judge does not apply to (`details.skipped`: no passages, no reference, no answer)."""


@dataclass
class PanelStats:
    judge: str
    members: list[dict[str, Any]]
    """{"model", "n", "mean", "errors"} per member."""
    agreement: dict[str, Any]
    mean_spread: float | None
    disagreeing: int
    """Tasks whose members' scores span at least SPREAD_AT."""


@dataclass
class JudgeReport:
    judges: list[JudgeStats]
    panels: list[PanelStats]
    correlation: dict[str, Any] = field(default_factory=dict)
    """{"names": [...], "matrix": [[rho or None]], "n": [[pairs]]}: Spearman between judges over tasks."""


def member_values(score: Score) -> dict[str, float]:
    """A panel judge's members that gave a value, by model (or position)."""
    return {_member(m, i): m.value for i, m in enumerate(score.members) if m.value is not None}


def _member(member: Score, i: int) -> str:
    return member.model or f"member {i + 1}"


def spread(judges: dict[str, Score]) -> float | None:
    """The largest range of members' scores over the sample's panel judges (None without a panel)."""
    ranges = [max(v.values()) - min(v.values()) for r in judges.values() if len(v := member_values(r)) >= 2]
    return max(ranges) if ranges else None


def judge_report(samples: Sequence[dict[str, Score]]) -> JudgeReport:
    """`samples`: each sample's judges (name → Score, its `metric` set), as the run's view reads them."""
    names = list(dict.fromkeys(n for judges in samples for n in judges))
    stats, panels, values = [], [], {}
    for name in names:
        results = [j[name] for j in samples if name in j]
        numbers = [r.value for r in results if r.value is not None]
        metric = next((r.metric for r in results if r.metric), name)
        models = sorted({m for r in results for m in ([x.model for x in r.members if x.model]
                                                     or ([r.model] if r.model else []))})
        skipped = sum(1 for r in results if not r.error and r.value is None and r.details.get("skipped"))
        stats.append(JudgeStats(name, metric, models, len(numbers), sum(1 for r in results if r.error),
                                statistics.fmean(numbers) if numbers else None, skipped))
        values[name] = {i: v for i, j in enumerate(samples) if name in j and (v := j[name].value) is not None}
        if any(r.members for r in results):
            panels.append(panel_stats(name, results))
    return JudgeReport(stats, panels, judge_correlations(values))


def panel_agreement(ratings: dict[int, dict[str, float]]) -> dict[str, Any]:
    """MTRAG's agreement, exact agreement and ordinal Krippendorff's alpha of the members, as `ragjudge
    correlate` measures annotators (`correlation.agreement`); Cohen's kappa is left to `ragjudge correlate`."""
    from ragjudge.correlation.aggregate import Scale
    from ragjudge.correlation.agreement import krippendorff_alpha, mtrag_agreement, reliability_matrix

    rated = {i: r for i, r in ratings.items() if r}
    if not rated:
        return {}
    scale = Scale.infer([v for r in rated.values() for v in r.values()])
    mtrag, exact = mtrag_agreement([[scale.position(v) for v in r.values()] for r in rated.values()])
    matrix, raters = reliability_matrix(rated)
    return {"n_items": sum(len(r) >= 2 for r in rated.values()), "n_raters": len(raters), "mtrag_agreement": mtrag,
            "exact_agreement": exact, "krippendorff_alpha": krippendorff_alpha(matrix)}


def panel_stats(name: str, results: list[Score]) -> PanelStats:
    ratings = {i: member_values(r) for i, r in enumerate(results)}
    members: dict[str, dict[str, Any]] = {}
    for r in results:
        for i, m in enumerate(r.members):
            entry = members.setdefault(_member(m, i), {"values": [], "errors": 0})
            if m.value is not None:
                entry["values"].append(m.value)
            elif m.error:
                entry["errors"] += 1
    agreement = panel_agreement(ratings)
    spreads = [max(r.values()) - min(r.values()) for r in ratings.values() if len(r) >= 2]
    return PanelStats(
        judge=name,
        members=[{"model": model, "n": len(m["values"]), "errors": m["errors"],
                  "mean": statistics.fmean(m["values"]) if m["values"] else None} for model, m in members.items()],
        agreement=agreement, mean_spread=statistics.fmean(spreads) if spreads else None,
        disagreeing=sum(s >= SPREAD_AT - 1e-9 for s in spreads))


def judge_correlations(values: dict[str, dict[int, float]]) -> dict[str, Any]:
    """Spearman's rho between every two judges over the samples both scored (None when undefined): pandas'
    pairwise-complete Spearman (its own ranking, no scipy import)."""
    import pandas as pd

    names = [n for n, v in values.items() if len(v) >= 3]
    if len(names) < 2:
        return {}
    frame = pd.DataFrame({n: pd.Series(values[n], dtype=float) for n in names})
    rho = frame.corr(method="spearman", min_periods=3)
    present = frame.notna().astype(int)
    counts = present.T.dot(present)
    return {"names": names, "matrix": [[None if pd.isna(rho.loc[a, b]) else float(rho.loc[a, b]) for b in names]
                                       for a in names],
            "n": [[int(counts.loc[a, b]) for b in names] for a in names]}

"""The whole comparison of judges with humans, as one JSON-ready report (`ragjudge correlate --format json`).

Its top-level shape is in docs/correlate.md. Beyond it: `judge_agreement` has the shape of `agreement`, for judges
with several raters (panel members); `judge_vs_judge` rows are `{a, b, n, exact_match, spearman: {value, p},
kendall, pearson}`; `idk_accuracy` and `clarification` are `idk.py`'s, per judge, the former with `underspecified_by`
(the clarification metric that scored its UNDERSPECIFIED items, None when none did).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np

from ragjudge.correlation.agreement import rater_agreement
from ragjudge.correlation.dataset import Dataset, ItemKey, MetricData
from ragjudge.correlation.idk import CLARIFICATION_METRICS, IDK_METRICS, clarification_agreement, idk_accuracy
from ragjudge.correlation.stats import MIN_ITEMS, STATS, correlate, draw_tasks, scipy_correlations


@dataclass
class CorrelateOptions:
    weighting: str = "none"
    bootstrap: int = 1000
    seed: int | None = 0
    confidence: float = 0.95
    stat: str = "spearman"
    idk_metrics: tuple[str, ...] = IDK_METRICS
    clarification_metrics: tuple[str, ...] = CLARIFICATION_METRICS
    conversational_as_unanswerable: bool = False
    filters: dict[str, Any] = field(default_factory=dict)


def _paired(a: MetricData, b: MetricData) -> tuple[list[ItemKey], np.ndarray, np.ndarray]:
    """The items both metrics rated, and each metric's values on them."""
    keys = sorted(set(a.values) & set(b.values))
    return keys, np.array([a.values[k] for k in keys]), np.array([b.values[k] for k in keys])


def judge_vs_judge(ds: Dataset) -> list[dict[str, Any]]:
    rows = []
    for a, b in combinations(ds.judges, 2):
        keys, x, y = _paired(ds.judges[a], ds.judges[b])
        row: dict[str, Any] = {"a": a, "b": b, "n": len(keys),
                               "exact_match": float(np.mean(np.isclose(x, y))) if keys else None}
        stats = scipy_correlations(x, y) if len(keys) >= MIN_ITEMS else {s: (None, None) for s in STATS}
        row.update({s: {"value": stats[s][0], "p": stats[s][1]} for s in STATS})
        rows.append(row)
    return rows


def analyze(ds: Dataset, options: CorrelateOptions,
            progress: Callable[[str, int], Callable[[int], None]] | None = None) -> dict[str, Any]:
    """Correlations (with bootstrap CIs), agreement, judge-vs-judge agreement and IDK accuracy."""
    rated = {k for m in ds.humans.values() for k in m.values}
    tasks = sorted({k.task for k in rated})
    task_index = {t: i for i, t in enumerate(tasks)}
    draws = draw_tasks(len(tasks), options.bootstrap, options.seed) if options.bootstrap > 0 and tasks else None

    pairs = [(j, h) for j in ds.judges for h in ds.humans]
    advance = (progress("bootstrap", len(pairs) * options.bootstrap) if progress and draws is not None
               else None)
    correlations = []
    for judge, human in pairs:
        keys, x, y = _paired(ds.judges[judge], ds.humans[human])
        t = np.array([task_index[k.task] for k in keys], dtype=int)
        estimates = correlate(x, y, tasks=t, task_draws=draws, weighting=options.weighting,
                              confidence=options.confidence, on_batch=advance)
        if advance and len(keys) < MIN_ITEMS:
            advance(options.bootstrap)
        correlations.append({"judge": judge, "human": human, "n": len(keys),
                             **{s: estimates[s].as_dict() for s in STATS}})

    best: dict[str, str | None] = {}
    for human in ds.humans:
        scored = [r for r in correlations if r["human"] == human and r[options.stat]["value"] is not None]
        best[human] = max(scored, key=lambda r: r[options.stat]["value"])["judge"] if scored else None

    answerability = {k: item.answerability for k, item in ds.items.items()}
    clarification = {name: clarification_agreement(metric.values, answerability) for name, metric in ds.judges.items()
                     if name in options.clarification_metrics and metric.values}
    asks_by = next(iter(clarification), None)  # the official conditioning's underspecified_eval
    idk = {name: {**idk_accuracy(metric.values, answerability,
                                 conversational_as_unanswerable=options.conversational_as_unanswerable,
                                 underspecified=ds.judges[asks_by].values if asks_by else None),
                  "underspecified_by": asks_by}
           for name, metric in ds.judges.items() if name in options.idk_metrics and metric.values}

    return {
        "n_items": len(ds.items),
        "n_rated_items": len(rated),
        "n_tasks": len(tasks),
        "models": sorted({k.model for k in rated}),
        "humans": list(ds.humans),
        "judges": list(ds.judges),
        "filters": options.filters,
        "weighting": options.weighting,
        "bootstrap": options.bootstrap,
        "seed": options.seed,
        "confidence": options.confidence,
        "stat": options.stat,
        "correlations": correlations,
        "best": best,
        "agreement": {name: rater_agreement(m.ratings, m.scale()) for name, m in ds.humans.items()},
        "judge_agreement": {name: rater_agreement(m.ratings, m.scale()) for name, m in ds.judges.items()
                            if any(len(r) >= 2 for r in m.ratings.values())},
        "judge_vs_judge": judge_vs_judge(ds),
        "idk_accuracy": idk,
        "clarification": clarification,
    }

"""Aggregates: the metrics DialSim declares (docs/benches/dialsim.md, Scoring and the summary), their breakdowns and
the per-show figures the paper's tables are compared with; shared by `--bench dialsim` and `ragjudge dialsim score`.
Rates are the mean over seeds of each seed's figure, with the sample std over seeds; `n` counts over all seeds.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ragjudge.bench.dialsim.plan import PlannedQuestion
from ragjudge.engine.bench import MetricInfo, SampleResult, failed
from ragjudge.engine.summary import Breakdown, Group, Headline, Metric, MetricCatalog, Stat, describe, stat

ASKED = "every question asked: a failed answer (LLM or judge error) counts as wrong, as in the paper"
ANSWERED = "answered questions (a failed answer is left out, not counted wrong)"
TIMED = "answers with a measured latency (not from the response cache)"

METRICS = (
    MetricInfo("accuracy", "strict: the gold option and no other (mc); exact match, else the judge (mc-nl, open); "
               "failed answers count as wrong (the paper's figure); mean over seeds", counts=ASKED),
    MetricInfo("accuracy_answered", "accuracy over the answered questions only, failed answers left out "
               "(ragjudge's second reading; equals accuracy when nothing failed)", counts=ANSWERED),
    MetricInfo("accuracy_calibrated", "ambiguous mc answers re-read as the official `calibrate` does; failed "
               "answers count as wrong", counts=ASKED),
    MetricInfo("accuracy@*s", "right and answered within N seconds", counts=TIMED),
    MetricInfo("idk_precision", "share of the 'I don't know' answers given to unanswerable questions",
               kind="rate", counts="answers that declined"),
    MetricInfo("idk_recall", "share of the unanswerable questions answered 'I don't know' (the paper's (E))",
               kind="rate", counts="unanswerable questions"),
    MetricInfo("invented_rate", "share of the unanswerable questions given a definite answer",
               higher_is_better=False, kind="rate", counts="unanswerable questions"),
    MetricInfo("latency_median", "median time from question to answer (retrieval and reply)",
               higher_is_better=False, kind="seconds", counts=TIMED),
    MetricInfo("latency_max", "longest time from question to answer", higher_is_better=False, kind="seconds",
               counts=TIMED),
    MetricInfo("ambiguous", "answers naming several options (wrong)", higher_is_better=False, kind="count"),
    MetricInfo("ambiguous_after_calibration", "answers still ambiguous after calibration", higher_is_better=False,
               kind="count"),
    MetricInfo("timed_out", "answers abandoned at -T time_limit (wrong)", higher_is_better=False, kind="count"),
    MetricInfo("declined", "answers saying 'I don't know'", higher_is_better=None, kind="count"),
    MetricInfo("latency_unknown", "answers from the response cache (no latency: not in accuracy@Ns)",
               higher_is_better=None, kind="count"),
)
"""Every metric a DialSim summary holds (`DialSimBench.metrics`)."""

CATALOG = MetricCatalog(METRICS, "dialsim")
COUNTS = ("ambiguous", "ambiguous_after_calibration", "timed_out", "declined", "latency_unknown")
BREAKDOWNS = ("seed", "show", "source", "hop", "answerability", "type")
TITLES = {"seed": "By seed", "show": "By show", "source": "By source (fan quiz, temporal knowledge graph)",
          "hop": "By hop (temporal questions)", "answerability": "By answerability", "type": "By type"}
PAPER_ACCURACY = ("accuracy", "accuracy_calibrated")
"""Counted as the paper counts: over every question asked, a failed answer wrong."""
COLUMNS = {"seed": ["accuracy", "accuracy_calibrated", "idk_recall"],
           "answerability": ["accuracy", "accuracy_calibrated", "declined"]}
DEFAULT_COLUMNS = ["accuracy", "accuracy_calibrated"]
NOTES = {"seed": "the run's figures are the means of these (std: the sample standard deviation over seeds)"}


def question_rows(results: Sequence[SampleResult[PlannedQuestion]]) -> list[dict[str, Any]]:
    rows = []
    for r in results:
        q, out, score = r.sample, r.output, r.scores.get("dialsim", {})
        judged = {} if failed(score) else score  # a failed verdict says nothing
        rows.append({
            "id": q.id, "show": q.show, "seed": q.seed, "episode": q.episode, "scene": q.scene, "date": q.date,
            "asker": q.asker, "source": q.source, "hop": q.hop, "type": q.type,
            "answerability": "answerable" if q.answerable else "unanswerable", "gold": q.gold,
            "answer": None if failed(out) else out.get("answer"), "verdict": judged.get("verdict"),
            "calibrated": judged.get("calibrated"), "correct": judged.get("value"),
            "correct_calibrated": judged.get("calibrated_value"), "declined": judged.get("declined"),
            "committed": judged.get("committed"), "latency": out.get("latency"), "cached": out.get("cached"),
            "timed_out": out.get("timed_out"), "memory_items": len(out.get("memory") or []),
            "errors": "; ".join(f"{k}: {v}" for k, v in r.errors.items()) or None})
    return rows


def _mean(values: Sequence[float]) -> float | None:
    return round(sum(values) / len(values), 6) if values else None


def group_stats(rows: Sequence[dict[str, Any]], limits: Sequence[float]) -> dict[str, Stat]:
    """Every metric over `rows` (one seed, or one breakdown group), each with the number of items it counts."""
    scored = [r for r in rows if r["correct"] is not None]
    unanswerable = [r for r in scored if r["answerability"] == "unanswerable"]
    declined = [r for r in scored if r["declined"]]
    timed = [r for r in scored if r["latency"] is not None and not r["cached"]]
    out = {"accuracy": stat(_mean([r["correct"] or 0 for r in rows]), n=len(rows)),
           "accuracy_answered": stat(_mean([r["correct"] for r in scored]), n=len(scored)),
           "accuracy_calibrated": stat(_mean([r["correct_calibrated"] or 0 for r in rows]), n=len(rows))}
    for limit in limits:
        out[f"accuracy@{limit:g}s"] = stat(_mean([int(bool(r["correct"]) and r["latency"] <= limit) for r in timed]),
                                          n=len(timed))
    out["idk_precision"] = stat(_mean([r["answerability"] == "unanswerable" for r in declined]), n=len(declined))
    out["idk_recall"] = stat(_mean([bool(r["declined"]) for r in unanswerable]), n=len(unanswerable))
    out["invented_rate"] = stat(_mean([bool(r["committed"]) for r in unanswerable]), n=len(unanswerable))
    latencies = sorted(r["latency"] for r in timed)
    out["latency_median"] = stat(latencies[len(latencies) // 2] if latencies else None, n=len(timed))
    out["latency_max"] = stat(latencies[-1] if latencies else None, n=len(timed))
    counts = {"ambiguous": sum(r["verdict"] == "ambiguous" for r in scored),
              "ambiguous_after_calibration": sum(r["calibrated"] == "ambiguous" for r in scored),
              "timed_out": sum(r["verdict"] == "timeout" for r in scored),
              "declined": sum(bool(r["declined"]) for r in scored),
              "latency_unknown": sum(1 for r in scored if r["cached"] or r["latency"] is None)}
    return out | {name: stat(count, n=len(scored)) for name, count in counts.items()}


@dataclass
class ShowFigures:
    """One show's accuracy as the paper reports it: the mean (and std) over seeds, and its groups (pooled)."""

    accuracy: float | None
    std: float | None
    n: int
    seeds: int
    groups: dict[str, float | None] = field(default_factory=dict)
    """Accuracy of the fan / temporal / one-hop / two-hop questions of the show, over all seeds."""


@dataclass
class Figures:
    metrics: dict[str, Metric]
    breakdowns: dict[str, Breakdown]
    headline: Headline | None
    details: dict[str, Any]
    shows: dict[str, ShowFigures]


def figures(rows: Sequence[dict[str, Any]], limits: Sequence[float], *, by_seed: bool = True,
            unit: str = "questions") -> Figures:
    """The metrics (mean ± std over seeds), the breakdowns and the per-show figures of `rows`."""
    seeds = sorted({r["seed"] for r in rows})
    per_seed = {s: group_stats([r for r in rows if r["seed"] == s], limits) for s in seeds}
    errors = sum(1 for r in rows if r["errors"])
    overall = group_stats(rows, limits)
    metrics: dict[str, Metric] = {}
    for name, pooled in overall.items():
        if name in COUNTS or name.startswith("latency_"):  # totals and the latencies of the whole run
            metrics[name] = CATALOG.metric(name, pooled.value, n=pooled.n, errors=errors)
            continue
        values = [m[name].value for m in per_seed.values() if m[name].value is not None]
        std = round(statistics.stdev(values), 6) if len(values) > 1 else None
        # the paper's accuracies count failed answers in n, as wrong ones: not errors left out of it
        failures = {"failed_counted_wrong": errors} if name in PAPER_ACCURACY else {"errors": errors}
        metrics[name] = CATALOG.metric(name, _mean(values), n=pooled.n, std=std, **failures)
    breakdowns: dict[str, Breakdown] = {}
    for dim in BREAKDOWNS:
        if dim == "seed" and not by_seed:
            continue
        groups: dict[str, Group] = {}
        for value in sorted({r[dim] for r in rows if r[dim] is not None}, key=lambda v: (str(type(v)), v)):
            members = [r for r in rows if r[dim] == value]
            groups[str(value)] = Group(n=len(members), metrics=per_seed[value] if dim == "seed"
                                       else group_stats(members, limits))
        if groups:
            breakdowns[dim] = Breakdown(title=TITLES[dim], label=dim, groups=groups,
                                        columns=COLUMNS.get(dim, DEFAULT_COLUMNS), note=NOTES.get(dim, ""))
    details = {"seeds": seeds, "counts": {"questions": len(rows), "scored": sum(r["correct"] is not None for r in rows),
                                         "errors": errors}}
    return Figures(metrics=metrics, breakdowns=breakdowns, headline=headline(metrics, len(seeds), unit, errors),
                   details=details, shows=show_figures(rows))


def headline(metrics: dict[str, Metric], seeds: int, unit: str, failed: int = 0) -> Headline | None:
    """`accuracy 0.514 over 43 questions (± 0.122 over 3 seeds)`: the strict accuracy, as the paper reports it
    (failed answers counted wrong; when some failed, the accuracy over the answered ones follows)."""
    main = metrics.get("accuracy")
    if main is None or main.value is None:
        return None
    text = describe("accuracy", main, unit)
    if main.std is not None:
        text += f" (± {main.std:.3f} over {seeds} seeds)"
    answered = metrics.get("accuracy_answered")
    if failed:
        text += f"; {failed} failed answer(s) counted wrong, as in the paper"
        if answered is not None and answered.value is not None:
            text += f" (accuracy_answered {answered.value:.3f} over the {answered.n} answered)"
    return Headline(metric="accuracy", value=main.value, text=text)


def show_figures(rows: Sequence[dict[str, Any]]) -> dict[str, ShowFigures]:
    out = {}
    for show in sorted({r["show"] for r in rows}):
        mine = [r for r in rows if r["show"] == show]  # failed answers counted wrong, as the paper counts them
        by_seed = [_mean([r["correct"] or 0 for r in mine if r["seed"] == s]) for s in sorted({r["seed"] for r in mine})]
        values = [v for v in by_seed if v is not None]
        groups = {"overall": _mean([r["correct"] or 0 for r in mine])}
        for key in ("source", "hop"):
            for value in sorted({r[key] for r in mine if r[key] is not None}):
                groups[value] = _mean([r["correct"] or 0 for r in mine if r[key] == value])
        out[show] = ShowFigures(accuracy=_mean(values), std=round(statistics.stdev(values), 6) if len(values) > 1
                                else None, n=len(mine), seeds=len(values), groups=groups)
    return out

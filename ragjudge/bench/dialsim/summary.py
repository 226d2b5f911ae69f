"""Aggregates: accuracy (mean ± std over seeds), breakdowns, IDK precision/recall, time limits, counts.

Accuracy is over answered questions: an answer that failed (LLM error, judge error) is an error, counted
and reported, never a wrong answer; a timed-out answer is wrong, as officially. `std` is the sample
standard deviation over seeds (none for one seed). Accuracy at a time limit L counts an answer as right
only if it was right and came within L seconds; answers whose latency is unknown (replies from the
response cache) are left out of those figures.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from ragjudge.bench.base import SampleResult, failed
from ragjudge.bench.dialsim.plan import PlannedQuestion

BREAKDOWNS = ("show", "source", "hop", "answerability", "type")


def question_rows(results: Sequence[SampleResult[PlannedQuestion]]) -> list[dict[str, Any]]:
    rows = []
    for r in results:
        q, out, score = r.sample, r.output, r.scores.get("dialsim", {})
        error = "; ".join(f"{k}: {v}" for k, v in r.errors.items()) or None
        row: dict[str, Any] = {
            "id": q.id, "show": q.show, "seed": q.seed, "episode": q.episode, "scene": q.scene, "date": q.date,
            "asker": q.asker, "source": q.source, "hop": q.hop, "type": q.type,
            "answerability": "answerable" if q.answerable else "unanswerable", "gold": q.gold,
            "answer": None if failed(out) else out.get("answer"),
            "verdict": None if failed(score) else score.get("verdict"),
            "calibrated": None if failed(score) else score.get("calibrated"),
            "correct": None if failed(score) else score.get("value"),
            "correct_calibrated": None if failed(score) else score.get("calibrated_value"),
            "declined": None if failed(score) else score.get("declined"),
            "committed": None if failed(score) else score.get("committed"),
            "latency": out.get("latency"), "cached": out.get("cached"), "timed_out": out.get("timed_out"),
            "memory_items": len(out.get("memory") or []), "errors": error,
        }
        rows.append(row)
    return rows


def _mean(values: Sequence[float]) -> float | None:
    return round(sum(values) / len(values), 6) if values else None


def _ratio(hits: int, total: int) -> float | None:
    return round(hits / total, 6) if total else None


def seed_metrics(rows: Sequence[dict[str, Any]], limits: Sequence[float]) -> dict[str, float | None]:
    scored = [r for r in rows if r["correct"] is not None]
    unanswerable = [r for r in scored if r["answerability"] == "unanswerable"]
    declined = [r for r in scored if r["declined"]]
    metrics: dict[str, float | None] = {
        "accuracy": _mean([r["correct"] for r in scored]),
        "accuracy_calibrated": _mean([r["correct_calibrated"] for r in scored]),
    }
    timed = [r for r in scored if r["latency"] is not None and not r["cached"]]
    for limit in limits:
        metrics[f"accuracy@{limit:g}s"] = _mean([int(bool(r["correct"]) and r["latency"] <= limit) for r in timed])
    metrics["idk_precision"] = _ratio(sum(r["answerability"] == "unanswerable" for r in declined), len(declined))
    metrics["idk_recall"] = _ratio(sum(bool(r["declined"]) for r in unanswerable), len(unanswerable))
    metrics["invented_rate"] = _ratio(sum(bool(r["committed"]) for r in unanswerable), len(unanswerable))
    return metrics


def summarize_rows(rows: list[dict[str, Any]], limits: Sequence[float]) -> dict[str, Any]:
    seeds = sorted({r["seed"] for r in rows})
    per_seed = {s: seed_metrics([r for r in rows if r["seed"] == s], limits) for s in seeds}
    scored = [r for r in rows if r["correct"] is not None]
    errors = sum(1 for r in rows if r["errors"])
    timed = sum(1 for r in scored if r["latency"] is not None and not r["cached"])
    metrics: dict[str, dict[str, Any]] = {}
    for name in next(iter(per_seed.values()), {}):
        values = [m[name] for m in per_seed.values() if m[name] is not None]
        metrics[name] = {"mean": _mean(values), "std": round(statistics.stdev(values), 6) if len(values) > 1 else None,
                         "n": timed if name.startswith("accuracy@") else len(scored), "errors": errors}
    breakdowns: dict[str, dict[str, dict[str, Any]]] = {}
    for dim in BREAKDOWNS:
        groups: dict[str, dict[str, Any]] = {}
        for value in sorted({r[dim] for r in scored if r[dim] is not None}, key=str):
            group = [r for r in scored if r[dim] == value]
            groups[str(value)] = {"n": len(group), "accuracy": _mean([r["correct"] for r in group]),
                                  "accuracy_calibrated": _mean([r["correct_calibrated"] for r in group])}
        if groups:
            breakdowns[dim] = groups
    counts = {
        "questions": len(rows), "scored": len(scored), "errors": errors,
        "ambiguous": sum(r["verdict"] == "ambiguous" for r in scored),
        "ambiguous_after_calibration": sum(r["calibrated"] == "ambiguous" for r in scored),
        "timed_out": sum(r["verdict"] == "timeout" for r in scored),
        "declined": sum(bool(r["declined"]) for r in scored),
        "latency_unknown": sum(1 for r in scored if r["cached"] or r["latency"] is None),
    }
    latencies = sorted(r["latency"] for r in scored if r["latency"] is not None and not r["cached"])
    table_rows = [[s, sum(1 for r in rows if r["seed"] == s and r["correct"] is not None), m["accuracy"],
                   m["accuracy_calibrated"]] for s, m in per_seed.items()]
    summary: dict[str, Any] = {
        "n_samples": len(rows), "seeds": seeds, "metrics": metrics, "breakdowns": breakdowns, "counts": counts,
        "per_seed": {str(s): m for s, m in per_seed.items()},
        "latency": {"median": latencies[len(latencies) // 2], "max": latencies[-1]} if latencies else None,
        "tables": [{"title": "By seed", "columns": ["seed", "n", "accuracy", "accuracy_calibrated"],
                    "rows": table_rows},
                   {"title": "Answers", "columns": ["count", "n"], "rows": [[k, v] for k, v in counts.items()]}],
    }
    return summary

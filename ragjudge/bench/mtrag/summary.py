"""The tidy per-task table and the summary: overall means and the paper's breakdowns."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from ragjudge.bench.mtrag.assemble import TaskOutcome

# Breakdown dimensions (MTRAG Table 5 / Table 16 / Figure 3) → tidy-table column.
BREAKDOWNS = {
    "answerability": "answerability",
    "turn": "turn_position",
    "domain": "domain",
    "question_type": "question_type",
    "multi_turn": "multi_turn",
}


def tidy_table(outcomes: Sequence[TaskOutcome], metric_names: Sequence[str]) -> pd.DataFrame:
    """One row per task: identifiers, enrichments, the prediction, one column per metric, errors."""
    rows: list[dict[str, Any]] = []
    for o in outcomes:
        t = o.task
        row: dict[str, Any] = {
            "task_id": t.task_id,
            "conversation_id": t.conversation_id,
            "turn": t.turn,
            "turn_position": "first" if t.turn == 1 else "later",
            "collection": t.collection,
            "domain": t.domain,
            "answerability": t.answerability,
            "question_type": "|".join(t.question_types) or None,
            "multi_turn": t.multi_turn,
            "prediction": o.prediction.text,
        }
        for name in metric_names:
            row[name] = o.metrics.get(name)
        row["errors"] = "; ".join(f"{k}: {v}" for k, v in o.errors.items()) or None
        rows.append(row)
    frame = pd.DataFrame(rows)
    for name in metric_names:
        frame[name] = pd.to_numeric(frame[name], errors="coerce")
    return frame


def summarize(outcomes: Sequence[TaskOutcome], metric_names: Sequence[str],
              error_counts: dict[str, int]) -> dict[str, Any]:
    """`{"n_tasks", "metrics": {name: {"mean", "n", "errors"}}, "breakdowns": {dim: {value: {metric: mean}}}}`."""
    frame = tidy_table(outcomes, metric_names)
    metrics: dict[str, dict[str, Any]] = {}
    for name in metric_names:
        column = frame[name].dropna() if name in frame else pd.Series(dtype=float)
        metrics[name] = {"mean": _mean(column), "n": int(column.size), "errors": error_counts.get(name, 0)}
    breakdowns: dict[str, dict[str, dict[str, Any]]] = {}
    for dimension, column in BREAKDOWNS.items():
        data = frame
        if column == "question_type":  # multi-label: a task counts once under each of its types
            data = frame.assign(question_type=frame["question_type"].str.split("|")).explode("question_type")
        data = data[data[column].notna()]
        if data.empty:
            continue
        groups: dict[str, dict[str, Any]] = {}
        for value, group in data.groupby(column, sort=True):
            stats: dict[str, Any] = {"n_tasks": int(len(group))}
            for name in metric_names:
                stats[name] = _mean(group[name].dropna())
            groups[str(value)] = stats
        breakdowns[dimension] = groups
    return {"n_tasks": len(outcomes), "metrics": metrics, "breakdowns": breakdowns}


def _mean(series: pd.Series) -> float | None:
    return None if series.empty else round(float(series.mean()), 6)

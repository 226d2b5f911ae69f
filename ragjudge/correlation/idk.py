"""How often an "I don't know" judge agrees with the answerability labels.

Correct means the judge says the response declined (IDK yes = 1) exactly when the task is unanswerable
(the definition of `ragjudge.bench.mtrag.conditioning.answerability_correct`, which the runner uses for
`answerability_acc`): partial (0.5) and no (0) count as answering. Conversational and underspecified
turns have no right answer here and are counted but not scored, unless conversational turns are asked
to be treated as unanswerable.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

from ragjudge.bench.mtrag.conditioning import answerability_correct

IDK_METRICS = ("idk_eval", "idk_lexical")
"""Metric names of ragjudge's IDK judges (`idk`, `idk_lexical`)."""

_LABELS = {1.0: "yes", 0.5: "partial", 0.0: "no"}


def idk_label(value: float) -> str:
    return _LABELS.get(float(value), f"{value:g}")


def idk_accuracy(values: Mapping[Hashable, float], answerability: Mapping[Hashable, str | None], *,
                 conversational_as_unanswerable: bool = False) -> dict[str, Any]:
    """{"n", "accuracy", "by_answerability": {label: {"n", "scored", "accuracy", "yes", "partial", "no"}}}."""
    by_label: dict[str, dict[str, Any]] = {}
    correct_total = scored_total = 0
    for item, value in values.items():
        label = answerability.get(item) or "UNKNOWN"
        group = by_label.setdefault(label, {"n": 0, "scored": 0, "correct": 0, "yes": 0, "partial": 0, "no": 0})
        group["n"] += 1
        verdict = idk_label(value)
        group[verdict] = group.get(verdict, 0) + 1
        correct = answerability_correct(value, answerability.get(item),
                                        conversational_as_unanswerable=conversational_as_unanswerable)
        if correct is not None:
            group["scored"] += 1
            group["correct"] += int(correct == 1.0)
            scored_total += 1
            correct_total += int(correct == 1.0)
    for group in by_label.values():
        correct = group.pop("correct")
        group["accuracy"] = correct / group["scored"] if group["scored"] else None
    return {"n": scored_total, "accuracy": correct_total / scored_total if scored_total else None,
            "by_answerability": dict(sorted(by_label.items()))}

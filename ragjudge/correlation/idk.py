"""How often an "I don't know" judge agrees with the answerability labels.

Correct means the judge says the response declined (IDK yes = 1) exactly when the task is unanswerable
(`ragjudge.judges.conditioning.answerability_correct`, the runner's `answerability_acc`): partial (0.5) and no (0)
count as answering. Conversational turns are counted but not scored, unless treated as unanswerable.
UNDERSPECIFIED turns (MTRAG-UN) are scored as MTRAG-UN's official conditioning scores them
(`condition_underspecified`): right when the response asks for clarification (the clarification judge's
`underspecified_eval` == 1) whatever the IDK judge says; counted but not scored without that judge.
`clarification_agreement` measures a clarification judge against the UNDERSPECIFIED class.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

from ragjudge.judges.conditioning import answerability_correct, condition_underspecified

IDK_METRICS = ("idk_eval", "idk_lexical")
"""Metric names of ragjudge's IDK judges (`idk`, `idk_lexical`)."""
CLARIFICATION_METRICS = ("underspecified_eval",)
"""Metric names of ragjudge's clarification judges (`underspecified`, `underspecified_lexical` both write it)."""
UNDERSPECIFIED = "UNDERSPECIFIED"

_LABELS = {1.0: "yes", 0.5: "partial", 0.0: "no"}


def idk_label(value: float) -> str:
    return _LABELS.get(float(value), f"{value:g}")


def idk_accuracy(values: Mapping[Hashable, float], answerability: Mapping[Hashable, str | None], *,
                 conversational_as_unanswerable: bool = False,
                 underspecified: Mapping[Hashable, float] | None = None) -> dict[str, Any]:
    """{"n", "accuracy", "by_answerability": {label: {"n", "scored", "accuracy", "yes", "partial", "no"}}}.
    `underspecified`: the clarification judge's values, which score the UNDERSPECIFIED items (module doc)."""
    by_label: dict[str, dict[str, Any]] = {}
    correct_total = scored_total = 0
    for item, value in values.items():
        label = answerability.get(item) or "UNKNOWN"
        group = by_label.setdefault(label, {"n": 0, "scored": 0, "correct": 0, "yes": 0, "partial": 0, "no": 0})
        group["n"] += 1
        verdict = idk_label(value)
        group[verdict] = group.get(verdict, 0) + 1
        if label == UNDERSPECIFIED:
            asked = underspecified.get(item) if underspecified is not None else None
            correct = None if asked is None else condition_underspecified(None, value, asked, UNDERSPECIFIED)
        else:
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


def clarification_agreement(values: Mapping[Hashable, float], answerability: Mapping[Hashable, str | None]
                            ) -> dict[str, Any]:
    """A clarification judge against the UNDERSPECIFIED class, over the items with an answerability label:
    {"n", "agreement", "precision", "recall", "tp", "fp", "fn", "tn", "n_unlabelled",
     "by_answerability": {label: {"n", "asks", "share"}}}. The judge says "asks" when its value is 1 (the official
    rule: a reply that is neither yes nor no is 0.5 there, an error in ragjudge); precision and recall are those of
    "asks" for UNDERSPECIFIED; None where undefined (nothing asked, no UNDERSPECIFIED item)."""
    counts = {"tp": 0, "fp": 0, "fn": 0, "tn": 0}
    by_label: dict[str, dict[str, Any]] = {}
    unlabelled = 0
    for item, value in values.items():
        label = answerability.get(item)
        if not label:
            unlabelled += 1
            continue
        asks, positive = value == 1, label == UNDERSPECIFIED
        counts[("t" if asks == positive else "f") + ("p" if asks else "n")] += 1
        group = by_label.setdefault(label, {"n": 0, "asks": 0})
        group["n"] += 1
        group["asks"] += int(asks)
    for group in by_label.values():
        group["share"] = group["asks"] / group["n"]
    n = sum(counts.values())
    tp, fp, fn = counts["tp"], counts["fp"], counts["fn"]
    return {"n": n, "agreement": (tp + counts["tn"]) / n if n else None,
            "precision": tp / (tp + fp) if tp + fp else None, "recall": tp / (tp + fn) if tp + fn else None,
            **counts, "n_unlabelled": unlabelled, "by_answerability": dict(sorted(by_label.items()))}

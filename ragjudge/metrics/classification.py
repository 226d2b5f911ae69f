"""Classification metrics as small pure functions over gold and predicted labels: accuracy, per-label precision,
recall and F1, macro-F1, and precision/recall/F1 from counts. A metric with nothing to average over is None ("not
measured"), never 0; a per-label figure with no predictions (or no gold) of that label is 0, as scikit-learn's
`zero_division=0`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any


def ratio(num: float, den: float) -> float | None:
    return num / den if den else None


def f1_of(precision: float | None, recall: float | None) -> float | None:
    if precision is None or recall is None:
        return None
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def prf(true_positives: int, predicted: int, gold: int) -> dict[str, float | None]:
    """Precision, recall and F1 from counts (None where a denominator is 0)."""
    precision, recall = ratio(true_positives, predicted), ratio(true_positives, gold)
    return {"precision": precision, "recall": recall, "f1": f1_of(precision, recall)}


def accuracy(gold: Sequence[Any], pred: Sequence[Any]) -> float | None:
    if len(gold) != len(pred):
        raise ValueError("gold and predictions differ in length")
    return ratio(sum(g == p for g, p in zip(gold, pred)), len(gold))


def per_label(gold: Sequence[str], pred: Sequence[str], labels: Iterable[str]) -> dict[str, dict[str, float]]:
    """Precision, recall, F1 and support per label (0 where undefined, as scikit-learn's zero_division=0)."""
    out = {}
    for label in labels:
        tp = sum(g == label and p == label for g, p in zip(gold, pred))
        n_gold = sum(g == label for g in gold)
        precision, recall = ratio(tp, sum(p == label for p in pred)) or 0.0, ratio(tp, n_gold) or 0.0
        out[label] = {"precision": precision, "recall": recall, "f1": f1_of(precision, recall), "support": n_gold}
    return out


def macro_f1(gold: Sequence[str], pred: Sequence[str], labels: Sequence[str] | None = None) -> float | None:
    """Mean F1 over `labels` (default: the gold labels present, so a never-needed class is not averaged in and an
    answer outside the classes only costs recall): scikit-learn's `f1_score(average="macro", zero_division=0)`."""
    labels = sorted(set(gold)) if labels is None else list(labels)
    if not labels:
        return None
    scores = per_label(gold, pred, labels)
    return sum(s["f1"] for s in scores.values()) / len(labels)

"""How a judge agrees with a person's labels, per metric, each figure with a seeded bootstrap interval; the figures
are described in docs/trust.md. Intervals resample samples with replacement (`metrics.bootstrap.draw_counts`, one
row of draw counts per resample, so every figure is computed for all resamples at once) and take percentiles.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ragjudge.correlation.agreement import cohen_kappa
from ragjudge.correlation.stats import correlate, finite
from ragjudge.metrics.bootstrap import draw_counts, percentile_interval

FOLDS = 5


def _interval(values: np.ndarray, confidence: float) -> tuple[float | None, float | None]:
    return percentile_interval(values, confidence) or (None, None)


def binary_rows(judge: np.ndarray, human: np.ndarray, counts: np.ndarray) -> dict[str, np.ndarray]:
    """Balanced accuracy, κ, TPR and FPR for each row of draw counts (resamples × samples)."""
    j, h = judge.astype(float), human.astype(float)
    tp, fp = counts @ (j * h), counts @ (j * (1 - h))
    fn, tn = counts @ ((1 - j) * h), counts @ ((1 - j) * (1 - h))
    total = tp + fp + fn + tn
    with np.errstate(divide="ignore", invalid="ignore"):
        tpr, fpr = tp / (tp + fn), fp / (fp + tn)
        observed = (tp + tn) / total
        chance = ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)) / total ** 2
        kappa = (observed - chance) / (1 - chance)
    return {"balanced_accuracy": (tpr + 1 - fpr) / 2, "kappa": kappa, "tpr": tpr, "fpr": fpr}


def best_threshold(scores: np.ndarray, human: np.ndarray) -> float:
    """The threshold (pass when score >= it) with the highest balanced accuracy on these samples; the lowest such
    score on a tie. Candidates are the distinct scores."""
    candidates = np.unique(scores)
    decisions = scores[None, :] >= candidates[:, None]  # (candidates, samples)
    h = human.astype(bool)
    with np.errstate(divide="ignore", invalid="ignore"):
        tpr = (decisions & h).sum(axis=1) / max(h.sum(), 1)
        tnr = (~decisions & ~h).sum(axis=1) / max((~h).sum(), 1)
    return float(candidates[int(np.argmax((tpr + tnr) / 2))])


def cross_validated_decisions(scores: np.ndarray, human: np.ndarray, *, folds: int = FOLDS, seed: int = 0
                              ) -> tuple[np.ndarray, list[float]]:
    """(each sample's pass decision by a threshold chosen on the other folds, the folds' thresholds)."""
    n = len(scores)
    k = max(2, min(folds, n))
    fold_of = np.random.default_rng(seed).permutation(n) % k
    decisions = np.zeros(n, dtype=bool)
    thresholds = []
    for fold in range(k):
        held = fold_of == fold
        threshold = best_threshold(scores[~held], human[~held])
        thresholds.append(threshold)
        decisions[held] = scores[held] >= threshold
    return decisions, thresholds


def is_binary(values: np.ndarray) -> bool:
    return bool(np.isin(values, (0.0, 1.0)).all())


def pass_fail_agreement(judge: np.ndarray, human: np.ndarray, *, resamples: int = 1000, seed: int = 0,
                        confidence: float = 0.95) -> dict[str, Any]:
    judge, human = np.asarray(judge, float), np.asarray(human, float).astype(bool)
    out: dict[str, Any] = {"kind": "pass/fail", "n": int(len(judge))}
    if is_binary(judge):
        decisions = judge.astype(bool)
        out["threshold"] = None
    else:
        decisions, thresholds = cross_validated_decisions(judge, human, seed=seed)
        out["threshold"] = float(np.median(thresholds))
        out["threshold_folds"] = thresholds
    point = binary_rows(decisions, human, np.ones((1, len(judge))))
    draws = draw_counts(len(judge), resamples, seed) if resamples else np.zeros((0, len(judge)))
    rows = binary_rows(decisions, human, draws)
    for name in ("balanced_accuracy", "kappa", "tpr", "fpr"):
        value = cohen_kappa(list(decisions.astype(int)), list(human.astype(int))) if name == "kappa" \
            else finite(point[name][0])
        low, high = _interval(rows[name], confidence)
        out[name] = {"value": value, "ci_low": low, "ci_high": high}
    out["confusion"] = {"tp": int(np.sum(decisions & human)), "fp": int(np.sum(decisions & ~human)),
                        "fn": int(np.sum(~decisions & human)), "tn": int(np.sum(~decisions & ~human))}
    out["decisions"] = decisions
    return out


def numeric_agreement(judge: np.ndarray, human: np.ndarray, *, resamples: int = 1000, seed: int = 0,
                      confidence: float = 0.95) -> dict[str, Any]:
    judge, human = np.asarray(judge, float), np.asarray(human, float)
    n = len(judge)
    draws = draw_counts(n, resamples, seed) if resamples else None
    estimates = correlate(judge, human, tasks=np.arange(n), task_draws=draws, confidence=confidence)
    out: dict[str, Any] = {"kind": "number", "n": int(n)}
    for name in ("spearman", "kendall"):
        out[name] = {k: v for k, v in estimates[name].as_dict().items() if k != "p"}
    errors = np.abs(judge - human)
    low, high = _interval(draws @ errors / n, confidence) if draws is not None else (None, None)
    out["mae"] = {"value": float(errors.mean()), "ci_low": low, "ci_high": high}
    return out


def agreement(judge: np.ndarray, human: np.ndarray, *, pass_fail: bool, resamples: int = 1000, seed: int = 0,
              confidence: float = 0.95) -> dict[str, Any]:
    """Every agreement figure of one judge against one metric's labels (same samples, same order)."""
    figures = pass_fail_agreement if pass_fail else numeric_agreement
    return figures(judge, human, resamples=resamples, seed=seed, confidence=confidence)

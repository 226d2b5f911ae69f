"""Seeded bootstrap intervals over samples: the "judge only" interval of a mean and of a paired difference.

Resamples draw samples with replacement (as many as there are); the interval is the percentile interval of the
resampled means. A resample is a row of draw counts, so B resamples are one (B, n) @ (n,) product. The same seed
gives the same interval on every machine (numpy's PCG64).
"""

from __future__ import annotations

import numpy as np

from ragjudge.correlation.stats import draw_tasks as draw_counts  # (resamples, n) draw counts
from ragjudge.trust.intervals import Interval

RESAMPLES = 1000
SEED = 0


def bootstrap_means(values: np.ndarray, *, resamples: int = RESAMPLES, seed: int = SEED) -> np.ndarray:
    values = np.asarray(values, dtype=float)
    return draw_counts(len(values), resamples, seed) @ values / len(values)


def percentile_interval(stats: np.ndarray, confidence: float) -> tuple[float, float]:
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(stats[np.isfinite(stats)], [tail, 100 - tail])
    return float(low), float(high)


def judge_only_mean(values: np.ndarray, *, confidence: float = 0.95, resamples: int = RESAMPLES,
                    seed: int = SEED) -> Interval | None:
    """The mean with its bootstrap interval; None under two values (no interval to speak of)."""
    values = np.asarray(values, dtype=float)
    if values.size < 2:
        return None
    low, high = percentile_interval(bootstrap_means(values, resamples=resamples, seed=seed), confidence)
    return Interval(float(values.mean()), low, high, "judge only", confidence, n_samples=int(values.size))


def judge_only_difference(a: np.ndarray, b: np.ndarray, *, confidence: float = 0.95, resamples: int = RESAMPLES,
                          seed: int = SEED) -> Interval | None:
    """B − A on the same samples (paired): the bootstrap of the per-sample differences."""
    return judge_only_mean(np.asarray(b, float) - np.asarray(a, float), confidence=confidence,
                           resamples=resamples, seed=seed)

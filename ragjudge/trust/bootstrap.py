"""Seeded bootstrap intervals over samples: the "judge only" interval of a mean and of a paired difference, the
percentile interval of `ragjudge.metrics.bootstrap` (the same interval every summary's `ci` holds).
"""

from __future__ import annotations

import numpy as np

from ragjudge.metrics.bootstrap import RESAMPLES, SEED, mean_interval
from ragjudge.trust.intervals import Interval


def judge_only_mean(values: np.ndarray, *, confidence: float = 0.95, resamples: int = RESAMPLES,
                    seed: int = SEED) -> Interval | None:
    """The mean with its bootstrap interval; None under two values (no interval to speak of)."""
    values = np.asarray(values, dtype=float)
    bounds = mean_interval(values, confidence=confidence, resamples=resamples, seed=seed)
    if bounds is None:
        return None
    return Interval(float(values.mean()), bounds[0], bounds[1], "judge only", confidence,
                    n_samples=int(values.size))


def judge_only_difference(a: np.ndarray, b: np.ndarray, *, confidence: float = 0.95, resamples: int = RESAMPLES,
                          seed: int = SEED) -> Interval | None:
    """B − A on the same samples (paired): the bootstrap of the per-sample differences."""
    return judge_only_mean(np.asarray(b, float) - np.asarray(a, float), confidence=confidence,
                           resamples=resamples, seed=seed)

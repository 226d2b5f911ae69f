"""Seeded bootstrap over samples: draw counts for many resamples at once, and a mean's percentile interval.

A resample is a row of n indices drawn with replacement (`resampled_means`, in blocks of rows), or, for statistics
that weigh items, a row of draw counts (`draw_counts`). numpy's PCG64 with a fixed seed gives the same interval on
every machine. Used by every summary's "judge only" interval, by `ragjudge.trust` and by `correlation.stats`.
"""

from __future__ import annotations

import numpy as np

RESAMPLES = 1000
SEED = 0
CONFIDENCE = 0.95
_BLOCK = 1_000_000


def draw_counts(n: int, resamples: int, seed: int | None) -> np.ndarray:
    """(resamples, n): how many times each of n items is drawn in each resample of n draws with replacement."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n, size=(resamples, n))
    counts = np.zeros((resamples, n))
    np.add.at(counts, (np.repeat(np.arange(resamples), n), draws.ravel()), 1.0)
    return counts


def percentile_interval(stats: np.ndarray, confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    """The central `confidence` share of the finite statistics; None under two of them."""
    stats = np.asarray(stats, dtype=float)
    stats = stats[np.isfinite(stats)]
    if stats.size < 2:
        return None
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(stats, [tail, 100 - tail])
    return float(low), float(high)


def resampled_means(values: np.ndarray, *, resamples: int = RESAMPLES, seed: int = SEED) -> np.ndarray:
    """The mean of each of `resamples` resamples of `values` (n draws with replacement each). The draws are made a
    block of rows at a time (at most ~1M indices held), the same stream as one (resamples, n) draw, so a run of
    100,000 samples needs megabytes, not gigabytes."""
    values = np.asarray(values, dtype=float)
    n = values.size
    rng = np.random.default_rng(seed)
    rows = max(1, _BLOCK // max(n, 1))
    out = np.empty(resamples)
    for start in range(0, resamples, rows):
        stop = min(resamples, start + rows)
        out[start:stop] = values[rng.integers(0, n, size=(stop - start, n))].mean(axis=1)
    return out


def mean_interval(values: np.ndarray, *, confidence: float = CONFIDENCE, resamples: int = RESAMPLES,
                  seed: int = SEED) -> tuple[float, float] | None:
    """The percentile bootstrap interval of the mean of `values`; None under two values."""
    values = np.asarray(values, dtype=float)
    if values.size < 2:
        return None
    return percentile_interval(resampled_means(values, resamples=resamples, seed=seed), confidence)

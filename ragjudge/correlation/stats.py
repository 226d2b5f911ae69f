"""Correlation of a judge with a human dimension: Spearman, Kendall tau-b, Pearson; weights; bootstrap.
Unweighted point estimates and p-values are scipy's (`spearmanr`, `kendalltau` (tau-b), `pearsonr`).

Class-imbalance weighting (`inverse-frequency`, as MTRAG weighted its Spearman correlations): item i
gets weight w_i = 1 / #{items whose human score equals item i's}, so every human score value carries
the same total weight. With weights:
- weighted Pearson  r_w = Σ w (x - x̄_w)(y - ȳ_w) / sqrt(Σ w (x - x̄_w)² · Σ w (y - ȳ_w)²),  x̄_w = Σ w x / Σ w;
- weighted Spearman ρ_w = r_w of the ordinary mid-ranks of x and of y;
- weighted Kendall  τ_w = Σ_{i<j} w_i w_j s^x_ij s^y_ij / sqrt(Σ_{i<j, x_i≠x_j} w_i w_j · Σ_{i<j, y_i≠y_j} w_i w_j),
  s^x_ij = sign(x_i - x_j): tau-b with every pair weighted by w_i w_j (equal weights give tau-b exactly).
Weighted p-values use the effective sample size n_eff = (Σw)² / Σw² in the usual approximations (t with
n_eff - 2 degrees of freedom for r and ρ; z = 3τ·sqrt(n_eff(n_eff-1)) / sqrt(2(2·n_eff+5)) for τ).

Bootstrap intervals resample *tasks* (docs/correlate.md), each resample held as per-item draw counts so a whole
batch is computed with array operations: ranks are mid-ranks of the expanded resample and weights are recomputed
inside each resample, equal to scipy's on the materialised resample (see the tests).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np
from scipy import stats as sps

from ragjudge.metrics.bootstrap import draw_counts, percentile_interval

STATS = ("spearman", "kendall", "pearson")
WEIGHTINGS = ("none", "inverse-frequency")
MIN_ITEMS = 3
_KENDALL_BLOCK = 2_000_000  # elements of the pairwise sign matrix held at once
_BATCH = 200  # resamples computed together


@dataclass
class Estimate:
    value: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    p: float | None = None

    def as_dict(self) -> dict[str, float | None]:
        return asdict(self)


def finite(value: float | None) -> float | None:
    """The value as a float, None when it is missing, NaN or infinite (JSON has neither)."""
    return None if value is None or not math.isfinite(value) else float(value)


def inverse_frequency_weights(classes: np.ndarray) -> np.ndarray:
    """1 / (number of items with the same human score), per item."""
    _, inverse, counts = np.unique(np.asarray(classes), return_inverse=True, return_counts=True)
    return 1.0 / counts[inverse]


def item_weights(human: np.ndarray, weighting: str) -> np.ndarray | None:
    if weighting == "none":
        return None
    if weighting == "inverse-frequency":
        return inverse_frequency_weights(human)
    raise ValueError(f"unknown weighting {weighting!r} (choose from {', '.join(WEIGHTINGS)})")


# --------------------------------------------------------------------------- row-wise weighted statistics
# Each function takes values of shape (n,) or (B, n) and weights of shape (B, n): one row per resample.


def _pearson_rows(a: np.ndarray, b: np.ndarray, v: np.ndarray) -> np.ndarray:
    a = np.broadcast_to(a, v.shape)
    b = np.broadcast_to(b, v.shape)
    total = v.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        da = a - (v * a).sum(axis=1, keepdims=True) / total
        db = b - (v * b).sum(axis=1, keepdims=True) / total
        cov = (v * da * db).sum(axis=1)
        var_a = (v * da * da).sum(axis=1)
        var_b = (v * db * db).sum(axis=1)
        # Variances that are zero up to rounding mean a constant vector: the correlation is undefined.
        tiny_a = var_a <= 1e-12 * np.maximum((v * a * a).sum(axis=1), 1e-300)
        tiny_b = var_b <= 1e-12 * np.maximum((v * b * b).sum(axis=1), 1e-300)
        r = cov / np.sqrt(var_a * var_b)
    r[tiny_a | tiny_b] = np.nan
    return np.clip(r, -1.0, 1.0)


def _tie_groups(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sort order, start of each run of equal values in sorted order, and each item's run index."""
    order = np.argsort(x, kind="stable")
    xs = x[order]
    new = np.empty(len(xs), dtype=bool)
    new[:1] = True
    new[1:] = xs[1:] != xs[:-1]
    starts = np.flatnonzero(new)
    group_sorted = np.cumsum(new) - 1
    group = np.empty(len(x), dtype=np.intp)
    group[order] = group_sorted
    return order, starts, group


def _ranks_rows(x: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Mid-ranks of x in each resample, item i appearing m[b, i] times (scipy's rankdata on the expansion)."""
    order, starts, group = _tie_groups(x)
    counts = np.add.reduceat(m[:, order], starts, axis=1)  # (B, groups): how many drawn per tied value
    below = np.cumsum(counts, axis=1) - counts
    return (below + (counts + 1.0) / 2.0)[:, group]


def _tied_pair_weight(x: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Σ over ordered pairs (i, j), i = j included, with x_i == x_j, of v_i v_j."""
    order, starts, _ = _tie_groups(x)
    sums = np.add.reduceat(v[:, order], starts, axis=1)
    return (sums * sums).sum(axis=1)


def _kendall_rows(x: np.ndarray, y: np.ndarray, v: np.ndarray) -> np.ndarray:
    n = len(x)
    block = max(1, _KENDALL_BLOCK // max(n, 1))
    numerator = np.zeros(v.shape[0])
    for start in range(0, n, block):
        stop = min(n, start + block)
        s = np.sign(x[:, None] - x[None, start:stop]) * np.sign(y[:, None] - y[None, start:stop])
        numerator += ((v @ s) * v[:, start:stop]).sum(axis=1)
    total = v.sum(axis=1) ** 2
    untied_x = total - _tied_pair_weight(x, v)
    untied_y = total - _tied_pair_weight(y, v)
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = numerator / np.sqrt(untied_x * untied_y)
    tau[(untied_x <= 1e-12 * total) | (untied_y <= 1e-12 * total)] = np.nan
    return np.clip(tau, -1.0, 1.0)


def _all_rows(x: np.ndarray, y: np.ndarray, m: np.ndarray, weights: Callable[[np.ndarray], np.ndarray] | None
              ) -> dict[str, np.ndarray]:
    v = m if weights is None else weights(m)
    return {
        "spearman": _pearson_rows(_ranks_rows(x, m), _ranks_rows(y, m), v),
        "kendall": _kendall_rows(x, y, v),
        "pearson": _pearson_rows(x, y, v),
    }


# --------------------------------------------------------------------------- point estimates


def _approx_p(stat: str, value: float | None, w: np.ndarray) -> float | None:
    if value is None:
        return None
    n_eff = w.sum() ** 2 / (w * w).sum()
    if stat == "kendall":
        if n_eff < 2:
            return None
        z = 3 * value * math.sqrt(n_eff * (n_eff - 1)) / math.sqrt(2 * (2 * n_eff + 5))
        return float(2 * sps.norm.sf(abs(z)))
    if n_eff <= 2:
        return None
    if abs(value) >= 1.0:
        return 0.0
    t = value * math.sqrt((n_eff - 2) / (1 - value * value))
    return float(2 * sps.t.sf(abs(t), n_eff - 2))


def weighted_correlations(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> dict[str, tuple[float | None, float | None]]:
    """{stat: (value, approximate p)} with item weights w (see the module docstring)."""
    x, y, w = (np.asarray(a, dtype=float) for a in (x, y, w))
    ones = np.ones((1, len(x)))
    values = {stat: finite(row[0]) for stat, row in _all_rows(x, y, ones, lambda m: m * w[None, :]).items()}
    return {stat: (value, _approx_p(stat, value, w)) for stat, value in values.items()}


def scipy_correlations(x: np.ndarray, y: np.ndarray) -> dict[str, tuple[float | None, float | None]]:
    """{stat: (value, p)} from scipy; constant inputs give None."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constant input: scipy warns and returns NaN, reported as None
        results = {
            "spearman": sps.spearmanr(x, y),
            "kendall": sps.kendalltau(x, y, variant="b"),
            "pearson": sps.pearsonr(x, y),
        }
    values = {stat: finite(float(res.statistic)) for stat, res in results.items()}
    return {stat: (value, finite(float(results[stat].pvalue)) if value is not None else None)
            for stat, value in values.items()}


# --------------------------------------------------------------------------- bootstrap


draw_tasks = draw_counts
"""(resamples, n_tasks): how many times each task is drawn in each bootstrap resample."""


def _resample_weights(human: np.ndarray, weighting: str) -> Callable[[np.ndarray], np.ndarray] | None:
    if weighting == "none":
        return None
    classes = np.unique(human, return_inverse=True)[1]
    onehot = np.eye(classes.max() + 1)[classes]  # (n, classes)

    def weights(m: np.ndarray) -> np.ndarray:
        per_class = m @ onehot  # how many drawn items share each human score, per resample
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(m > 0, m / per_class[:, classes], 0.0)

    return weights


def resample_stats(judge: np.ndarray, human: np.ndarray, multiplicity: np.ndarray, weighting: str = "none"
                   ) -> dict[str, np.ndarray]:
    """Every statistic for each row of `multiplicity` (resamples × items: how often each item is drawn)."""
    judge, human = np.asarray(judge, dtype=float), np.asarray(human, dtype=float)
    return _all_rows(judge, human, np.atleast_2d(np.asarray(multiplicity, dtype=float)),
                     _resample_weights(human, weighting))


def bootstrap(judge: np.ndarray, human: np.ndarray, task_draws: np.ndarray, *, weighting: str = "none",
              confidence: float = 0.95, on_batch: Callable[[int], None] | None = None
              ) -> dict[str, tuple[float | None, float | None]]:
    """{stat: (ci_low, ci_high)}: percentile intervals over resamples; task_draws is (B, n) per item."""
    judge, human = np.asarray(judge, dtype=float), np.asarray(human, dtype=float)
    weights = _resample_weights(human, weighting)
    collected: dict[str, list[np.ndarray]] = {s: [] for s in STATS}
    for start in range(0, task_draws.shape[0], _BATCH):
        m = task_draws[start:start + _BATCH]
        rows = _all_rows(judge, human, m, weights)
        too_few = m.sum(axis=1) < MIN_ITEMS
        for stat in STATS:
            rows[stat][too_few] = np.nan
            collected[stat].append(rows[stat])
        if on_batch:
            on_batch(m.shape[0])
    return {stat: percentile_interval(np.concatenate(collected[stat]) if collected[stat] else np.array([]),
                                      confidence) or (None, None) for stat in STATS}


def correlate(judge: np.ndarray, human: np.ndarray, *, tasks: np.ndarray | None = None,
              task_draws: np.ndarray | None = None, weighting: str = "none", confidence: float = 0.95,
              on_batch: Callable[[int], None] | None = None) -> dict[str, Estimate]:
    """Every statistic with p-value and (when task_draws is given) a bootstrap CI; `tasks[i]` is the column of item
    i's task in `task_draws` (resamples × tasks)."""
    judge, human = np.asarray(judge, dtype=float), np.asarray(human, dtype=float)
    if len(judge) < MIN_ITEMS:
        return {s: Estimate() for s in STATS}
    w = item_weights(human, weighting)
    point = scipy_correlations(judge, human) if w is None else weighted_correlations(judge, human, w)
    cis: dict[str, tuple[float | None, float | None]] = {s: (None, None) for s in STATS}
    if task_draws is not None and tasks is not None and task_draws.shape[0] > 0:
        cis = bootstrap(judge, human, task_draws[:, tasks], weighting=weighting, confidence=confidence,
                        on_batch=on_batch)
    return {s: Estimate(value=point[s][0], p=point[s][1], ci_low=cis[s][0], ci_high=cis[s][1]) for s in STATS}

"""Agreement between raters of one metric: human annotators, or the members of a judge panel (docs/correlate.md).

MTRAG's measure ("all agree, or two agree and the third is one step away") is read for any number of raters as: a
strict majority give the same score and every other rater is at most one step from it (two raters: both the same;
four: three agree, the fourth adjacent); items with a single rater are left out. Krippendorff's alpha is the
`krippendorff` package's (ordinal; items with one rating do not count); Cohen's kappa is scikit-learn's formula per
pair of raters on the items both rated, summarised by the mean over pairs weighted by their shared items.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from itertools import combinations
from typing import Any

import numpy as np

from ragjudge.correlation.aggregate import Scale


def item_agrees(positions: Sequence[int]) -> bool:
    """MTRAG's agreement for one item, given each rater's position on the scale (see module docstring)."""
    if len(positions) < 2:
        raise ValueError("agreement needs at least two ratings")
    (mode, count), *_ = Counter(positions).most_common(1)
    if count * 2 <= len(positions):
        return False
    return all(abs(p - mode) <= 1 for p in positions)


def mtrag_agreement(items: Sequence[Sequence[int]]) -> tuple[float | None, float | None]:
    """(MTRAG agreement share, exact agreement share) over items with at least two ratings."""
    rated = [list(p) for p in items if len(p) >= 2]
    if not rated:
        return None, None
    agree = sum(item_agrees(p) for p in rated)
    exact = sum(len(set(p)) == 1 for p in rated)
    return agree / len(rated), exact / len(rated)


def reliability_matrix(ratings: Mapping[Hashable, Mapping[str, float]]) -> tuple[np.ndarray, list[str]]:
    """raters × items, NaN where a rater did not rate an item (the krippendorff package's layout)."""
    raters = sorted({r for by_rater in ratings.values() for r in by_rater})
    index = {r: i for i, r in enumerate(raters)}
    matrix = np.full((len(raters), len(ratings)), np.nan)
    for column, by_rater in enumerate(ratings.values()):
        for rater, value in by_rater.items():
            matrix[index[rater], column] = value
    return matrix, raters


def krippendorff_alpha(matrix: np.ndarray, level: str = "ordinal") -> float | None:
    import krippendorff

    observed = matrix[~np.isnan(matrix)]
    if observed.size == 0 or np.unique(observed).size < 2:
        return None  # alpha is undefined when every rating is the same value
    if not (np.sum(~np.isnan(matrix), axis=0) >= 2).any():
        return None  # no item has two ratings
    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore")
        value = float(krippendorff.alpha(reliability_data=matrix, level_of_measurement=level))
    return value if math.isfinite(value) else None


def _kappa_formula(a: Sequence[Any], b: Sequence[Any], quadratic: bool) -> float:
    """scikit-learn's `cohen_kappa_score`, operation for operation (the same float), without its import (seconds)."""
    labels = sorted(set(a) | set(b))
    index = {label: i for i, label in enumerate(labels)}
    k = len(labels)
    observed = np.zeros((k, k))
    for x, y in zip(a, b, strict=True):
        observed[index[x], index[y]] += 1
    expected = np.outer(observed.sum(axis=0), observed.sum(axis=1)) / observed.sum()
    i, j = np.indices((k, k))
    weights = ((i - j) ** 2).astype(float) if quadratic else (i != j).astype(float)
    denominator = (weights * expected).sum()
    return float("nan") if denominator == 0 else float(1 - (weights * observed).sum() / denominator)


def cohen_kappa(a: Sequence[Any], b: Sequence[Any], *, quadratic: bool = False) -> float | None:
    """Cohen's kappa of two raters' labels on the same items; None when undefined (no variation)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        value = _kappa_formula(a, b, quadratic)
    return value if math.isfinite(value) else None


def pairwise_kappa(ratings: Mapping[Hashable, Mapping[str, int]]) -> dict[str, Any]:
    """Cohen's kappa for every pair of raters with at least two items in common."""
    by_rater: dict[str, dict[Hashable, int]] = {}
    for item, raters in ratings.items():
        for rater, value in raters.items():
            by_rater.setdefault(rater, {})[item] = value
    pairs = []
    for first, second in combinations(sorted(by_rater), 2):
        shared = sorted(set(by_rater[first]) & set(by_rater[second]), key=str)
        if len(shared) < 2:
            continue
        a = [by_rater[first][i] for i in shared]
        b = [by_rater[second][i] for i in shared]
        pairs.append({"a": first, "b": second, "n": len(shared), "kappa": cohen_kappa(a, b),
                      "kappa_quadratic": cohen_kappa(a, b, quadratic=True)})

    def weighted_mean(key: str) -> float | None:
        usable = [(p[key], p["n"]) for p in pairs if p[key] is not None]
        total = sum(n for _, n in usable)
        return sum(v * n for v, n in usable) / total if total else None

    return {"mean": weighted_mean("kappa"), "mean_quadratic": weighted_mean("kappa_quadratic"), "pairs": pairs}


def rater_agreement(ratings: Mapping[Hashable, Mapping[str, float]], scale: Scale) -> dict[str, Any]:
    """Every agreement measure for one metric, from item → rater → value."""
    rated = {item: dict(r) for item, r in ratings.items() if r}
    counts = [len(r) for r in rated.values()]
    positions = {item: {rater: scale.position(v) for rater, v in r.items()} for item, r in rated.items()}
    mtrag, exact = mtrag_agreement([list(p.values()) for p in positions.values()])
    matrix, raters = reliability_matrix(rated)
    return {
        "n_items": sum(c >= 2 for c in counts),
        "n_raters": len(raters),
        "raters_per_item": {"min": min(counts), "max": max(counts), "mean": sum(counts) / len(counts)}
        if counts else None,
        "mtrag_agreement": mtrag,
        "exact_agreement": exact,
        "krippendorff_alpha": krippendorff_alpha(matrix) if rated else None,
        "cohen_kappa": pairwise_kappa(positions),
    }

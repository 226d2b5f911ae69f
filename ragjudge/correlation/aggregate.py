"""One value per item from several raters, and the rating scale (for "one step away" agreement)."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

MEDIAN = "median"
ALIASES = {"median": "median", "average": "mean", "mean": "mean", "avg": "mean", "majority": "majority",
           "mode": "majority"}


def normalize_aggregator(name: str | None) -> str:
    """InspectorRAGet's aggregator names (median, average/mean, majority); anything else is the median."""
    return ALIASES.get((name or MEDIAN).strip().lower(), MEDIAN)


def aggregate(values: Sequence[float], aggregator: str | None = MEDIAN) -> float | None:
    """Median (mean of the middle two for an even count), mean, or majority: the strictly most frequent value, else
    (a tie, which InspectorRAGet shows as "Indeterminate") the median, so the item is not lost."""
    if not values:
        return None
    kind = normalize_aggregator(aggregator)
    if kind == "mean":
        return float(statistics.fmean(values))
    if kind == "majority":
        counts = Counter(values).most_common()
        if len(counts) == 1 or counts[0][1] > counts[1][1]:
            return float(counts[0][0])
    return float(statistics.median(values))


@dataclass(frozen=True)
class Scale:
    """Maps values to integer steps, so that "one step away" means adjacent points on the scale: a categorical metric's
    declared categories (by numeric value), a numerical one's `range` step, else 1 for integer data, else the smallest
    gap between observed values."""

    levels: tuple[float, ...] | None = None
    step: float | None = None
    origin: float = 0.0

    @classmethod
    def infer(cls, values: Sequence[float], *, levels: Sequence[float] | None = None,
              step: float | None = None) -> Scale:
        if levels:
            return cls(levels=tuple(sorted(set(levels))))
        distinct = sorted(set(values))
        origin = distinct[0] if distinct else 0.0
        if step:
            return cls(step=step, origin=origin)
        if all(float(v).is_integer() for v in distinct):
            return cls(step=1.0, origin=origin)
        gaps = [b - a for a, b in zip(distinct, distinct[1:], strict=False) if b - a > 1e-9]
        return cls(step=min(gaps) if gaps else 1.0, origin=origin)

    def position(self, value: float) -> int:
        if self.levels is not None:  # the nearest declared category (values come from those categories)
            return min(range(len(self.levels)), key=lambda i: abs(self.levels[i] - value))
        return round((value - self.origin) / (self.step or 1.0))

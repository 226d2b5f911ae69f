"""The one shape of an estimate with its confidence interval, whichever method made it."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

Method = Literal["ppi++", "labels only", "judge only"]
"""- `ppi++`: the judge's scores on every sample, corrected by a person's labels on a random subset
  (prediction-powered inference, power-tuned); valid whatever the judge's errors;
- `labels only`: the labels' own mean and normal interval (the classical estimate);
- `judge only`: the judge's mean with a bootstrap interval over samples: how sure the judge's mean is, not how
  close it is to what people would say."""


@dataclass(frozen=True)
class Interval:
    estimate: float
    low: float
    high: float
    method: Method
    confidence: float = 0.95
    n_labels: int = 0
    """Labelled samples used (0 for judge only)."""
    n_samples: int = 0
    """Samples the judge scored (for labels only: the labelled ones)."""
    lam: float | None = None
    """PPI++'s power-tuning weight of the judge, in [0, 1] (0: the judge is ignored; 1: plain PPI)."""

    @property
    def width(self) -> float:
        return self.high - self.low

    def covers(self, value: float) -> bool:
        return self.low <= value <= self.high

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "width": self.width}

    def text(self, digits: int = 3) -> str:
        """`0.812 [0.771, 0.853] (95%, ppi++, 50 labels of 1000)`."""
        where = {"ppi++": f"{self.n_labels} labels of {self.n_samples}",
                 "labels only": f"{self.n_labels} labels",
                 "judge only": f"{self.n_samples} samples"}[self.method]
        return (f"{self.estimate:.{digits}f} [{self.low:.{digits}f}, {self.high:.{digits}f}] "
                f"({self.confidence:.0%} {self.method}, {where})")

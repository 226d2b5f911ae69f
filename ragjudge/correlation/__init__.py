"""Judging the judges: how judges correlate with human ratings, and how raters agree with each other.

The names below are imported on first use, so that `ragjudge.correlation.agreement` can be used without
importing scipy.stats (seconds) through `analysis`.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {"CorrelateOptions": "analysis", "analyze": "analysis", "Dataset": "dataset", "ItemKey": "dataset",
            "load_humans": "dataset"}

__all__ = ["CorrelateOptions", "Dataset", "ItemKey", "analyze", "load_humans"]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"ragjudge.correlation.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module 'ragjudge.correlation' has no attribute {name!r}")

"""Judging the judges: how judges correlate with human ratings, and how raters agree with each other.

`dataset` joins humans (InspectorRAGet files) and judges (ragjudge results, InspectorRAGet algorithm
metrics) per (task, model); `stats` and `agreement` are pure statistics; `analysis` builds the report
that `ragjudge correlate` prints, and `render` turns it into tables, CSV and a heatmap.
"""

from ragjudge.correlation.analysis import CorrelateOptions, analyze
from ragjudge.correlation.dataset import Dataset, ItemKey, load_humans

__all__ = ["CorrelateOptions", "Dataset", "ItemKey", "analyze", "load_humans"]

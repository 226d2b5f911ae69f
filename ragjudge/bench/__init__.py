"""Benchmarks as one shape (see `base.py`), found by name (`registry.py`), their options from `-T` (`options.py`).

One subpackage or module per benchmark: `mtrag/`, `mtrag_retrieval.py`, `cxm/`, ...
"""

from ragjudge.bench.base import (
    Bench,
    BenchOptions,
    EachScorer,
    EachSolver,
    MetricInfo,
    Record,
    SampleResult,
    Scorer,
    Solver,
    fingerprint,
)
from ragjudge.engine.summary import Breakdown, Group, Headline, Metric, Reference, Stat, Summary, Table, stat

__all__ = ["Bench", "BenchOptions", "Breakdown", "EachScorer", "EachSolver", "Group", "Headline", "Metric",
           "MetricInfo", "Record", "Reference", "SampleResult", "Scorer", "Solver", "Stat", "Summary", "Table",
           "fingerprint", "stat"]

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

__all__ = ["Bench", "BenchOptions", "EachScorer", "EachSolver", "MetricInfo", "Record", "SampleResult", "Scorer",
           "Solver", "fingerprint"]

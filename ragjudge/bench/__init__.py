"""The benchmarks: one plug-in folder each (`mtrag/`, `cxm/`, `dialsim/`, `cdr/`, `sentence_retrieval/`).

The Bench interface itself lives in `ragjudge.engine` (`engine/bench.py`, found by name through
`engine/registry.py`); it is re-exported here because a plug-in author writes `from ragjudge.bench import Bench`.
"""

from ragjudge.engine.bench import (
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

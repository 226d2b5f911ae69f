"""The benchmarks: one plug-in folder each (`mtrag/`, `cxm/`, `dialsim/`, `cdr/`, `sentence_retrieval/`).

The Bench interface itself lives in `ragjudge.engine` (`engine/bench.py`, found by name through
`engine/registry.py`); it is re-exported here because a plug-in author writes `from ragjudge.bench import Bench`.
The names load on first use, so that importing one plug-in's light module (a task list for a help screen) does not
import the engine.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_BENCH = ("Bench", "BenchOptions", "EachScorer", "EachSolver", "Loaded", "MetricInfo", "Record", "SampleResult",
          "Scorer", "Solver", "fingerprint")
_SUMMARY = ("Breakdown", "Group", "Headline", "Metric", "Reference", "Stat", "Summary", "Table", "stat")

__all__ = sorted([*_BENCH, *_SUMMARY])


def __getattr__(name: str) -> Any:
    if name in _BENCH:
        return getattr(import_module("ragjudge.engine.bench"), name)
    if name in _SUMMARY:
        return getattr(import_module("ragjudge.engine.summary"), name)
    raise AttributeError(f"module 'ragjudge.bench' has no attribute {name!r}")

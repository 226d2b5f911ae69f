"""The Python API: `evaluate`, `evaluate_async`, `run_bench` and `load_run`, for notebooks and scripts.

They run exactly what `ragjudge judge` and `ragjudge eval` run (the same option handling, the same engine) and
return an `EvalResult`, so a figure from a notebook and one from the command line are the same figure.
"""

from __future__ import annotations

from ragjudge.api.evaluate import evaluate, evaluate_async, run_bench
from ragjudge.api.result import EvalResult, load_run

__all__ = ["EvalResult", "evaluate", "evaluate_async", "load_run", "run_bench"]

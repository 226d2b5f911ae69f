"""The Python API: `evaluate`, `evaluate_async`, `run_bench` and `load_run`, for notebooks and scripts, and the two
steps under them (`prepare_run` / `prepare_judging`, then `PreparedRun.execute`) that the CLI's `eval` and `judge`
call: one option handling, one engine, so a figure from a notebook and one from the command line are the same.
"""

from __future__ import annotations

from ragjudge.api.criterion import criterion
from ragjudge.api.evaluate import evaluate, evaluate_async
from ragjudge.api.result import EvalResult, load_run
from ragjudge.api.runs import PreparedRun, prepare_judging, prepare_run, run_bench
from ragjudge.api.settings import RunSettings

__all__ = ["EvalResult", "PreparedRun", "RunSettings", "criterion", "evaluate", "evaluate_async", "load_run", "prepare_judging",
           "prepare_run", "run_bench"]

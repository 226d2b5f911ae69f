"""The one run engine every benchmark goes through: journals and resume, outputs, progress, rendering."""

from ragjudge.engine.context import EngineOptions, RunContext
from ragjudge.engine.outputs import OutputPaths
from ragjudge.engine.runner import RunOutcome, run_bench

__all__ = ["EngineOptions", "OutputPaths", "RunContext", "RunOutcome", "run_bench"]

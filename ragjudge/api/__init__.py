"""The Python API (docs/python-api.md): every command is a function here, which the command only parses its flags
for and renders; `eval` and `judge` are the two steps `prepare_run` / `prepare_judging`, then
`PreparedRun.execute`, so a figure from a notebook and one from the command line are the same.
"""

from __future__ import annotations

from ragjudge.api.correlate import correlate
from ragjudge.api.criterion import criterion
from ragjudge.api.dialsim import DialSimConverted, DialSimRescored, dialsim_convert, dialsim_score
from ragjudge.api.evaluate import evaluate, evaluate_async
from ragjudge.api.export import ExportResult, export
from ragjudge.api.result import EvalResult, load_run
from ragjudge.api.retrieval_eval import evaluate_retrieval
from ragjudge.api.retrieve import RetrieveResult, retrieve
from ragjudge.api.runs import PreparedRun, prepare_judging, prepare_run, run_bench
from ragjudge.api.settings import RunSettings

__all__ = ["DialSimConverted", "DialSimRescored", "EvalResult", "ExportResult", "PreparedRun", "RetrieveResult",
           "RunSettings", "correlate", "criterion", "dialsim_convert", "dialsim_score", "evaluate", "evaluate_async",
           "evaluate_retrieval", "export", "load_run", "prepare_judging", "prepare_run", "retrieve", "run_bench"]

"""What the seven CXMArena benches share: the data folder, a predictions file as the system under test, the
prediction rows as the run's record, and the run's summary built from the task's report.

With `-T predictions=FILE` each row is a sample (`FileRow`) and the task's `summary.py` reads the rows with their line
numbers, so a bad row is reported as FILE:LINE. The task's figures are aggregates over all rows at once; each
sample's own figures go to the sample log (the task's `samples.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from pydantic import Field

from ragjudge.bench.cxm.rows import FileRow, Rows, check_row
from ragjudge.bench.cxm.solver import FileRowsSolver
from ragjudge.bench.cxm.summary import TaskReport, to_summary
from ragjudge.engine.bench import Bench, BenchOptions, SampleResult, Solver
from ragjudge.engine.summary import Summary
from ragjudge.errors import InputError, UsageError
from ragjudge.formats.jsonl import read_jsonl

if TYPE_CHECKING:
    from ragjudge.bench.cxm.models import Article
    from ragjudge.engine.context import RunContext

DATA_HELP = ("A CXMArena folder: the public release (Hugging Face sprinklr-huggingface/CXM_Arena; "
             "`ragjudge cxm fetch --out DIR` writes it) or ragjudge's plain JSONL files (examples/cxm/README.md).")


class CxmOptions(BenchOptions):
    data: str = Field(description="CXMArena data folder: the release layout (`ragjudge cxm fetch`) or "
                      "ragjudge's plain JSONL files.")
    predictions: str | None = Field(None, description="Score this predictions file (one row per prediction) "
                                    "instead of running a model.")


PROTOCOL_HELP = ("Which figures lead: ragjudge (stricter: every question counts, answers mapped to the taxonomy "
                 "conservatively) or paper (CXMArena's own evaluator: unanswered quality questions skipped, intents "
                 "fuzzy-mapped with thefuzz WRatio >= 70). Both are always printed.")


def check_protocol(value: str) -> str:
    if value not in ("ragjudge", "paper"):
        raise UsageError(f"-T protocol must be ragjudge or paper, got {value!r}")
    return value


O = TypeVar("O", bound=CxmOptions)


@dataclass(frozen=True)
class CxmData:
    """What a task's `load` read beside its samples, the run's `ctx.data`: the gold items by id (what a predictions
    file's rows name) and, for a task over the knowledge base, its articles (None: a predictions file without them)."""

    cases: dict[str, Any] = field(default_factory=dict)
    articles: dict[str, Article] | None = None


class CxmBench(Bench[O, Any]):
    task: ClassVar[str]
    key: ClassVar[str] = "case_id"
    """The field that names a gold item, in the data and in a prediction row."""
    data_help = DATA_HELP
    data_source = "Hugging Face sprinklr-huggingface/CXM_Arena (`ragjudge cxm fetch`), or plain JSONL"

    def __init__(self, options: O, *, label: str | None = None):
        super().__init__(options, label=label)
        self.data = Path(options.data)
        if not self.data.is_dir():
            raise UsageError(f"--data {self.data} is not a folder")

    def require_one_system(self) -> None:
        """A model under test or a predictions file: exactly one of them (the engine's one vocabulary)."""
        o = self.options
        if o.predictions is None and not o.gen:
            raise UsageError(f"bench {self.name} needs a model under test (--gen MODEL) or -T predictions=FILE")
        if o.predictions is not None and o.gen:
            raise UsageError(f"bench {self.name} needs a model under test (--gen MODEL) or -T predictions=FILE, "
                             "not both")

    @property
    def predictions_path(self) -> Path | None:
        return Path(self.options.predictions) if self.options.predictions else None

    def file_rows(self) -> list[FileRow]:
        """The predictions file's rows. A file that does not exist or holds no row is a mistake (a typo, a
        prediction script that crashed), refused before any work like any bad input; a file that lacks some
        items scores them as missing (exit 1)."""
        path = self.predictions_path
        assert path is not None
        if not path.exists():
            raise InputError("no such predictions file", file=str(path))
        rows = [FileRow(id=f"line {n}", line=n, row=row) for n, row in read_jsonl(path)]
        if not rows:
            raise InputError("empty: a predictions file holds one JSON object a line (an item it lacks is scored "
                             "as missing)", file=str(path))
        return rows

    def sample_id(self, sample: Any) -> str:
        return str(getattr(sample, self.key, None) or sample.id)

    def gold_of(self, row: dict[str, Any], ctx: RunContext) -> Any:
        """The gold item a prediction row names (None: not in the data)."""
        return ctx.data.cases.get(str(row.get(self.key)))

    def scored(self, results: Sequence[SampleResult[Any]], ctx: RunContext) -> list[Any]:
        """The gold items the summary scores: every one for a predictions file (a missing row counts), else the
        run's samples."""
        return list(ctx.data.cases.values()) if self.predictions_path is not None else [r.sample for r in results]

    # -- the parts each task provides ---------------------------------------------------------------

    def solver(self, ctx: RunContext) -> Solver[Any]:
        return FileRowsSolver() if self.predictions_path is not None else self.model_solver(ctx)

    def model_solver(self, ctx: RunContext) -> Solver[Any]:
        """The solver that puts the run's items to the system under test."""
        raise NotImplementedError

    def run_rows(self, result: SampleResult[Any]) -> list[dict[str, Any]]:
        """A run's prediction rows for one sample: its output, completed by its scores."""
        return [result.output]

    def report(self, results: Sequence[SampleResult[Any]], ctx: RunContext) -> TaskReport:
        """The task's scores over the run's prediction rows (`prediction_rows`), with the paper's figures."""
        raise NotImplementedError

    # -- the prediction rows ----------------------------------------------------------------------------

    def prediction_rows(self, results: Sequence[SampleResult[Any]]) -> Rows:
        """(line, row) pairs for the task's summary: the file's own lines (each checked against the task's row
        shape), or the run's rows numbered from 1."""
        if self.predictions_path is not None:
            for r in results:
                check_row(self.task, r.output, self.predictions_path, r.sample.line)
            return [(r.sample.line, r.output) for r in results]
        rows = [row for r in results for row in self.run_rows(r)]
        return [(i + 1, row) for i, row in enumerate(rows)]

    # -- Bench ----------------------------------------------------------------------------------------

    def summarize(self, results: Sequence[SampleResult[Any]], ctx: RunContext) -> Summary:
        return to_summary(self, results, self.report(results, ctx))

    def records(self, results: Sequence[SampleResult[Any]], ctx: RunContext) -> list[dict[str, Any]]:
        """results.jsonl holds CXM's prediction rows, the task's own record format: valid input to
        `-T predictions=` (and `ragjudge cxm score`)."""
        if self.predictions_path is not None:
            return [dict(r.output) for r in results]
        return [row for r in results for row in self.run_rows(r)]

    def rows(self, results: Sequence[SampleResult[Any]], ctx: RunContext) -> list[dict[str, Any]]:
        return self.records(results, ctx)

    def run_info(self, ctx: RunContext) -> dict[str, Any]:
        return {"task": self.task, "data": str(self.data)}

    def out_slug(self) -> list[str]:
        gen = getattr(self.options, "gen", None)
        return [gen or ("predictions" if self.predictions_path else "none")]

"""What the six CXMArena benches share: the data folder, scoring a predictions file, reports as summaries.

Each task is its own bench (`cxm-intent`, `cxm-quality`, ...). A run either puts a model to every item (the
solver, journaled by the engine), or, with `-T predictions=FILE`, takes a system's prediction rows as they
are: then each row is a sample and the task's scorer reads them with their line numbers, so a bad row is
reported as FILE:LINE. Metrics are computed over all rows at once by `score.py` (they are aggregates).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from ragjudge.bench.base import Bench, BenchOptions, Record, SampleResult, Solver
from ragjudge.bench.cxm.report import TaskReport
from ragjudge.engine.render import Table
from ragjudge.errors import UsageError
from ragjudge.formats.jsonl import read_jsonl

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext
    from ragjudge.report.view import ReportView

TASKS = ("intent", "quality", "tool-calls", "answer-classification", "kb-refinement", "article-search",
         "multiturn-retrieval")
_ALIASES = {
    "intent-prediction": "intent", "intents": "intent",
    "agent-quality": "quality", "quality-adherence": "quality", "agent-quality-adherence": "quality", "aqm": "quality",
    "tools": "tool-calls", "tool-calling": "tool-calls", "tool-call": "tool-calls",
    "classification": "answer-classification", "multi-turn": "answer-classification",
    "multi-turn-rag": "answer-classification", "rag": "answer-classification",
    "kb": "kb-refinement", "kb-refinement-pairs": "kb-refinement",
    "search": "article-search",
    "multi-turn-retrieval": "multiturn-retrieval", "retrieval": "multiturn-retrieval",
}
DATA_HELP = ("A CXMArena folder: the public release (Hugging Face sprinklr-huggingface/CXM_Arena; "
             "`ragjudge cxm fetch --out DIR` writes it) or ragjudge's plain JSONL files (examples/cxm/README.md).")


def task_name(value: str) -> str:
    name = value.strip().lower().replace("_", "-")
    name = _ALIASES.get(name, name)
    if name not in TASKS:
        raise UsageError(f"unknown CXMArena task {value!r} (available: {', '.join(TASKS)})")
    return name


def default_predictions(data: Path, task: str) -> Path:
    return data / "predictions" / f"{task}.jsonl"


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


class FileRow(BaseModel):
    """One line of a predictions file, as a sample of a scoring run."""

    model_config = ConfigDict(frozen=True)

    id: str
    line: int
    row: dict[str, Any]


class FileRowsSolver(Solver[FileRow]):
    """Predictions already made: each row is its own output; nothing to journal."""

    journaled = False
    name = "predictions"

    def fingerprint(self, sample: FileRow) -> str:
        return "file"

    async def solve(self, samples: Sequence[FileRow], ctx: RunContext) -> AsyncIterator[tuple[str, Record]]:
        for sample in samples:
            yield sample.id, dict(sample.row)


O = TypeVar("O", bound=CxmOptions)


class CxmBench(Bench[O, Any]):
    task: ClassVar[str]
    data_help = DATA_HELP
    data_source = "Hugging Face sprinklr-huggingface/CXM_Arena (`ragjudge cxm fetch`), or plain JSONL"

    def __init__(self, options: O, *, label: str | None = None):
        super().__init__(options, label=label)
        self.data = Path(options.data)
        if not self.data.is_dir():
            raise UsageError(f"--data {self.data} is not a folder")
        self.file_problem: str | None = None

    @property
    def predictions_path(self) -> Path | None:
        return Path(self.options.predictions) if self.options.predictions else None

    def file_rows(self) -> list[FileRow]:
        """The predictions file's rows. A file that does not exist or holds no row is no error of the input:
        every item is then missing (reported, exit 1). A folder or a file that is not UTF-8 JSONL is."""
        path = self.predictions_path
        assert path is not None
        if not path.exists():
            self.file_problem = f"predictions file {path} does not exist: every item is missing"
            return []
        rows = [FileRow(id=f"line {n}", line=n, row=row) for n, row in read_jsonl(path)]
        if not rows:
            self.file_problem = f"predictions file {path} is empty: every item is missing"
        return rows

    def sample_id(self, sample: Any) -> str:
        return str(sample.id)

    # -- the parts each task provides ---------------------------------------------------------------

    def prediction_rows(self, results: Sequence[SampleResult[Any]]) -> list[tuple[int, dict[str, Any]]]:
        """(line, row) pairs for `score.py`: the file's own lines, or the run's rows numbered from 1."""
        if self.predictions_path is not None:
            return [(r.sample.line, r.output) for r in results]
        rows = [row for r in results for row in self.run_rows(r)]
        return [(i + 1, row) for i, row in enumerate(rows)]

    def run_rows(self, result: SampleResult[Any]) -> list[dict[str, Any]]:
        """A run's prediction rows for one sample: its output, completed by its scores."""
        return [result.output]

    def reports(self, results: Sequence[SampleResult[Any]]) -> list[TaskReport]:
        raise NotImplementedError

    # -- Bench ----------------------------------------------------------------------------------------

    def summarize(self, results: Sequence[SampleResult[Any]], ctx: RunContext) -> dict[str, Any]:
        reports = self.reports(results)
        if self.file_problem:
            for report in reports:
                report.notes.insert(0, self.file_problem)
                report.problems = max(report.problems, 1)
        problems = sum(r.problems for r in reports)
        return {"n_samples": len(results), "reports": [r.to_dict() for r in reports], "problems": problems}

    def warnings(self, summary: dict[str, Any]) -> list[str]:
        return [f"warning: {self.file_problem}"] if self.file_problem else []

    def tables(self, summary: dict[str, Any]) -> list[Table]:
        return report_tables(summary)

    def records(self, results: Sequence[SampleResult[Any]]) -> list[dict[str, Any]]:
        """results.jsonl holds the prediction rows: valid input to `-T predictions=` / `cxm score`."""
        if self.predictions_path is not None:
            return [dict(r.output) for r in results]
        return [row for r in results for row in self.run_rows(r)]

    def rows(self, results: Sequence[SampleResult[Any]]) -> list[dict[str, Any]]:
        return self.records(results)

    def exit_code(self, results: Sequence[SampleResult[Any]], summary: dict[str, Any]) -> int:
        return 1 if summary["problems"] else 0

    def run_info(self) -> dict[str, Any]:
        return {"task": self.task, "data": str(self.data)}

    def out_slug(self) -> list[str]:
        gen = getattr(self.options, "gen", None)
        return [gen or ("predictions" if self.predictions_path else "none")]

    @classmethod
    def report_view(cls, run_info: dict[str, Any]) -> ReportView:
        from ragjudge.bench.cxm.report_view import CxmView

        return CxmView(run_info)


def report_tables(summary: dict[str, Any]) -> list[Table]:
    """Each task report's metrics, notes and tables (the terminal and `ragjudge report` show the same)."""
    tables = []
    for report in summary["reports"]:
        metrics = Table(f"CXMArena {report['task']}", ["metric", "value"],
                        [[k, v] for k, v in report["metrics"].items()], [f"note: {n}" for n in report["notes"]])
        tables += [metrics, *(Table.from_dict(t) for t in report["tables"]),
                   *(Table.from_dict(t) for t in report.get("reference") or [])]
    return tables


def optional_articles(data: Path, kind: str) -> dict[str, Any] | None:
    """The KB articles of `kind` when the folder has them (some scores only note unknown ids with them)."""
    from ragjudge.bench.cxm import loaders
    from ragjudge.bench.cxm.tables import find_file

    names, release = loaders.ARTICLE_FILES[kind]
    return loaders.load_articles(data, kind) if find_file(data, names, release) else None

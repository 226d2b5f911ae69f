"""What the seven CXMArena benches share: the data folder, scoring a predictions file, the run's summary.

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

from ragjudge.engine.bench import Bench, BenchOptions, Record, SampleResult, Solver
from ragjudge.bench.cxm.reference import Shown
from ragjudge.bench.cxm.report import TaskReport
from ragjudge.bench.cxm.score.common import check_row
from ragjudge.engine.render import LaidOutTable
from ragjudge.engine.summary import Headline, Metric, Summary, describe
from ragjudge.errors import InputError, UsageError
from ragjudge.formats.jsonl import read_jsonl

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext

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
        self.partial = False
        """Whether --limit left samples out (then no paper figure describes the run): the engine says so."""

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
        return str(sample.id)

    # -- the parts each task provides ---------------------------------------------------------------

    def prediction_rows(self, results: Sequence[SampleResult[Any]]) -> list[tuple[int, dict[str, Any]]]:
        """(line, row) pairs for `score.py`: the file's own lines, or the run's rows numbered from 1."""
        if self.predictions_path is not None:
            for r in results:
                check_row(self.task, r.output, self.predictions_path, r.sample.line)
            return [(r.sample.line, r.output) for r in results]
        rows = [row for r in results for row in self.run_rows(r)]
        return [(i + 1, row) for i, row in enumerate(rows)]

    def run_rows(self, result: SampleResult[Any]) -> list[dict[str, Any]]:
        """A run's prediction rows for one sample: its output, completed by its scores."""
        return [result.output]

    def report(self, results: Sequence[SampleResult[Any]]) -> TaskReport:
        """The task's scores over the run's prediction rows."""
        raise NotImplementedError

    # -- Bench ----------------------------------------------------------------------------------------

    def summarize(self, results: Sequence[SampleResult[Any]], ctx: RunContext) -> Summary:
        self.partial = ctx.cut_by_limit
        return self.summary_of(results, self.report(results))

    @staticmethod
    def cite(report: TaskReport, shown: Shown) -> TaskReport:
        """The paper's cells that describe this run beside ours (`reference`), or the one note saying why none does."""
        report.reference = shown.references
        report.notes += shown.notes
        return report

    def summary_of(self, results: Sequence[SampleResult[Any]], report: TaskReport) -> Summary:
        """The run's Summary from the task's report: every metric with its declared direction and kind (scores
        and rates first, then counts and thresholds), the paper's figures, the failed or missing items as
        n_errors."""
        notes, warnings = list(report.notes), list(report.warnings)
        problems = report.problems
        catalog = self.catalog
        order = sorted(report.metrics, key=lambda name: catalog.info(name).kind not in ("score", "rate"))
        metrics = {name: catalog.metric(name, report.metrics[name], n=report.ns.get(name),
                                        errors=report.errors.get(name, 0)) for name in order}
        return self.summary(results, metrics, breakdowns=report.breakdowns, tables=report.tables,
                            reference=report.reference, notes=notes, warnings=warnings,
                            headline=headline(metrics, report.headline), title=f"CXMArena {report.task}",
                            n_errors=problems, details=report.details)

    def records(self, results: Sequence[SampleResult[Any]]) -> list[dict[str, Any]]:
        """results.jsonl holds the prediction rows: valid input to `-T predictions=` / `cxm score`."""
        if self.predictions_path is not None:
            return [dict(r.output) for r in results]
        return [row for r in results for row in self.run_rows(r)]

    def rows(self, results: Sequence[SampleResult[Any]]) -> list[dict[str, Any]]:
        return self.records(results)

    def run_info(self, ctx: RunContext) -> dict[str, Any]:
        return {"task": self.task, "data": str(self.data)}

    def out_slug(self) -> list[str]:
        gen = getattr(self.options, "gen", None)
        return [gen or ("predictions" if self.predictions_path else "none")]

def headline(metrics: dict[str, Metric], wanted: Sequence[tuple[str, str]]) -> Headline | None:
    """`NAME 0.541 over 37 UNIT; NAME ...`: the first of `wanted` (metric, what its n counts) that has a value
    leads, each later one with a value follows."""
    present = [(name, unit) for name, unit in wanted if name in metrics and metrics[name].value is not None]
    if not present:
        return None
    parts = [describe(name, metrics[name], unit) for name, unit in present]
    return Headline(metric=present[0][0], value=metrics[present[0][0]].value, text="; ".join(parts))


def report_tables(summary: dict[str, Any]) -> list[LaidOutTable]:
    """The tables of a summary written before the result contract (a `reports` list), for `ragjudge report`'s
    CXMArena view until it reads the contract; a contract summary has none here (the report shows its own)."""
    tables = []
    for report in summary.get("reports") or []:
        metrics = LaidOutTable(f"CXMArena {report['task']}", ["metric", "value"],
                        [[k, v] for k, v in report["metrics"].items()], [f"note: {n}" for n in report["notes"]])
        tables += [metrics, *(LaidOutTable.from_dict(t) for t in report["tables"]),
                   *(LaidOutTable.from_dict(t) for t in report.get("reference") or [])]
    return tables


def optional_articles(data: Path, kind: str) -> dict[str, Any] | None:
    """The KB articles of `kind` when the folder has them (some scores only note unknown ids with them)."""
    from ragjudge.bench.cxm import loaders
    from ragjudge.bench.cxm.tables import find_file

    names, release = loaders.ARTICLE_FILES[kind]
    return loaders.load_articles(data, kind) if find_file(data, names, release, f"{kind} articles") else None

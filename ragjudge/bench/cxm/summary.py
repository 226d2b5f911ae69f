"""What every CXMArena task's summary is made of: the task's scores as plain data (`TaskReport`, what each task's
`summary.py` computes from the prediction rows), and that report turned into the run's `Summary` (the result
contract) with the metrics' declared direction and kind, the paper's figures and the headline."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ragjudge.engine.summary import Breakdown, Headline, Metric, Reference, Summary, Table, describe

if TYPE_CHECKING:
    from ragjudge.bench.cxm.references import Shown
    from ragjudge.engine.bench import Bench, SampleResult


def table(title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]], notes: Sequence[str] = ()) -> Table:
    """A bench table (`ragjudge.engine.summary.Table`), the way the tasks write them."""
    return Table(title=title, columns=list(columns), rows=[list(r) for r in rows], notes=list(notes))


@dataclass
class TaskReport:
    task: str
    """What was scored, as the main table's title says it: `intent prediction (flat, 5 intents)`."""
    metrics: dict[str, Any]
    tables: list[Table] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    problems: int = 0
    """Failed or missing items: the run is incomplete and the CLI exits 1 (the summary's n_errors)."""
    reference: list[Reference] = field(default_factory=list)
    """The paper's published figures for this task, printed beside ours."""
    ns: dict[str, int] = field(default_factory=dict)
    """How many items (cases, questions, queries) a metric is computed over, where it is a mean over items."""
    errors: dict[str, int] = field(default_factory=dict)
    """Items left out of a metric because their prediction (or its verification) failed."""
    headline: list[tuple[str, str]] = field(default_factory=list)
    """(metric, what its n counts) in the order the headline line names them; the first with a value leads."""
    breakdowns: dict[str, Breakdown] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    """Lines for stderr: deprecated keys read, files that held nothing."""
    details: dict[str, Any] = field(default_factory=dict)

    def cite(self, shown: Shown) -> TaskReport:
        """The paper's cells that describe this run beside ours (`reference`), or the one note saying why none
        does."""
        self.reference = shown.references
        self.notes += shown.notes
        return self


def headline(metrics: dict[str, Metric], wanted: Sequence[tuple[str, str]]) -> Headline | None:
    """`NAME 0.541 over 37 UNIT; NAME ...`: the first of `wanted` (metric, what its n counts) that has a value
    leads, each later one with a value follows."""
    present = [(name, unit) for name, unit in wanted if name in metrics and metrics[name].value is not None]
    if not present:
        return None
    parts = [describe(name, metrics[name], unit) for name, unit in present]
    return Headline(metric=present[0][0], value=metrics[present[0][0]].value, text="; ".join(parts))


def to_summary(bench: Bench[Any, Any], results: Sequence[SampleResult[Any]], report: TaskReport) -> Summary:
    """The run's Summary from the task's report: every metric with its declared direction and kind (scores and rates
    first, then counts and thresholds), the paper's figures, the failed or missing items as n_errors."""
    catalog = bench.catalog
    order = sorted(report.metrics, key=lambda name: catalog.info(name).kind not in ("score", "rate"))
    metrics = {name: catalog.metric(name, report.metrics[name], n=report.ns.get(name),
                                    errors=report.errors.get(name, 0)) for name in order}
    return bench.summary(results, metrics, breakdowns=report.breakdowns, tables=report.tables,
                         reference=report.reference, notes=list(report.notes), warnings=list(report.warnings),
                         headline=headline(metrics, report.headline), title=f"CXMArena {report.task}",
                         n_errors=report.problems, details=report.details)

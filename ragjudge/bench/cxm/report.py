"""A task's scores as plain data, what `score/*` returns: metrics {name: value}, with how many items each is
computed over, tables, notes, the paper's figures, and the failed or missing items. The bench turns it into
the run's `Summary` (the result contract) with the metrics' declared direction and kind (`base.CxmBench`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ragjudge.engine.summary import Breakdown, Reference, Table


def table(title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]], notes: Sequence[str] = ()) -> Table:
    """A bench table (`ragjudge.engine.summary.Table`), the way the scorers write them."""
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

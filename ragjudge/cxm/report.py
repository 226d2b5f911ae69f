"""A task's scores as plain data (metrics, tables, notes), printed as rich tables or JSON."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from rich.console import Console
from rich.table import Table as RichTable

from ragjudge.formats.jsonl import to_jsonable


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list[Any]]


@dataclass
class TaskReport:
    task: str
    metrics: dict[str, Any]
    tables: list[Table] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    problems: int = 0
    """Failed or missing items: the run is incomplete and the CLI exits 1."""

    def to_dict(self) -> dict[str, Any]:
        return to_jsonable(asdict(self))


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def print_reports(reports: list[TaskReport], fmt: str, console: Console | None = None) -> None:
    if fmt == "json":
        print(json.dumps([r.to_dict() for r in reports], indent=2, ensure_ascii=False))
        return
    console = console or Console()
    for report in reports:
        table = RichTable(title=f"CXMArena {report.task}", title_justify="left")
        table.add_column("metric")
        table.add_column("value", justify="right")
        for name, value in report.metrics.items():
            table.add_row(name, _fmt(value))
        console.print(table)
        for extra in report.tables:
            if not extra.rows:
                continue
            t = RichTable(title=extra.title, title_justify="left")
            for i, col in enumerate(extra.columns):
                t.add_column(col, justify="left" if i == 0 else "right")
            for row in extra.rows:
                t.add_row(*(_fmt(v) for v in row))
            console.print(t)
        for note in report.notes:
            console.print(f"[dim]note: {note}[/dim]")
        console.print()

"""A task's scores as plain data (metrics, tables, notes): what `score.py` returns and summary.json holds."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ragjudge.formats.jsonl import to_jsonable


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list[Any]]
    notes: list[str] = field(default_factory=list)


@dataclass
class TaskReport:
    task: str
    metrics: dict[str, Any]
    tables: list[Table] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    problems: int = 0
    """Failed or missing items: the run is incomplete and the CLI exits 1."""
    reference: list[Table] = field(default_factory=list)
    """The paper's published figures for this task, printed beside ours."""

    def to_dict(self) -> dict[str, Any]:
        return to_jsonable(asdict(self))

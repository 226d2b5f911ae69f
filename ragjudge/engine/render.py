"""Print a run: the bench's tables for people (stdout), JSON for machines, usage and file paths on stderr.

A summary may hold these keys, each shown when present:
- `metrics`: {name: {"mean", "n", "errors", "std"?}} or {name: value}
- `breakdowns`: {dimension: {value: {metric: value, "n_tasks"|"n": count}}}
- `tables`: [{"title", "columns", "rows"}]: the bench's own tables (confusions, per-category...)
- `reference`: [{"title", "columns", "rows"}]: the paper's published figures, printed beside ours
- `notes`: [text]
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table as RichTable

from ragjudge.formats.jsonl import to_jsonable

if TYPE_CHECKING:
    from ragjudge.engine.runner import RunOutcome


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list[Any]]
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return to_jsonable(asdict(self))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Table:
        return cls(title=str(data.get("title", "")), columns=list(data.get("columns", [])),
                   rows=[list(r) for r in data.get("rows", [])], notes=list(data.get("notes", [])))


def fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def metric_table(summary: dict[str, Any], title: str) -> Table:
    metrics = summary.get("metrics") or {}
    stats_like = all(isinstance(v, dict) for v in metrics.values())
    if not stats_like:
        return Table(title, ["metric", "value"], [[k, v] for k, v in metrics.items()])
    with_std = any("std" in v for v in metrics.values())
    columns = ["metric", "mean"] + (["std"] if with_std else []) + ["n", "errors"]
    rows = []
    for name, s in metrics.items():
        rows.append([name, s.get("mean")] + ([s.get("std")] if with_std else []) + [s.get("n"), s.get("errors", 0)])
    return Table(title, columns, rows)


def breakdown_tables(summary: dict[str, Any], shown: list[str] | None = None,
                     titles: dict[str, str] | None = None) -> list[Table]:
    tables = []
    for dim, groups in (summary.get("breakdowns") or {}).items():
        if not groups:
            continue
        first = next(iter(groups.values()))
        count_key = "n_tasks" if "n_tasks" in first else "n" if "n" in first else None
        metrics = shown or [k for k in first if k not in ("n_tasks", "n")]
        metrics = [m for m in metrics if any(m in g for g in groups.values())] or metrics
        columns = [dim] + (["tasks" if count_key == "n_tasks" else "n"] if count_key else []) + metrics
        rows = [[value] + ([g.get(count_key)] if count_key else []) + [g.get(m) for m in metrics]
                for value, g in groups.items()]
        tables.append(Table((titles or {}).get(dim, f"By {dim}"), columns, rows))
    return tables


def default_tables(summary: dict[str, Any], title: str) -> list[Table]:
    tables = [metric_table(summary, title)] if summary.get("metrics") else []
    tables += breakdown_tables(summary)
    tables += [Table.from_dict(t) for t in summary.get("tables") or []]
    tables += [Table.from_dict(t) for t in summary.get("reference") or []]
    return tables


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _split_to_width(table: Table, width: int) -> list[Table]:
    """A table too wide for the terminal becomes several, each repeating the leading label columns, so that
    numbers are never cut (`0.2…`) at 80 columns or in a pipe."""
    cells = [[fmt(v) for v in row] for row in table.rows]
    widths = [max([len(str(c))] + [len(r[i]) for r in cells if i < len(r)]) + 3 for i, c in enumerate(table.columns)]
    if sum(widths) + 2 <= width or len(table.columns) < 3:
        return [table]
    numeric = [all(_is_number(r[i]) or r[i] is None for r in table.rows if i < len(r)) for i in range(len(widths))]
    labels = 1
    while labels < len(widths) - 1 and not numeric[labels] and sum(widths[: labels + 1]) < width // 2:
        labels += 1
    parts, current = [], []
    budget = width - 2 - sum(widths[:labels])
    used = 0
    for i in range(labels, len(widths)):
        if current and used + widths[i] > budget:
            parts.append(current)
            current, used = [], 0
        current.append(i)
        used += widths[i]
    parts.append(current)
    out = []
    for n, part in enumerate(parts):
        keep = list(range(labels)) + part
        title = table.title if n == 0 else f"{table.title} (continued)"
        out.append(Table(title, [table.columns[i] for i in keep], [[row[i] if i < len(row) else None for i in keep]
                                                                    for row in table.rows],
                         table.notes if n == len(parts) - 1 else []))
    return out


def print_tables(tables: list[Table], console: Console) -> None:
    from rich import box

    for whole in tables:
        if not whole.rows:
            continue
        for table in _split_to_width(whole, console.width):
            console.print(f"[bold]{table.title}[/bold]", soft_wrap=True, highlight=False)
            t = RichTable(box=box.SIMPLE_HEAD, pad_edge=False)
            for i, col in enumerate(table.columns):
                numeric = all(_is_number(r[i]) or r[i] is None for r in table.rows if i < len(r))
                t.add_column(str(col), justify="right" if i and numeric else "left", no_wrap=numeric,
                             overflow="fold")
            for row in table.rows:
                t.add_row(*(escape(fmt(v)) for v in row))  # a cell like "[k1=1.2]" is text, not markup
            console.print(t)
            for note in table.notes:
                console.print(f"[dim]{note}[/dim]", soft_wrap=True)


def print_outcome(outcome: RunOutcome, output_format: str) -> None:
    summary = outcome.summary
    err = Console(stderr=True)
    if output_format == "json":
        print(json.dumps(to_jsonable(summary), indent=2, ensure_ascii=False))
    else:
        console = Console()
        print_tables(outcome.bench.tables(summary), console)
        for note in summary.get("notes") or []:
            console.print(f"[dim]note: {note}[/dim]")
    print_footer(outcome, err)
    for warning in outcome.bench.warnings(summary):
        print(warning, file=sys.stderr)


def print_footer(outcome: RunOutcome, console: Console) -> None:
    for judge, models in (outcome.summary.get("judges") or {}).items():
        if models:
            console.print(f"[dim]{judge}: {', '.join(models)}[/dim]")
    if outcome.gateway is not None and outcome.gateway.usage.by_model:
        t = RichTable(title="LLM usage")
        t.add_column("model", no_wrap=True)
        for col in ("calls", "cached", "retries", "failed", "prompt tok", "completion tok", "cost $"):
            t.add_column(col, justify="right")
        for model, u in sorted(outcome.gateway.usage.by_model.items()):
            t.add_row(model, str(u.calls), str(u.cached), str(u.retries), str(u.failures), str(u.prompt_tokens),
                      str(u.completion_tokens), f"{u.cost:.4f}")
        console.print(t)
    failed = sum(1 for r in outcome.results if r.errors)
    paths = outcome.paths
    if failed:
        where = f" (see the 'errors' column of {paths.csv})" if paths else ""
        console.print(f"[yellow]{failed} sample(s) had errors{where}[/yellow]")
    if paths is not None:
        console.print(f"results: {paths.results}", soft_wrap=True, highlight=False)
        console.print(f"summary: {paths.summary}  table: {paths.csv}", soft_wrap=True, highlight=False)

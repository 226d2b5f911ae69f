"""Print a run: the bench's tables for people (stdout), JSON for machines, usage and file paths on stderr.

A summary may hold these keys, each shown when present:
- `metrics`: {name: {"mean", "n", "errors", "std"?}} or {name: value}
- `breakdowns`: {dimension: {value: {metric: value, "n_tasks"|"n": count}}}
- `tables`: [{"title", "columns", "rows"}]: the bench's own tables (confusions, per-category...)
- `reference`: [{"title", "columns", "rows"}]: the paper's published figures, printed beside ours
- `notes`: [text]

Everything is laid out for the console's width (80 columns, or a pipe): wide tables are split into parts that
repeat their label columns, LLM usage puts long model names on their own line, and nothing is cut with `…`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table as RichTable

from ragjudge.formats.jsonl import to_jsonable

if TYPE_CHECKING:
    from ragjudge.bench.base import MetricInfo
    from ragjudge.engine.runner import RunOutcome
    from ragjudge.llm.usage import ModelUsage


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list[Any]]
    notes: list[str] = field(default_factory=list)
    legend: list[list[str]] = field(default_factory=list)
    """[name, what it means] pairs printed under the table (what each metric is, which way is better)."""

    def to_dict(self) -> dict[str, Any]:
        return to_jsonable(asdict(self))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Table:
        return cls(title=str(data.get("title", "")), columns=list(data.get("columns", [])),
                   rows=[list(r) for r in data.get("rows", [])], notes=list(data.get("notes", [])),
                   legend=[list(r) for r in data.get("legend", [])])


def fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def legend(infos: Sequence[MetricInfo], names: Sequence[str]) -> list[list[str]]:
    """[name, meaning] for each of `names` a MetricInfo describes (`*` in an info's name matches a family):
    what it measures, which way is better, and which samples it counts when not all."""
    rows = []
    for name in names:
        info = next((i for i in infos if fnmatchcase(name, i.name)), None)
        if info is None:
            continue
        text = info.description
        if info.higher_is_better is None:
            text += " (a rate: neither better nor worse)"
        elif not info.higher_is_better:
            text += " (lower is better)"
        if info.counts:
            text += f"; n counts {info.counts}"
        rows.append([name, text])
    return rows


def metric_table(summary: dict[str, Any], title: str, infos: Sequence[MetricInfo] = ()) -> Table:
    metrics = summary.get("metrics") or {}
    stats_like = all(isinstance(v, dict) for v in metrics.values())
    if not stats_like:
        return Table(title, ["metric", "value"], [[k, v] for k, v in metrics.items()])
    with_std = any("std" in v for v in metrics.values())
    with_partial = any(v.get("partial_panels") for v in metrics.values())  # only when a panel lost a member
    columns = ["metric", "mean"] + (["std"] if with_std else []) + ["n", "errors"] + (["partial"] if with_partial else [])
    rows = []
    for name, s in metrics.items():
        rows.append([name, s.get("mean")] + ([s.get("std")] if with_std else []) + [s.get("n"), s.get("errors", 0)]
                    + ([s.get("partial_panels", 0)] if with_partial else []))
    notes = (["partial: scores from a judge panel that fewer members answered than asked (--min-panel N requires "
              "N answers)"] if with_partial else [])
    return Table(title, columns, rows, notes=notes, legend=legend(infos, list(metrics)))


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


def _longest_line(text: str) -> int:
    """A cell may hold several lines (a value over its confidence interval): its width is its longest."""
    return max((len(line) for line in text.splitlines()), default=0)


def _split_to_width(table: Table, width: int) -> list[Table]:
    """A table too wide for the terminal becomes several, each repeating the leading label columns, so that
    numbers are never cut (`0.2…`) at 80 columns or in a pipe."""
    cells = [[_longest_line(fmt(v)) for v in row] for row in table.rows]
    widths = [max([len(str(c))] + [r[i] for r in cells if i < len(r)]) + 3 for i, c in enumerate(table.columns)]
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
            console.print(f"[bold]{escape(table.title)}[/bold]", highlight=False)
            t = RichTable(box=box.SIMPLE_HEAD, pad_edge=False)
            for i, col in enumerate(table.columns):
                numeric = all(_is_number(r[i]) or r[i] is None for r in table.rows if i < len(r))
                t.add_column(escape(str(col)), justify="right" if i and numeric else "left", no_wrap=numeric,
                             overflow="fold")
            for row in table.rows:  # cells are text, not markup: `panel[judge-x]` keeps its brackets
                t.add_row(*(escape(fmt(v)) for v in row))
            console.print(t)
            print_notes(table.notes, console)
        print_legend(whole.legend, console)


def print_legend(rows: list[list[str]], console: Console) -> None:
    """Name and meaning side by side; meanings wrap at the console's width under themselves."""
    if not rows:
        return
    console.print("[dim]Higher is better unless marked; n is how many samples have a value.[/dim]",
                  highlight=False)
    grid = RichTable.grid(padding=(0, 2), pad_edge=False)
    grid.add_column(style="cyan", no_wrap=True)
    grid.add_column(style="dim", overflow="fold")
    for name, text in rows:
        grid.add_row(escape(name), escape(text))
    console.print(grid)
    console.print()


def print_notes(notes: list[str], console: Console) -> None:
    for note in notes:  # wrapped at word boundaries, never cut
        console.print(f"[dim]{escape(note)}[/dim]", highlight=False)


def print_outcome(outcome: RunOutcome, output_format: str) -> None:
    summary = outcome.summary
    err = Console(stderr=True)
    if output_format == "json":
        print(json.dumps(to_jsonable(summary), indent=2, ensure_ascii=False))
    else:
        console = Console()
        print_tables(outcome.bench.tables(summary), console)
        print_notes([f"note: {note}" for note in summary.get("notes") or []], console)
        headline = outcome.bench.headline(summary)
        if headline:
            console.print(f"[bold]{escape(headline)}[/bold]", highlight=False)
    print_footer(outcome, err)
    for warning in outcome.bench.warnings(summary):
        print(warning, file=sys.stderr)


def print_footer(outcome: RunOutcome, console: Console) -> None:
    for judge, models in (outcome.summary.get("judges") or {}).items():
        if models:
            console.print(f"[dim]{escape(judge)}: {escape(', '.join(models))}[/dim]", highlight=False)
    if outcome.gateway is not None and outcome.gateway.usage.by_model:
        for line in usage_lines(outcome.gateway.usage.by_model, console.width):
            console.print(line, highlight=False, soft_wrap=True, markup=False)
    failed = sum(1 for r in outcome.results if r.errors)
    paths = outcome.paths
    if failed:
        where = f" (see the 'errors' column of {paths.csv})" if paths else ""
        console.print(f"[yellow]{failed} sample(s) had errors{escape(where)}[/yellow]", highlight=False)
    if paths is not None:  # one path a line: a long path may wrap, a label never breaks
        for label, path in (("results", paths.results), ("summary", paths.summary), ("table", paths.csv)):
            console.print(f"{label + ':':9s}{path}", soft_wrap=True, highlight=False, markup=False)


USAGE_COLUMNS = ("calls", "cached", "retries", "failed", "prompt tok", "output tok", "cost $")


def usage_lines(by_model: dict[str, ModelUsage], width: int) -> list[str]:
    """The LLM usage table as plain lines that fit `width`: one line per model when the names fit beside
    the numbers, else each model's full name on its own line with its numbers under it (never `openai/…`)."""
    rows = {model: [f"{u.calls:,}", f"{u.cached:,}", f"{u.retries:,}", f"{u.failures:,}", f"{u.prompt_tokens:,}",
                    f"{u.completion_tokens:,}", f"{u.cost:.4f}"] for model, u in sorted(by_model.items())}
    widths = [max([len(h)] + [len(r[i]) for r in rows.values()]) for i, h in enumerate(USAGE_COLUMNS)]

    def numbers(cells: Sequence[str]) -> str:
        return "  ".join(c.rjust(w) for c, w in zip(cells, widths, strict=True))

    name_width = max(len("model"), *(len(m) for m in rows))
    if name_width + 2 + len(numbers(USAGE_COLUMNS)) <= width:
        lines = ["LLM usage", f"{'model':<{name_width}}  {numbers(USAGE_COLUMNS)}"]
        lines += [f"{model:<{name_width}}  {numbers(cells)}" for model, cells in rows.items()]
        return lines
    indent = "  "
    lines = ["LLM usage (model, then its figures)", indent + numbers(USAGE_COLUMNS)]
    for model, cells in rows.items():
        lines += [model, indent + numbers(cells)]
    return lines

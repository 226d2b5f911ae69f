"""Print a run: its summary's tables for people (stdout), JSON for machines, usage and file paths on stderr.

Everything shown comes from the summary (the result contract), the headline line last. Everything is laid out for
the console's width (80 columns, or a pipe): wide tables are split into parts that repeat their label columns, LLM
usage puts long model names on their own line, and nothing is cut with `…`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table as RichTable

from ragjudge.formats.jsonl import to_jsonable

if TYPE_CHECKING:
    from ragjudge.engine.outputs import OutputPaths
    from ragjudge.engine.summary import Metric, Stat, Summary
    from ragjudge.llm.usage import ModelUsage


@dataclass
class LaidOutTable:
    """A table as the terminal and the report lay it out (rows of cells, notes, a legend); the result contract's own
    `engine.summary.Table` is what a bench declares, this is what is drawn from it."""

    title: str
    columns: list[str]
    rows: list[list[Any]]
    notes: list[str] = field(default_factory=list)
    legend: list[list[str]] = field(default_factory=list)
    """[name, what it means] pairs printed under the table (what each metric is, which way is better)."""

    def to_dict(self) -> dict[str, Any]:
        return to_jsonable(asdict(self))


ARROWS = {True: "↑", False: "↓", None: "·"}
"""Which way is better: higher, lower, neither (a rate that describes)."""


def fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def figure(stat: Stat | None, kind: str) -> Any:
    """A metric's value as a table cell: counts as whole numbers, times with their unit, the rest as floats."""
    if stat is None or stat.value is None:
        return None
    if kind == "count":
        return int(stat.value)
    if kind == "seconds":
        return f"{stat.value:.2f} s"
    return float(stat.value)


def legend(metrics: dict[str, Metric]) -> list[list[str]]:
    """[arrow and name, meaning]: what it measures, its kind when not a score, and which samples it counts; metrics
    that mean the same at several cut-offs (`hit@1`, `hit@5`...) share one line."""
    rows: list[list[str]] = []
    last: tuple[str, str] | None = None
    for name, m in metrics.items():
        text = m.description or name
        if m.kind not in ("score",):
            text += f" ({m.kind})"
        if m.counts:
            text += f"; n counts {m.counts}"
        key = (ARROWS[m.higher_is_better], text)
        family = _at_k(name)
        if rows and key == last and family is not None and family[0] == _at_k(rows[-1][0][2:].split(",")[0])[0]:
            rows[-1][0] += f", @{family[1]}"
            continue
        rows.append([f"{key[0]} {name}", text])
        last = key if family is not None and m.description else None
    return rows


def cutoff_grid(title: str, metrics: dict[str, Metric]) -> LaidOutTable | None:
    """Metrics all named FAMILY@k (R@5, nDCG@10...) over the same samples, at several cutoffs: one row per family,
    one column per k, as retrieval papers print them."""
    parsed = {name: _at_k(name) for name in metrics}
    if not metrics or any(p is None for p in parsed.values()):
        return None
    ks = sorted({k for _, k in parsed.values() if k is not None})  # type: ignore[misc]
    counts = {(m.n, m.errors) for m in metrics.values()}
    if len(ks) < 2 or len(counts) != 1 or any(m.std is not None for m in metrics.values()):
        return None
    families = list(dict.fromkeys(f for f, _ in parsed.values()))  # type: ignore[misc]
    first = {f: next(m for name, m in metrics.items() if parsed[name][0] == f) for f in families}  # type: ignore[index]
    rows = [[f, ARROWS[first[f].higher_is_better]] + [figure(metrics.get(f"{f}@{k}"), first[f].kind) for k in ks]
            for f in families]
    n, errors = counts.pop()
    title = title + (f" (each over {n}, {errors} errors)" if errors else "")
    return LaidOutTable(title, ["metric", ""] + [f"@{k}" for k in ks], rows,
                 legend=[[f"{ARROWS[first[f].higher_is_better]} {f}@k", first[f].description] for f in families])


def _at_k(name: str) -> tuple[str, int] | None:
    family, at, k = name.rpartition("@")
    return (family, int(k)) if at and family and k.isdigit() else None


def metric_tables(summary: Summary) -> list[LaidOutTable]:
    """The metrics: figures at several cut-offs as a grid (one row per family) and the others, if any, under it;
    else one row per metric."""
    at_k = {name: m for name, m in summary.metrics.items() if _at_k(name) is not None}
    if (grid := cutoff_grid(summary.title, at_k)) is not None:
        others = {name: m for name, m in summary.metrics.items() if name not in at_k}
        if not others:
            return [grid]
        rest = metric_table("", others)  # one legend, under both tables
        rest.legend, grid.legend = grid.legend + rest.legend, []
        return [grid, rest]
    return [metric_table(summary.title, summary.metrics)]


NOT_APPLICABLE_NOTE = ("n/a: samples the metric does not apply to (no passages, no reference, no answer), left out "
                       "of n and of the value, never counted as 0; each sample's reason is in the sample log")


def metric_table(title: str, metrics: dict[str, Metric]) -> LaidOutTable:
    with_std = any(m.std is not None for m in metrics.values())
    with_partial = any(m.details.get("partial_panels") for m in metrics.values())  # only when a panel lost a member
    with_na = any(m.not_applicable for m in metrics.values())  # only when a judge did not apply to some sample
    columns = ["metric", "", "value"] + (["std"] if with_std else []) + ["n", "errors"] + (
        ["n/a"] if with_na else []) + (["partial"] if with_partial else [])
    rows = []
    for name, m in metrics.items():
        rows.append([name, ARROWS[m.higher_is_better], figure(m, m.kind)] + ([m.std] if with_std else [])
                    + [m.n, m.errors] + ([m.not_applicable] if with_na else [])
                    + ([m.details.get("partial_panels", 0)] if with_partial else []))
    notes = ([NOT_APPLICABLE_NOTE] if with_na else []) + (
        ["partial: scores from a judge panel that fewer members answered than asked (--min-panel N requires "
         "N answers)"] if with_partial else [])
    return LaidOutTable(title, columns, rows, notes=notes, legend=legend(metrics))


def breakdown_tables(summary: Summary) -> list[LaidOutTable]:
    tables = []
    for breakdown in summary.breakdowns.values():
        if not breakdown.groups:
            continue
        shown = breakdown.columns or list(dict.fromkeys(m for g in breakdown.groups.values() for m in g.metrics))
        columns = [breakdown.label, "n"] + [f"{m} {ARROWS[summary.metrics[m].higher_is_better]}" for m in shown]
        rows = [[value, group.n] + [figure(group.metrics.get(m), summary.metrics[m].kind) for m in shown]
                for value, group in breakdown.groups.items()]
        tables.append(LaidOutTable(breakdown.title, columns, rows, notes=[breakdown.note] if breakdown.note else []))
    return tables


def summary_tables(summary: Summary) -> list[LaidOutTable]:
    """Everything the terminal shows of a summary, in order (the headline and notes come after)."""
    return (metric_tables(summary) if summary.metrics else []) + breakdown_tables(summary) + own_tables(summary)


def own_tables(summary: Summary) -> list[LaidOutTable]:
    """The bench's own tables, then the paper's figures, each saying its source, units and when it compares."""
    tables = [LaidOutTable(t.title, list(t.columns), [list(r) for r in t.rows], notes=list(t.notes)) for t in summary.tables]
    for ref in summary.reference:
        units = {"fraction": "fractions, as ours", "percent": "percentages (ours are fractions)",
                 "mixed": "units per column (see the notes)"}[ref.unit]
        notes = [*ref.notes, f"{ref.source}; {units}",
                 f"comparable with ours for {ref.comparable}" if ref.comparable else
                 "not comparable with this run's figures (shown for context)"]
        tables.append(LaidOutTable(ref.title, list(ref.columns), [list(r) for r in ref.rows], notes=notes))
    return tables


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _longest_line(text: str) -> int:
    """A cell may hold several lines (a value over its confidence interval): its width is its longest."""
    return max((len(line) for line in text.splitlines()), default=0)


def _split_to_width(table: LaidOutTable, width: int) -> list[LaidOutTable]:
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
        out.append(LaidOutTable(title, [table.columns[i] for i in keep], [[row[i] if i < len(row) else None for i in keep]
                                                                    for row in table.rows],
                         table.notes if n == len(parts) - 1 else []))
    return out


def print_tables(tables: list[LaidOutTable], console: Console) -> None:
    from rich import box

    for whole in tables:
        if not whole.rows:
            continue
        for table in _split_to_width(whole, console.width):
            if table.title:
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
    console.print("[dim]↑ higher is better, ↓ lower is better, · neither; n: samples with a value.[/dim]",
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


def print_summary(summary: Summary, console: Console) -> None:
    """The tables, the notes, then the headline line."""
    print_tables(summary_tables(summary), console)
    print_notes([f"note: {note}" for note in summary.notes], console)
    if summary.headline is not None:
        console.print(f"[bold]{escape(summary.headline.text)}[/bold]", highlight=False,
                      soft_wrap=True)  # one line, never wrapped: scripts read it with `tail -1`


def show_summary(summary: Summary, output_format: str) -> None:
    """Its JSON on stdout (`--format json`), or its tables and headline for people."""
    if output_format == "json":
        print(summary.to_json())
    else:
        print_summary(summary, Console())


def print_summaries(summaries: Sequence[Summary], output_format: str) -> None:
    """Several reports at once (`ragjudge cxm score`): a JSON list, or each report's tables in turn."""
    if output_format == "json":
        print(json.dumps([s.to_dict() for s in summaries], indent=2, ensure_ascii=False))
        return
    console = Console()
    for summary in summaries:
        print_summary(summary, console)
        console.print()
    for summary in summaries:
        for warning in summary.warnings:
            print(warning, file=sys.stderr)


def print_run(summary: Summary, output_format: str, *, failed: int = 0,
              usage: Mapping[str, ModelUsage] | None = None, paths: OutputPaths | None = None) -> None:
    """What `ragjudge eval` and `ragjudge judge` print for a finished run: the summary (tables and headline, or its
    JSON on stdout), then on stderr the judges' models, the LLM usage, the samples with errors and the files."""
    show_summary(summary, output_format)
    print_footer(summary, Console(stderr=True), failed=failed, usage=usage or {}, paths=paths)
    for warning in summary.warnings:
        print(warning, file=sys.stderr)


def print_footer(summary: Summary, console: Console, *, failed: int, usage: Mapping[str, ModelUsage],
                 paths: OutputPaths | None) -> None:
    run = summary.run
    for judge, models in ((run.models.get("judges") if run is not None else None) or {}).items():
        if models:
            console.print(f"[dim]{escape(judge)}: {escape(', '.join(models))}[/dim]", highlight=False)
    if usage:
        for line in usage_lines(dict(usage), console.width):
            console.print(line, highlight=False, soft_wrap=True, markup=False)
    if failed:
        where = f" (see the 'errors' column of {paths.csv})" if paths else ""
        console.print(f"[yellow]{failed} sample(s) had errors{escape(where)}[/yellow]", highlight=False)
    if paths is not None:  # one path a line: a long path may wrap, a label never breaks
        shown = (("results", paths.results), ("samples", paths.samples), ("summary", paths.summary),
                 ("table", paths.csv))
        for label, path in ((label, path) for label, path in shown if label != "results" or path.exists()):
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

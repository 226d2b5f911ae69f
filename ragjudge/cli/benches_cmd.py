"""`ragjudge benches`: the registered benchmarks; `ragjudge benches show NAME`: one bench's options and metrics."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from ragjudge.bench import registry
from ragjudge.bench.options import option_rows
from ragjudge.cli import common

app = typer.Typer(help="List the benchmarks ragjudge can run (built-in and installed plugins).",
                  invoke_without_command=True)

LLM_USE = {"no": "offline", "optional": "offline or LLM", "required": "needs an LLM"}


@app.callback()
def list_command(ctx: typer.Context, fmt: common.FormatOpt = "table") -> None:
    """List every bench: name, what it measures, whether it needs an LLM, where its data comes from."""
    if ctx.invoked_subcommand is not None:
        return
    common.check_format(fmt)
    rows = []
    for name, entry in registry.entries().items():
        cls = entry.load()
        rows.append({"name": name, "description": cls.description, "llm": LLM_USE[cls.llm],
                     "data": cls.data_help, "origin": entry.origin})
    if fmt == "json":
        print(json.dumps(rows, indent=2))
        return
    table = Table(title="ragjudge benches", title_justify="left")
    for col in ("bench", "what it measures", "LLM", "data"):
        table.add_column(col, overflow="fold")
    for row in rows:
        name = row["name"] + ("" if row["origin"] == "built-in" else f"\n({row['origin']})")
        table.add_row(name, row["description"], row["llm"], _first_sentence(row["data"]))
    Console().print(table)
    Console().print("[dim]ragjudge benches show NAME: options, metrics, breakdowns and how to get the data; "
                    "run with ragjudge eval --bench NAME -T key=value[/dim]")


@app.command("show")
def show_command(name: Annotated[str, typer.Argument(help="A bench name.")],
                 fmt: common.FormatOpt = "table") -> None:
    """Print a bench's options (with defaults and help), metrics, breakdowns and how to get its data."""
    common.check_format(fmt)
    entry = registry.get(name)
    cls = entry.load()
    options = option_rows(cls.Options)
    if fmt == "json":
        print(json.dumps({"name": name, "description": cls.description, "origin": entry.origin, "llm": cls.llm,
                          "data": cls.data_help,
                          "options": [dict(zip(("flag", "type", "default", "help"), row)) for row in options],
                          "metrics": [{"name": m.name, "description": m.description,
                                       "higher_is_better": m.higher_is_better} for m in cls.metrics],
                          "breakdowns": list(cls.breakdowns)}, indent=2))
        return
    console = Console()
    console.print(f"[bold]{name}[/bold] ({entry.origin}, {LLM_USE[cls.llm]}): {cls.description}")
    if cls.data_help:
        console.print(f"\n[bold]Data.[/bold] {cls.data_help}")
    table = Table(title="Options (ragjudge eval --bench " + name + " -T key=value)", title_justify="left")
    for col in ("option", "type", "default", "help"):
        table.add_column(col, overflow="fold")
    for row in options:
        table.add_row(*row)
    console.print(table)
    if cls.metrics:
        metrics = Table(title="Metrics", title_justify="left")
        metrics.add_column("metric")
        metrics.add_column("what it measures", overflow="fold")
        for m in cls.metrics:
            metrics.add_row(m.name, m.description + ("" if m.higher_is_better else " (lower is better)"))
        console.print(metrics)
    if cls.breakdowns:
        console.print("[bold]Breakdowns:[/bold] " + ", ".join(cls.breakdowns))


def _first_sentence(text: str) -> str:
    head, sep, _ = text.partition(". ")
    return head + ("." if sep else "")

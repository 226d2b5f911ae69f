"""`ragjudge benches`: the registered benchmarks; `ragjudge benches show NAME`: one bench's options and metrics."""

import json
import shutil
import textwrap
from typing import Annotated

import typer
from ragjudge.cli import common
from ragjudge.errors import UsageError

app = typer.Typer(help="List the benchmarks ragjudge can run (built-in and installed plugins).",
                  invoke_without_command=True, rich_markup_mode=None)

LLM_USE = {"no": "offline", "optional": "offline or LLM", "required": "needs an LLM"}


@app.callback()
def list_command(ctx: typer.Context, fmt: common.FormatOpt = "table") -> None:
    """List every bench: name, what it measures, whether it needs an LLM, where its data comes from."""
    from ragjudge.engine import registry

    if ctx.invoked_subcommand is not None:
        return
    common.check_format(fmt)
    rows = []
    for name, entry in registry.entries().items():
        if entry.card is not None:  # a built-in: listed without importing it
            rows.append({"name": name, "description": entry.card.description, "llm": LLM_USE[entry.card.llm],
                         "data": entry.card.data, "origin": entry.origin})
            continue
        try:
            cls = entry.load()
        except UsageError as exc:  # one broken plugin must not hide the other benches
            rows.append({"name": name, "description": f"cannot be loaded: {exc}", "llm": "-", "data": "-",
                         "origin": entry.origin})
            continue
        rows.append({"name": name, "description": cls.description, "llm": LLM_USE[cls.llm],
                     "data": cls.data_source or _first_sentence(cls.data_help), "origin": entry.origin})
    if fmt == "json":
        print(json.dumps(rows, indent=2))
        return
    print(_plain_table(rows, shutil.get_terminal_size().columns))
    print("\n`ragjudge benches show NAME`: options, metrics, breakdowns, how to get the data. "
          "Run: `ragjudge eval --bench NAME -T key=value`.")


@app.command("show")
def show_command(name: Annotated[str, typer.Argument(help="A bench name.")],
                 fmt: common.FormatOpt = "table") -> None:
    """Print a bench's options (with defaults and help), metrics, breakdowns and how to get its data."""
    from rich.console import Console
    from rich.markup import escape
    from rich.padding import Padding

    from ragjudge.engine import registry
    from ragjudge.engine.bench_options import option_rows

    common.check_format(fmt)
    entry = registry.get(name)
    cls = entry.load()
    options = option_rows(cls.Options)
    if fmt == "json":
        print(json.dumps({"name": name, "description": cls.description, "origin": entry.origin, "llm": cls.llm,
                          "data": cls.data_help,
                          "options": [dict(zip(("flag", "type", "default", "help"), row)) for row in options],
                          "metrics": [{"name": m.name, "description": m.description,
                                       "higher_is_better": m.higher_is_better, "kind": m.kind, "counts": m.counts}
                                      for m in cls.metrics],
                          "breakdowns": list(cls.breakdowns)}, indent=2))
        return
    console = Console()
    console.print(f"[bold]{name}[/bold] ({entry.origin}, {LLM_USE[cls.llm]}): {cls.description}", highlight=False)
    if cls.data_help:
        console.print("\n[bold]Data[/bold]")
        console.print(Padding(cls.data_help, (0, 0, 0, 2)), highlight=False)
    console.print(f"\n[bold]Options[/bold] (ragjudge eval --bench {name} -T key=value)")
    for how, kind, default, help_text in options:
        console.print(f"  [cyan]{how}[/cyan]  [dim]{kind}; default: {default}[/dim]", highlight=False)
        if help_text:
            console.print(Padding(help_text, (0, 0, 0, 6)), highlight=False)
    if cls.metrics:
        console.print("\n[bold]Metrics[/bold] (↑ higher is better, ↓ lower is better, · neither)")
        for m in cls.metrics:
            arrow = {True: "↑", False: "↓", None: "·"}[m.higher_is_better]
            kind = "" if m.kind == "score" else f" ({m.kind})"
            counts = f"; n: {m.counts}" if m.counts else ""
            console.print(Padding(f"{arrow} [cyan]{escape(m.name)}[/cyan]: {escape(m.description)}{kind}{counts}",
                                  (0, 0, 0, 2)), highlight=False)
    if cls.breakdowns:
        console.print("\n[bold]Breakdowns[/bold]: " + ", ".join(cls.breakdowns), highlight=False)


def _plain_table(rows: list[dict[str, str]], width: int) -> str:
    """Name, LLM use, then what it measures and its data wrapped under each other: plain text (rich's tables cost a
    twentieth of a second to import, a tenth of the command's budget)."""
    names = [r["name"] + ("" if r["origin"] == "built-in" else f" ({r['origin']})") for r in rows]
    left = max(len(n) for n in names + ["bench"]) + 2
    mid = max(len(r["llm"]) for r in rows + [{"llm": "LLM"}]) + 2
    text_width = max(30, width - left - mid - 1)
    lines = ["bench".ljust(left) + "LLM".ljust(mid) + "what it measures; where the data comes from"]
    for name, row in zip(names, rows):
        wrapped = textwrap.wrap(row["description"], text_width, break_on_hyphens=False) + textwrap.wrap(
            f"data: {row['data']}", text_width, break_on_hyphens=False)
        lines.append(name.ljust(left) + row["llm"].ljust(mid) + wrapped[0])
        lines += [" " * (left + mid) + line for line in wrapped[1:]]
    return "\n".join(lines)


def _first_sentence(text: str) -> str:
    head, sep, _ = text.partition(". ")
    return head + ("." if sep else "")

"""`ragjudge report`: a self-contained HTML report of one run, or a comparison of several on the same tasks."""

import webbrowser
from pathlib import Path
from typing import Annotated

import typer


def report_command(
    runs: Annotated[list[Path], typer.Argument(metavar="RUN", help="Run folders (`ragjudge eval --out`) or results files "
                                               "(`ragjudge judge --out`); several are compared with the first.")],
    out: Annotated[Path, typer.Option("--out", help="The HTML file to write.")] = Path("report.html"),
    label: Annotated[list[str] | None, typer.Option(
        "--label", metavar="<name>", help="A name for each run, in order (repeatable; default: the folder or file name).")] = None,
    correlate: Annotated[list[Path] | None, typer.Option(
        "--correlate", metavar="<path>", help="`ragjudge correlate --format json` output (or its --heatmap PNG) to show judges vs "
        "humans (repeatable).")] = None,
    open_it: Annotated[bool, typer.Option("--open", help="Open the report in the default browser.")] = False,
) -> None:
    """Write one HTML file (no server, works offline): overview, per-task detail, comparison, judges."""
    from ragjudge.report import build_report

    built = build_report(runs, out, labels=label or None, correlate=correlate or None)
    size = built.bytes / 1e6
    typer.echo(f"report: {built.path} ({built.n_tasks} tasks, {len(built.runs)} run(s), {size:.1f} MB, "
               f"{built.seconds:.1f} s)", err=True)
    if open_it:
        webbrowser.open(built.path.resolve().as_uri())

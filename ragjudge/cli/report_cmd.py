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
    to_label: Annotated[Path | None, typer.Option(
        "--to-label", metavar="<file>", help="`ragjudge label-sample`'s draw: adds a labelling mode showing those samples "
        "first (labels kept in the browser, downloaded as a ragjudge.labels/1 file).")] = None,
    human_labels: Annotated[list[Path] | None, typer.Option(
        "--human-labels", metavar="<file>", help="A person's labels of a run's samples (ragjudge.labels/1 JSONL or CSV), "
        "one per run in order (repeatable): the Judges tab shows each judge's agreement with them and each mean with "
        "its PPI++ interval; with several runs, Compare adds the PPI++ paired differences.")] = None,
    open_it: Annotated[bool, typer.Option("--open", help="Open the report in the default browser.")] = False,
) -> None:
    """Write one HTML file (no server, works offline): overview, per-task detail, comparison, judges."""
    from ragjudge.report import build_report

    ids = None
    if to_label is not None:
        from ragjudge.api.trust import read_label_sample

        ids = read_label_sample(to_label)
    built = build_report(runs, out, labels=label or None, correlate=correlate or None, to_label=ids,
                         human_labels=human_labels or None)
    size = built.bytes / 1e6
    typer.echo(f"report: {built.path} ({built.n_tasks} tasks, {len(built.runs)} run(s), {size:.1f} MB, "
               f"{built.seconds:.1f} s)", err=True)
    if open_it:
        webbrowser.open(built.path.resolve().as_uri())

"""`ragjudge export`: ragjudge results in another tool's format (InspectorRAGet)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ragjudge.errors import UsageError

FORMATS = ("inspectorraget",)


def export_command(
    results: Annotated[list[str], typer.Argument(
        metavar="[MODEL_ID=]RESULTS",
        help="[MODEL_ID=]RESULTS: ragjudge results.jsonl files or run folders, one per model (MODEL_ID defaults "
        "to the run's generator, else the folder or file name).")],
    to: Annotated[str, typer.Option("--to", help="Target format: inspectorraget.")] = "inspectorraget",
    out: Annotated[Path, typer.Option("--out", help="File to write (InspectorRAGet: a .json to open in its UI).")
                   ] = Path("ragjudge-inspectorraget.json"),
    model_id: Annotated[str | None, typer.Option("--model-id", help="Model id for a single RESULTS given without "
                                                 "MODEL_ID=.")] = None,
    name: Annotated[str | None, typer.Option("--name", help="Experiment name shown in the UI.")] = None,
) -> None:
    """Write ragjudge results (tasks, documents, models, judge metrics) as an InspectorRAGet experiment file."""
    from ragjudge import __version__
    from ragjudge.correlation.sources import default_model_id, parse_source, read_results, results_file
    from ragjudge.formats.files import output_file
    from ragjudge.formats.inspectorraget import write_inspectorraget
    from ragjudge.formats.inspectorraget_export import from_results

    if to not in FORMATS:
        raise UsageError(f"--to must be one of {', '.join(FORMATS)}, got {to!r}")
    output_file(out, "InspectorRAGet file (--out)")
    sources = [parse_source(spec) for spec in results]
    if model_id and (len(sources) != 1 or sources[0][0] is not None):
        raise UsageError("--model-id applies to a single RESULTS given without MODEL_ID=")
    runs = []
    seen: dict[str, Path] = {}
    for given, path in sources:
        file = results_file(path)
        mid = given or model_id or default_model_id(path)
        if mid in seen:
            raise UsageError(f"model id {mid!r} is used for both {seen[mid]} and {file}; name them "
                             f"MODEL_ID=RESULTS")
        seen[mid] = file
        runs.append((mid, [record for _, record in read_results(file)]))
    data = from_results(runs, name=name or out.stem,
                        description=f"ragjudge {__version__} results: {', '.join(str(p) for p in seen.values())}")
    write_inspectorraget(out, data)
    typer.echo(
        f"wrote {out}: {len(data.tasks)} tasks, {len(data.models)} model(s) ({', '.join(seen)}), "
        f"{len(data.metrics)} metrics, {len(data.documents)} documents", err=True)

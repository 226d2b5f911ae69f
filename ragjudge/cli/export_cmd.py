"""`ragjudge export`: ragjudge results in another tool's format (InspectorRAGet, MTRAGEval submissions)."""

from pathlib import Path
from typing import Annotated

import typer

from ragjudge.errors import UsageError

FORMATS = ("inspectorraget", "mtrageval-a", "mtrageval-b", "mtrageval-c")


def export_command(
    results: Annotated[list[str], typer.Argument(
        metavar="[MODEL_ID=]RESULTS",
        help="[MODEL_ID=]RESULTS: ragjudge runs, one per model: run folders, results files, or what `ragjudge "
        "judge --out` was given (MODEL_ID defaults to the run's generator, else the folder or file name).")],
    to: Annotated[str, typer.Option("--to", "--format", help="Target format: inspectorraget, or a SemEval-2026 "
                                    "MTRAGEval submission: mtrageval-a (retrieval: RESULTS is a retrieval run), "
                                    "mtrageval-b (generation from the reference passages), mtrageval-c (full "
                                    "RAG: answers generated with -T setting=rag).")] = "inspectorraget",
    out: Annotated[Path | None, typer.Option("--out", help="File to write (InspectorRAGet: a .json to open in its "
                                             "UI, default ragjudge-inspectorraget.json; MTRAGEval: a .jsonl, "
                                             "default <format>.jsonl).")] = None,
    tasks: Annotated[Path | None, typer.Option("--tasks", help="MTRAGEval: the task's input file; the submission "
                                               "must answer exactly its tasks (checked), and takes each task's "
                                               "Collection from it where RESULTS does not say.")] = None,
    model_id: Annotated[str | None, typer.Option("--model-id", help="Model id for a single RESULTS given without "
                                                 "MODEL_ID=.")] = None,
    name: Annotated[str | None, typer.Option("--name", help="Experiment name shown in the UI.")] = None,
) -> None:
    """Write ragjudge results as an InspectorRAGet experiment file, or as a SemEval-2026 MTRAGEval submission."""
    from ragjudge.version import __version__
    from ragjudge.correlation.sources import default_model_id, parse_source, read_results, results_file
    from ragjudge.formats.files import output_file
    from ragjudge.formats.inspectorraget import write_inspectorraget
    from ragjudge.formats.inspectorraget_export import from_results

    if to not in FORMATS:
        raise UsageError(f"--to must be one of {', '.join(FORMATS)}, got {to!r}")
    if to.startswith("mtrageval-"):
        return export_mtrageval(results, to, out or Path(f"{to}.jsonl"), tasks, model_id, name)
    if tasks is not None:
        raise UsageError("--tasks is for --to mtrageval-a|b|c")
    out = out or Path("ragjudge-inspectorraget.json")
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


def export_mtrageval(results: list[str], to: str, out: Path, tasks: Path | None, model_id: str | None,
                     name: str | None) -> None:
    """One RESULTS (a retrieval run for task A, a ragjudge results file or run folder for B and C) → one
    submission file, which the benchmark's format_checker.py accepts."""
    from ragjudge.correlation.sources import parse_source, read_results, results_file
    from ragjudge.formats.files import output_file
    from ragjudge.formats.jsonl import write_jsonl
    from ragjudge.formats.mtrageval import TASKS, submission

    if len(results) != 1 or model_id or name:
        raise UsageError(f"--to {to} writes one submission: give one RESULTS (no MODEL_ID=, --model-id or --name)")
    given, path = parse_source(results[0])
    if given is not None:
        raise UsageError(f"--to {to} writes one submission: give one RESULTS (no MODEL_ID=, --model-id or --name)")
    if out.suffix != ".jsonl":
        raise UsageError(f"--out {out}: an MTRAGEval submission is a .jsonl file (the format checker requires it)")
    output_file(out, "MTRAGEval submission (--out)")
    task = TASKS[to]
    source = path if task == "A" else results_file(path)
    if task == "A" and not source.exists():
        raise UsageError(f"--to mtrageval-a reads a retrieval run (a retrieval bench's run folder, or ragjudge "
                         f"retrieve --out): {source} is not one")
    lines = submission(task, source, tasks, [] if task == "A" else read_results(source))
    write_jsonl(out, lines)
    empty = sum(not line["contexts"] for line in lines)
    typer.echo(f"wrote {out}: MTRAGEval task {task}, {len(lines)} tasks"
               + (f" ({empty} without passages)" if empty else ""), err=True)

"""`ragjudge export`: ragjudge results in another tool's format (InspectorRAGet, MTRAGEval submissions); built on
`ragjudge.api.export`, this module only parses the flags and says what was written."""

from pathlib import Path
from typing import Annotated

import typer


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
    from ragjudge.api import export
    from ragjudge.engine.bench_options import CLI

    done = export(results, to=to, out=out, tasks=tasks, model_id=model_id, name=name, spelling=CLI)
    if done.to == "inspectorraget":
        typer.echo(f"wrote {done.out}: {done.tasks} tasks, {len(done.models)} model(s) ({', '.join(done.models)}), "
                   f"{done.metrics} metrics, {done.documents} documents", err=True)
    else:
        empty = f" ({done.without_passages} without passages)" if done.without_passages else ""
        typer.echo(f"wrote {done.out}: MTRAGEval task {done.to[-1].upper()}, {done.tasks} tasks{empty}", err=True)

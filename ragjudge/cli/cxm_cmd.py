"""`ragjudge cxm`: `score` every CXMArena task a system has predictions for at once, and `fetch` the public release.

`cxm score` is `ragjudge eval --bench cxm-TASK --data D -T predictions=FILE` (`ragjudge.api.prepare_run`) for each
task with a `<data>/predictions/<task>.jsonl`, with the same option names, writing nothing and printing one summary
per task.
"""

from pathlib import Path
from typing import Annotated, Any

import typer

from ragjudge.bench.cxm.tasks import TASKS, bench_class, default_predictions, task_name
from ragjudge.cli import common
from ragjudge.errors import UsageError

app = typer.Typer(help="CXMArena conversation-analytics tasks: score predictions of every task at once, fetch the "
                       "public release. One task, or a model: `ragjudge eval --bench cxm-TASK`.",
                  no_args_is_help=True, rich_markup_mode=None)

BASELINE_ALONE = "kb-refinement"
"""The one task that scores without a predictions file: the paper's embedding baseline over the KB (offline)."""


def _plan(data: Path, task: str | None, options: dict[str, str]) -> list[tuple[str, dict[str, Any]]]:
    """(task, its -T options) for each task scored: `--task`, or every task with `<data>/predictions/<task>.jsonl`.
    A -T key goes to the tasks whose bench has that option; one no task scored has is an error."""
    if task is None:
        if "predictions" in options:
            raise UsageError("-T predictions names one task's file: give --task")
        tasks = [t for t in TASKS if default_predictions(data, t).exists()]
        if not tasks:
            raise UsageError(f"no predictions in {data / 'predictions'} "
                             f"(expected <task>.jsonl for tasks: {', '.join(TASKS)})")
    else:
        tasks = [task_name(task)]
    fields = {t: bench_class(t).Options.model_fields for t in tasks}
    for key in options:
        if not any(key in fields[t] for t in tasks):
            where = f"--task {tasks[0]}" if task is not None else f"any task scored here ({', '.join(tasks)})"
            raise UsageError(f"-T {key} is not an option of {where}")
    plan = []
    for t in tasks:
        mine = {k: v for k, v in options.items() if k in fields[t]}
        if "predictions" not in mine and (default_predictions(data, t).exists() or t != BASELINE_ALONE):
            mine["predictions"] = str(default_predictions(data, t))
        plan.append((t, mine))
    return plan


@app.command("score")
def score_command(
    data: Annotated[Path, typer.Option("--data", help="CXMArena data folder: the release layout "
                                       "(`ragjudge cxm fetch`) or ragjudge's plain JSONL files.")],
    task: Annotated[str | None, typer.Option("--task", help=f"Score one task (one of: {', '.join(TASKS)}; "
                                             "default: every task with <data>/predictions/<task>.jsonl).")] = None,
    task_args: Annotated[list[str] | None, typer.Option("-T", "--task-arg", metavar="<key=value>", help="An option of "
                                                        "the tasks' benches KEY=VALUE (repeatable), as in `ragjudge "
                                                        "eval`: -T predictions=FILE (with --task), -T ks=1,3, "
                                                        "-T protocol=paper, -T baseline=false...; `ragjudge benches "
                                                        "show cxm-TASK` lists them.")] = None,
    fmt: common.FormatOpt = "table",
) -> None:
    """Score existing predictions offline and print every metric (nothing is written): for each task, what `ragjudge
    eval --bench cxm-TASK -T predictions=<data>/predictions/TASK.jsonl` prints (`--format json`: a JSON list of
    summaries). KB refinement without a predictions file scores the paper's embedding baseline alone."""
    from ragjudge.api import prepare_run
    from ragjudge.bench.cxm.tasks import bench_name
    from ragjudge.engine.bench_options import CLI, parse_task_args
    from ragjudge.engine.render import print_summaries
    from ragjudge.formats.files import input_folder

    fmt = common.check_format(fmt)
    input_folder(data, "CXMArena data folder")
    summaries = []
    for name, options in _plan(data, task, parse_task_args(task_args)):
        prepared = prepare_run(bench_name(name), data=str(data), options=options, spelling=CLI)
        slow = "predictions" not in options  # the baseline embeds the KB: minutes the first time
        summaries.append(prepared.execute(None, show_progress=slow and fmt == "table").summary)
    print_summaries(summaries, fmt)
    if fmt == "json":  # the tables' format prints them after the tables
        for summary in summaries:
            for warning in summary.warnings:
                typer.echo(warning, err=True)
    raise typer.Exit(1 if any(s.n_errors for s in summaries) else 0)


@app.command("fetch")
def fetch_command(
    out: Annotated[Path, typer.Option("--out", help="Folder to write <Config>/<split>.jsonl into.")],
    task: Annotated[str | None, typer.Option("--task", help="Only the configs one task needs.")] = None,
) -> None:
    """Download the public CXMArena release (Hugging Face: sprinklr-huggingface/CXM_Arena) for offline use."""
    from ragjudge.bench.cxm.hub import TASK_CONFIGS, fetch
    from ragjudge.formats.files import output_folder

    configs = list(TASK_CONFIGS[task_name(task)]) if task else None
    output_folder(out, "--out folder")
    for path in fetch(out, configs):
        typer.echo(str(path))

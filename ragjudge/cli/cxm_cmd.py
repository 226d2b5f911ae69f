"""`ragjudge cxm`: CXMArena conversation-analytics tasks. `score` existing predictions, `run` a model,
`fetch` the public release. `ragjudge eval --bench cxm --task TASK` dispatches to `run_from_eval`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from ragjudge.cli import common
from ragjudge.cxm import tasks as T
from ragjudge.cxm.report import print_reports
from ragjudge.errors import UsageError

app = typer.Typer(help="CXMArena conversation-analytics tasks: intent, agent quality, tool calls, answer "
                       "classification, KB refinement, article search.", no_args_is_help=True)

TaskOpt = Annotated[str, typer.Option("--task", help=f"One of: {', '.join(T.TASKS)}.")]
DataOpt = Annotated[Path, typer.Option("--data", help="CXMArena data folder: the release layout "
                                       "(`ragjudge cxm fetch`) or ragjudge's plain JSONL files.")]
TaxonomyOpt = Annotated[str | None, typer.Option("--taxonomy", help="Intent taxonomy to use (default: every "
                                                 "taxonomy the data has gold intents for).")]
KsOpt = Annotated[str, typer.Option("--k", help="Article search cut-offs for P@k / R@k, comma-separated.")]


def _ints(value: str, what: str) -> tuple[int, ...]:
    try:
        items = tuple(int(v) for v in (common.split_list(value) or []))
    except ValueError:
        raise UsageError(f"{what} must be comma-separated whole numbers, got {value!r}") from None
    if not items or any(i < 1 for i in items):
        raise UsageError(f"{what} must be positive whole numbers, got {value!r}")
    return items


def _format(fmt: str) -> str:
    if fmt not in ("table", "json"):
        raise UsageError(f"--format must be table or json, got {fmt!r}")
    return fmt


def _data(data: Path) -> Path:
    if not data.is_dir():
        raise UsageError(f"--data {data} is not a folder")
    return data


@app.command("score")
def score_command(
    data: DataOpt,
    task: Annotated[str | None, typer.Option("--task", help="Score one task (default: every task with "
                                             "<data>/predictions/<task>.jsonl).")] = None,
    predictions: Annotated[Path | None, typer.Option("--predictions", help="Predictions JSONL "
                                                     "(default: <data>/predictions/<task>.jsonl).")] = None,
    taxonomy: TaxonomyOpt = None,
    k: KsOpt = "1,3,5,10",
    baseline: Annotated[bool, typer.Option("--baseline/--no-baseline", help="KB refinement: also sweep the "
                                           "embedding-similarity baseline (bundled MiniLM, offline).")] = True,
    embedding_model: Annotated[str | None, typer.Option("--embedding-model", help="KB baseline embedding model "
                                                        "(default: bundled all-MiniLM-L6-v2).")] = None,
    fmt: common.FormatOpt = "table",
) -> None:
    """Score existing predictions offline and print every metric."""
    fmt = _format(fmt)
    data = _data(data)
    options = T.ScoreOptions(taxonomy=taxonomy, ks=_ints(k, "--k"), baseline=baseline, embedding_model=embedding_model)
    if task is None:
        if predictions is not None:
            raise UsageError("--predictions needs --task")
        reports = T.score_all(data, options)
    else:
        reports = T.score_task(T.task_name(task), data, predictions, options)
    print_reports(reports, fmt)
    raise typer.Exit(1 if any(r.problems for r in reports) else 0)


@app.command("run")
def run_command(
    task: TaskOpt,
    data: DataOpt,
    model: Annotated[str | None, typer.Option("--model", help="Model under test: a litellm model (intent, quality, "
                                              "tool-calls, answer replies), or bm25 / dense / an embedding model "
                                              "(article-search, kb-refinement).")] = None,
    judge_model: Annotated[str | None, typer.Option("--judge-model", help="Judge: LLM-verified intent match, "
                                                    "answer classification.")] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Output folder (default: runs/cxm-<task>-<model>); "
                                             "rerunning with the same folder resumes.")] = None,
    taxonomy: TaxonomyOpt = None,
    tool_counts: Annotated[str, typer.Option("--tool-counts", help="Numbers of offered tools.")] = "16,32,64,96,128",
    force_tool_call: Annotated[bool, typer.Option("--force-tool-call", help="Require a tool call "
                                                  "(tool_choice=required).")] = False,
    retriever: Annotated[str, typer.Option("--retriever", help="Retrieval pipeline (name or YAML path, e.g. bm25, "
                                           "dense, hybrid) for article search and for the articles behind generated "
                                           "answers; a name that is no pipeline is a dense embedding model.")] = "bm25",
    top_k: Annotated[int, typer.Option("--top-k", min=1, help="Articles retrieved for generated answers.")] = 5,
    query: Annotated[str, typer.Option("--query", help="Retrieval query for generated answers: last_turn, "
                                       "all_user_turns or full_conversation.")] = "all_user_turns",
    k: KsOpt = "1,3,5,10",
    limit: common.LimitOpt = None,
    fmt: common.FormatOpt = "table",
    concurrency: common.ConcurrencyOpt = 8,
    cache_dir: common.CacheDirOpt = None,
    no_cache: common.NoCacheOpt = False,
    api_base: common.ApiBaseOpt = None,
    judge_dir: common.JudgeDirOpt = None,
    pipeline_dir: Annotated[list[str] | None, typer.Option("--pipeline-dir", help="Extra folder of pipeline "
                                                           "specs (repeatable).")] = None,
    max_retries: common.RetriesOpt = 6,
    timeout: common.TimeoutOpt = 120.0,
) -> None:
    """Run a model on one task, then score it (outputs resume on rerun)."""
    settings = T.RunSettings(
        task=T.task_name(task), data=_data(data), model=model, judge_model=judge_model, out=out, taxonomy=taxonomy,
        tool_counts=_ints(tool_counts, "--tool-counts"), forced_tool_call=force_tool_call, retriever=retriever,
        k=top_k, query=query, ks=_ints(k, "--k"), limit=limit, judge_dirs=judge_dir or [],
        pipeline_dirs=pipeline_dir or [],
        concurrency=concurrency,
        cache_dir=cache_dir, use_cache=not no_cache, api_base=api_base, max_retries=max_retries, timeout=timeout)
    _run_and_report(settings, _format(fmt))


def _run_and_report(settings: T.RunSettings, fmt: str) -> None:
    outcome = T.run_task(settings)
    print_reports(outcome.reports, fmt)
    err = Console(stderr=True)
    if outcome.gateway is not None and outcome.gateway.usage.by_model:
        t = Table(title="LLM usage")
        for col in ("model", "calls", "cached", "retries", "failed", "prompt tok", "completion tok", "cost $"):
            t.add_column(col, justify="right")
        for name, u in sorted(outcome.gateway.usage.by_model.items()):
            t.add_row(name, str(u.calls), str(u.cached), str(u.retries), str(u.failures), str(u.prompt_tokens),
                      str(u.completion_tokens), f"{u.cost:.4f}")
        err.print(t)
    err.print(f"[dim]predictions: {outcome.out / 'predictions.jsonl'}  metrics: {outcome.out / 'metrics.json'}[/dim]")
    raise typer.Exit(outcome.exit_code)


def run_from_eval(*, task: str | None, data: str | None, gen: str, judge_models: str | None, pipeline: str | None,
                  out: Path | None, limit: int | None, fmt: str, concurrency: int, cache_dir: str | None,
                  no_cache: bool, api_base: str | None, judge_dir: list[str] | None, max_retries: int,
                  timeout: float, force_tool_call: bool = False) -> None:
    """`ragjudge eval --bench cxm --task TASK --data DIR --gen MODEL [--judge-models J] [--pipeline P]`.

    --gen is the model under test (for article-search the retrieval pipeline, for kb-refinement the
    embedding model); --judge-models names the one judge model; other settings take `cxm run`'s defaults."""
    if task is None:
        raise UsageError(f"--bench cxm needs --task ({', '.join(T.TASKS)})")
    if data is None:
        raise UsageError("--bench cxm needs --data DIR (a CXMArena folder; `ragjudge cxm fetch --out DIR` gets one)")
    judges = common.split_list(judge_models) or []
    if len(judges) > 1:
        raise UsageError(f"--bench cxm takes one judge model, got {len(judges)}: {', '.join(judges)}")
    name = T.task_name(task)
    if pipeline and name != "answer-classification":
        hint = " (for article-search the pipeline is --gen)" if name == "article-search" else ""
        raise UsageError(f"--pipeline is for --task answer-classification, the articles behind generated replies{hint}")
    settings = T.RunSettings(
        task=name, data=_data(Path(data)), model=gen, judge_model=judges[0] if judges else None, out=out,
        retriever=pipeline or "bm25", limit=limit, judge_dirs=judge_dir or [], forced_tool_call=force_tool_call,
        concurrency=concurrency, cache_dir=cache_dir, use_cache=not no_cache, api_base=api_base,
        max_retries=max_retries, timeout=timeout)
    _run_and_report(settings, _format(fmt))


@app.command("fetch")
def fetch_command(
    out: Annotated[Path, typer.Option("--out", help="Folder to write <Config>/<split>.jsonl into.")],
    task: Annotated[str | None, typer.Option("--task", help="Only the configs one task needs.")] = None,
) -> None:
    """Download the public CXMArena release (Hugging Face: sprinklr-huggingface/CXM_Arena) for offline use."""
    from ragjudge.cxm.hub import TASK_CONFIGS, fetch

    configs = list(TASK_CONFIGS[T.task_name(task)]) if task else None
    for path in fetch(out, configs):
        typer.echo(str(path))

"""`ragjudge cxm`: thin commands over the CXMArena benches. `score` existing predictions (every task that has
<data>/predictions/<task>.jsonl, nothing written), `run` one task (the same as `ragjudge eval --bench
cxm-<task>`), `fetch` the public release."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.console import Console

from ragjudge.bench.base import default_out
from ragjudge.bench.cxm.base import TASKS, default_predictions, task_name
from ragjudge.bench.cxm.benches import BY_TASK
from ragjudge.cli import common
from ragjudge.engine import EngineOptions, OutputPaths, run_bench
from ragjudge.engine.render import print_outcome, print_tables
from ragjudge.errors import UsageError
from ragjudge.formats.files import input_folder, output_folder

app = typer.Typer(help="CXMArena conversation-analytics tasks: intent, agent quality, tool calls, answer "
                       "classification, KB refinement, article search.", no_args_is_help=True,
                  rich_markup_mode=None)

TaskOpt = Annotated[str, typer.Option("--task", help=f"One of: {', '.join(TASKS)}.")]
DataOpt = Annotated[Path, typer.Option("--data", help="CXMArena data folder: the release layout "
                                       "(`ragjudge cxm fetch`) or ragjudge's plain JSONL files.")]
TaxonomyOpt = Annotated[str | None, typer.Option("--taxonomy", help="Intent taxonomy to use (default: every "
                                                 "taxonomy the data has gold intents for).")]
KsOpt = Annotated[str | None, typer.Option("--k", help="Retrieval cut-offs, comma-separated [default: 1,3,5,10 "
                                           "for article search, 10,20 for multi-turn retrieval].")]
ProtocolOpt = Annotated[str | None, typer.Option("--protocol", help="Intent and quality: which figures lead, "
                                                 "ragjudge (default) or paper (CXMArena's evaluator); both are "
                                                 "printed.")]


def _ints(value: str | None, what: str) -> list[int] | None:
    if value is None:
        return None
    try:
        items = [int(v) for v in (common.split_list(value) or [])]
    except ValueError:
        raise UsageError(f"{what} must be comma-separated whole numbers, got {value!r}") from None
    if not items or any(i < 1 for i in items):
        raise UsageError(f"{what} must be positive whole numbers, got {value!r}")
    return items


def _options(task: str, given: dict[str, tuple[str, Any]]) -> Any:
    """The task bench's Options from the flags given (option → (flag, value)); a flag the task does not use
    is an error."""
    cls = BY_TASK[task]
    values = {}
    for key, (flag, value) in given.items():
        if value is None:
            continue
        if key not in cls.Options.model_fields:
            raise UsageError(f"{flag} is not used by --task {task}")
        values[key] = value
    try:
        return cls.Options.model_validate(values)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise UsageError(f"{'.'.join(map(str, err['loc']))}: {err['msg']}") from None


@app.command("score")
def score_command(
    data: DataOpt,
    task: Annotated[str | None, typer.Option("--task", help="Score one task (default: every task with "
                                             "<data>/predictions/<task>.jsonl).")] = None,
    predictions: Annotated[Path | None, typer.Option("--predictions", help="Predictions JSONL "
                                                     "(default: <data>/predictions/<task>.jsonl).")] = None,
    taxonomy: TaxonomyOpt = None,
    k: KsOpt = None,
    protocol: ProtocolOpt = None,
    baseline: Annotated[bool, typer.Option("--baseline/--no-baseline", metavar="", help="KB refinement: also sweep the "
                                           "embedding-similarity baseline (bundled MiniLM, offline).")] = True,
    embedding_model: Annotated[str | None, typer.Option("--embedding-model", help="KB baseline embedding model "
                                                        "(default: bundled all-MiniLM-L6-v2).")] = None,
    fmt: common.FormatOpt = "table",
) -> None:
    """Score existing predictions offline and print every metric (nothing is written)."""
    fmt = common.check_format(fmt)
    input_folder(data, "CXMArena data folder")
    if task is None:
        if predictions is not None:
            raise UsageError("--predictions needs --task")
        tasks = [t for t in TASKS if default_predictions(data, t).exists()]
        if not tasks:
            raise UsageError(f"no predictions in {data / 'predictions'} "
                             f"(expected <task>.jsonl for tasks: {', '.join(TASKS)})")
    else:
        tasks = [task_name(task)]
    reports: list[dict[str, Any]] = []
    tables = []
    for name in tasks:
        path = predictions or default_predictions(data, name)
        from_file = predictions is not None or path.exists() or name != "kb-refinement"
        if not from_file and not baseline:
            raise UsageError(f"nothing to score: {path} does not exist and the baseline is off")
        given = {"data": ("--data", str(data)), "predictions": ("--predictions", str(path) if from_file else None)}
        if name == "intent":
            given["taxonomy"] = ("--taxonomy", taxonomy)
        if name in ("intent", "quality"):
            given["protocol"] = ("--protocol", protocol)
        if name in ("article-search", "multiturn-retrieval"):
            given["ks"] = ("--k", _ints(k, "--k"))
        if name == "kb-refinement":
            given.update(baseline=("--baseline", baseline), gen=("--embedding-model", embedding_model))
        bench = BY_TASK[name](_options(name, given))
        outcome = run_bench(bench, EngineOptions(show_progress=False), paths=None)
        reports += outcome.summary["reports"]
        tables += bench.tables(outcome.summary)
        for warning in bench.warnings(outcome.summary):
            print(warning, file=sys.stderr)
    if fmt == "json":
        print(json.dumps(reports, indent=2, ensure_ascii=False))
    else:
        print_tables(tables, Console())
    raise typer.Exit(1 if any(r["problems"] for r in reports) else 0)


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
    tool_counts: Annotated[str | None, typer.Option("--tool-counts", help="Numbers of offered tools "
                                                    "[default: 16,32,64,96,128].")] = None,
    force_tool_call: Annotated[bool, typer.Option("--force-tool-call", metavar="", help="Require a tool call "
                                                  "(tool_choice=required).")] = False,
    retriever: Annotated[str | None, typer.Option("--retriever", help="Retrieval pipeline (name or YAML path, e.g. "
                                                  "bm25, dense, hybrid) for article search and for the articles "
                                                  "behind generated answers; a name that is no pipeline is a dense "
                                                  "embedding model [default: bm25].")] = None,
    top_k: Annotated[int | None, typer.Option("--top-k", min=1, help="Articles retrieved for generated answers "
                                              "[default: 5].")] = None,
    query: Annotated[str | None, typer.Option("--query", help="Retrieval query: last_turn, all_user_turns, "
                                              "full_conversation, or (multi-turn retrieval) llm "
                                              "[default: all_user_turns].")] = None,
    k: KsOpt = None,
    chunk: Annotated[int | None, typer.Option("--chunk", min=0, help="Split KB articles into chunks of this many "
                                              "characters (article search, multi-turn retrieval and answers).")
                     ] = None,
    protocol: ProtocolOpt = None,
    rewrite_model: Annotated[str | None, typer.Option("--rewrite-model", help="Multi-turn retrieval: the LLM that "
                                                      "writes each turn's query (-T query=llm).")] = None,
    limit: common.LimitOpt = None,
    fmt: common.FormatOpt = "table",
    concurrency: common.ConcurrencyOpt = 8,
    cache_dir: common.CacheDirOpt = None,
    no_cache: common.NoCacheOpt = False,
    api_base: common.ApiBaseOpt = None,
    judge_dir: common.JudgeDirOpt = None,
    pipeline_dir: Annotated[list[str] | None, typer.Option("--pipeline-dir", metavar="<dir>", help="Extra folder of pipeline "
                                                           "specs (repeatable).")] = None,
    max_retries: common.RetriesOpt = 6,
    timeout: common.TimeoutOpt = 120.0,
    models: common.ModelsOpt = None,
    rpm: common.RpmOpt = None,
    tpm: common.TpmOpt = None,
    no_preflight: common.NoPreflightOpt = False,
) -> None:
    """Run a model on one task, then score it (the same as `ragjudge eval --bench cxm-<task>`; resumes on rerun)."""
    fmt = common.check_format(fmt)
    input_folder(data, "CXMArena data folder")
    name = task_name(task)
    given: dict[str, tuple[str, Any]] = {"data": ("--data", str(data))}
    if name in ("article-search", "multiturn-retrieval"):  # the system under test is the retrieval pipeline
        given["pipeline"] = ("--model" if model else "--retriever", model or retriever)
    else:
        given.update(gen=("--model", model), pipeline=("--retriever", retriever))
    given |= {
        "judge_models": ("--judge-model", [judge_model] if judge_model else None),
        "taxonomy": ("--taxonomy", taxonomy), "tool_counts": ("--tool-counts", _ints(tool_counts, "--tool-counts")),
        "force_tool_call": ("--force-tool-call", force_tool_call or None), "k": ("--top-k", top_k),
        "query": ("--query", query), "ks": ("--k", _ints(k, "--k")), "judge_dir": ("--judge-dir", judge_dir),
        "pipeline_dir": ("--pipeline-dir", pipeline_dir), "chunk": ("--chunk", chunk),
        "protocol": ("--protocol", protocol), "rewrite_model": ("--rewrite-model", rewrite_model),
    }
    cls = BY_TASK[name]
    bench = cls(_options(name, given), label=f"cxm-{name}")
    engine = EngineOptions(limit=limit, concurrency=concurrency, cache_dir=cache_dir, use_cache=not no_cache,
                           api_base=api_base, max_retries=max_retries, timeout=timeout, models=models, rpm=rpm,
                           tpm=tpm, preflight=not no_preflight)
    outcome = run_bench(bench, engine, OutputPaths.in_folder(output_folder(out or default_out(bench), "--out folder")))
    print_outcome(outcome, fmt)
    raise typer.Exit(outcome.exit_code)


@app.command("fetch")
def fetch_command(
    out: Annotated[Path, typer.Option("--out", help="Folder to write <Config>/<split>.jsonl into.")],
    task: Annotated[str | None, typer.Option("--task", help="Only the configs one task needs.")] = None,
) -> None:
    """Download the public CXMArena release (Hugging Face: sprinklr-huggingface/CXM_Arena) for offline use."""
    from ragjudge.bench.cxm.hub import TASK_CONFIGS, fetch

    configs = list(TASK_CONFIGS[task_name(task)]) if task else None
    output_folder(out, "--out folder")
    for path in fetch(out, configs):
        typer.echo(str(path))

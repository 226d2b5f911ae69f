"""`ragjudge cxm`: thin commands over the CXMArena benches. `score` existing predictions (every task that has
<data>/predictions/<task>.jsonl, nothing written; one summary per task), `run` one task (the same as `ragjudge
eval --bench cxm-<task>`, with its flags: --gen, --pipeline, --judge-models), `fetch` the public release.

Renamed flags are still read for a release, with a note on stderr: `--k` (now `--ks`, as `-T ks`), and in `run`
`--model` (`--gen`; `--pipeline` for the retrieval tasks), `--retriever` (`--pipeline`), `--judge-model`
(`--judge-models`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from ragjudge.bench.base import default_out
from ragjudge.bench.cxm.base import TASKS, default_predictions, task_name
from ragjudge.bench.cxm.benches import BY_TASK
from ragjudge.bench.options import COMMON_FLAGS, build_options
from ragjudge.cli import common
from ragjudge.engine import EngineOptions, OutputPaths, run_bench
from ragjudge.engine.render import print_outcome, print_summaries
from ragjudge.engine.summary import Summary
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
KsOpt = Annotated[str | None, typer.Option("--ks", help="Retrieval cut-offs, comma-separated whole numbers >= 1 "
                                           "(-T ks) [default: 1,3,5,10 for article search, 10,20 for multi-turn "
                                           "retrieval].")]
OldKsOpt = Annotated[str | None, typer.Option("--k", hidden=True, help="Deprecated: --ks.")]
ProtocolOpt = Annotated[str | None, typer.Option("--protocol", help="Intent and quality: which figures lead, "
                                                 "ragjudge (default) or paper (CXMArena's evaluator); both are "
                                                 "printed.")]

RETRIEVAL_TASKS = ("article-search", "multiturn-retrieval")
"""Tasks whose system under test is the retrieval pipeline (--pipeline), not a model (--gen)."""


def deprecated(old: str, new: str) -> None:
    """A flag renamed for one vocabulary with `ragjudge eval`: still read for a release, with a note."""
    print(f"warning: {old} is deprecated: use {new} (same values)", file=sys.stderr)


def pick(new_flag: str, new: Any, old_flag: str, old: Any) -> Any:
    """The value of a renamed flag: the new spelling, or the old one with a deprecation note (not both)."""
    if old is None:
        return new
    if new is not None:
        raise UsageError(f"{old_flag} and {new_flag} are the same option: give {new_flag} only")
    deprecated(old_flag, new_flag)
    return old


def _options(task: str, given: dict[str, tuple[str, Any]]) -> Any:
    """The task bench's Options from the flags given (option → (flag, value)); a flag the task does not use
    is an error naming it, and a value out of range says the range under the flag's own name."""
    cls = BY_TASK[task]
    values = {}
    for key, (flag, value) in given.items():
        if value is None:
            continue
        if key not in cls.Options.model_fields:
            raise UsageError(f"{flag} is not used by --task {task}")
        values[key] = value
    try:
        return build_options(cls.name, cls.Options, {}, values)
    except UsageError as exc:
        message = str(exc)
        for key, (flag, _) in given.items():  # the flag typed here, not the -T key or eval's flag
            for source in (f"-T {key}", COMMON_FLAGS.get(key)):
                if source and (message.startswith(source + " ") or message.startswith(source + ":")):
                    raise UsageError(flag.split(" (")[0] + message[len(source):]) from None
        raise


@app.command("score")
def score_command(
    data: DataOpt,
    task: Annotated[str | None, typer.Option("--task", help="Score one task (default: every task with "
                                             "<data>/predictions/<task>.jsonl).")] = None,
    predictions: Annotated[Path | None, typer.Option("--predictions", help="Predictions JSONL "
                                                     "(default: <data>/predictions/<task>.jsonl).")] = None,
    taxonomy: TaxonomyOpt = None,
    ks: KsOpt = None,
    old_k: OldKsOpt = None,
    protocol: ProtocolOpt = None,
    baseline: Annotated[bool, typer.Option("--baseline/--no-baseline", metavar="", help="KB refinement: also sweep the "
                                           "embedding-similarity baseline (bundled MiniLM, offline).")] = True,
    embedding_model: Annotated[str | None, typer.Option("--embedding-model", help="KB baseline embedding model "
                                                        "(default: bundled all-MiniLM-L6-v2).")] = None,
    fmt: common.FormatOpt = "table",
) -> None:
    """Score existing predictions offline and print every metric (nothing is written); one summary per task
    (`--format json`: a JSON list of summaries)."""
    fmt = common.check_format(fmt)
    cutoffs = pick("--ks", ks, "--k", old_k)
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
    flags = {"taxonomy": ("--taxonomy", taxonomy), "protocol": ("--protocol", protocol), "ks": ("--ks", cutoffs),
             "gen": ("--embedding-model", embedding_model)}
    if task is None:  # every task with predictions: each flag goes to the tasks that use it, and one no task uses
        for key, (flag, value) in flags.items():  # is an error
            if value is not None and not any(key in BY_TASK[t].Options.model_fields for t in tasks):
                raise UsageError(f"{flag} is not used by any task scored here ({', '.join(tasks)})")
    summaries: list[Summary] = []
    for name in tasks:
        path = predictions or default_predictions(data, name)
        from_file = predictions is not None or path.exists() or name != "kb-refinement"
        if not from_file and not baseline:
            raise UsageError(f"nothing to score: {path} does not exist and the baseline is off")
        given = {"data": ("--data", str(data)), "predictions": ("--predictions", str(path) if from_file else None)}
        fields = BY_TASK[name].Options.model_fields
        given.update({key: flag for key, flag in flags.items() if task is not None or key in fields})
        if name == "kb-refinement":
            given["baseline"] = ("--baseline", baseline)
        bench = BY_TASK[name](_options(name, given))
        summaries.append(run_bench(bench, EngineOptions(show_progress=False), paths=None).summary)
    print_summaries(summaries, fmt)
    if fmt == "json":  # the tables' format prints them after the tables
        for summary in summaries:
            for warning in summary.warnings:
                print(warning, file=sys.stderr)
    raise typer.Exit(1 if any(s.n_errors for s in summaries) else 0)


@app.command("run")
def run_command(
    task: TaskOpt,
    data: DataOpt,
    gen: Annotated[str | None, typer.Option("--gen", help="Model under test (litellm name): intent, quality, "
                                            "tool-calls, answer replies; the embedding model for kb-refinement.")
                   ] = None,
    pipeline: Annotated[str | None, typer.Option("--pipeline", help="Retrieval pipeline (name or YAML path, e.g. "
                                                 "bm25, dense, hybrid; a name that is no pipeline is a dense "
                                                 "embedding model): the system under test of article-search and "
                                                 "multiturn-retrieval, the retriever behind generated answers "
                                                 "[default: bm25].")] = None,
    judge_models: Annotated[str | None, typer.Option("--judge-models", help="Judge model (litellm name): "
                                                     "LLM-verified intent match, answer classification, "
                                                     "KB contradictions.")] = None,
    model: Annotated[str | None, typer.Option("--model", hidden=True, help="Deprecated: --gen (--pipeline for "
                                              "article-search and multiturn-retrieval).")] = None,
    retriever: Annotated[str | None, typer.Option("--retriever", hidden=True, help="Deprecated: --pipeline.")] = None,
    judge_model: Annotated[str | None, typer.Option("--judge-model", hidden=True, help="Deprecated: --judge-models.")
                           ] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Output folder (default: runs/cxm-<task>-<model>); "
                                             "rerunning with the same folder resumes.")] = None,
    taxonomy: TaxonomyOpt = None,
    tool_counts: Annotated[str | None, typer.Option("--tool-counts", help="Numbers of offered tools "
                                                    "[default: 16,32,64,96,128].")] = None,
    force_tool_call: Annotated[bool, typer.Option("--force-tool-call", metavar="", help="Require a tool call "
                                                  "(tool_choice=required).")] = False,
    top_k: Annotated[str | None, typer.Option("--top-k", help="Articles retrieved for generated answers "
                                              "[default: 5]; kb-refinement: nearest neighbours [default: 4].")
                     ] = None,
    query: Annotated[str | None, typer.Option("--query", help="Retrieval query: last_turn, all_user_turns, "
                                              "full_conversation, or (multi-turn retrieval) llm "
                                              "[default: all_user_turns].")] = None,
    ks: KsOpt = None,
    old_k: OldKsOpt = None,
    chunk: Annotated[str | None, typer.Option("--chunk", help="How KB articles are split (article search, "
                                              "multi-turn retrieval, answers): N = chunks of N characters, 0 = "
                                              "whole articles, pipeline = the pipeline's own chunking.")] = None,
    protocol: ProtocolOpt = None,
    rewrite_model: Annotated[str | None, typer.Option("--rewrite-model", help="Multi-turn retrieval: the LLM that "
                                                      "writes each turn's query (--query llm).")] = None,
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
    """Run a model on one task, then score it (the same as `ragjudge eval --bench cxm-<task>`, with the same
    flags; resumes on rerun)."""
    fmt = common.check_format(fmt)
    name = task_name(task)
    retrieval = name in RETRIEVAL_TASKS
    if model is not None:  # --model named the pipeline for the retrieval tasks, the model under test otherwise
        if retrieval and retriever is not None:
            raise UsageError(f"--model and --retriever both name the pipeline of --task {name}: give --pipeline only")
        if retrieval:
            pipeline = pick("--pipeline", pipeline, "--model", model)
        else:
            gen = pick("--gen", gen, "--model", model)
    pipeline = pick("--pipeline", pipeline, "--retriever", retriever)
    judges = common.split_list(judge_models) if judge_models is not None else None
    judges = pick("--judge-models", judges, "--judge-model", [judge_model] if judge_model is not None else None)
    cutoffs = pick("--ks", ks, "--k", old_k)
    input_folder(data, "CXMArena data folder")
    given: dict[str, tuple[str, Any]] = {
        "data": ("--data", str(data)), "gen": ("--gen", gen), "pipeline": ("--pipeline", pipeline),
        "judge_models": ("--judge-models", judges), "taxonomy": ("--taxonomy", taxonomy),
        "tool_counts": ("--tool-counts", tool_counts),
        "force_tool_call": ("--force-tool-call", force_tool_call or None), "k": ("--top-k", top_k),
        "query": ("--query", query), "ks": ("--ks", cutoffs), "judge_dir": ("--judge-dir", judge_dir),
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

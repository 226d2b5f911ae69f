"""`ragjudge cxm`: thin commands over the CXMArena benches. `score` existing predictions (every task that has
<data>/predictions/<task>.jsonl, nothing written; one summary per task), `run` one task (the same as `ragjudge
eval --bench cxm-<task>`, with its flags: --gen, --pipeline, --judge-models), `fetch` the public release.

Renamed flags are still read for a release, with a note on stderr: `--k` (now `--ks`, as `-T ks`), and in `run`
`--model` (`--gen`; `--pipeline` for the retrieval tasks), `--retriever` (`--pipeline`), `--judge-model`
(`--judge-models`). A flag the task does not use is an error, and an error names the flag typed here (`--top-k`,
`--query llm`), not the `-T` option or eval flag the bench's own message names."""

from __future__ import annotations

import re
import sys
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from ragjudge.engine.bench import default_out
from ragjudge.bench.cxm.base import TASKS, default_predictions, task_name
from ragjudge.bench.cxm.benches import BY_TASK
from ragjudge.engine.bench_options import COMMON_FLAGS, build_options, parse_task_args
from ragjudge.cli import common
from ragjudge.engine import EngineOptions, OutputPaths, run
from ragjudge.engine.render import print_run, print_summaries
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


def _options(task: str, given: dict[str, tuple[str, Any]], task_args: dict[str, str] | None = None) -> Any:
    """The task bench's Options from the flags given (option → (flag, value)) and `-T` values; a flag the task
    does not use is an error naming it."""
    cls = BY_TASK[task]
    values = {}
    for key, (flag, value) in given.items():
        if value is None:
            continue
        if key not in cls.Options.model_fields:
            raise UsageError(f"{flag} is not used by --task {task}")
        if key in (task_args or {}):
            raise UsageError(f"{flag} and -T {key} are the same option: give one")
        values[key] = value
    return build_options(cls.name, cls.Options, task_args or {}, values)


SWITCHES = {"--force-tool-call": "", "--baseline": "--no-baseline"}
"""On/off flags: `-T KEY=true` is the flag, `-T KEY=false` its negative (none: leave the flag out)."""


def in_our_flags(message: str, flags: dict[str, str], typed: Collection[str] = ()) -> str:
    """A bench's message in this command's words: `-T KEY=VALUE`, `-T KEY` and eval's flag for an option become
    the flag this command takes for it (`flags`: option → flag), except for the options typed as `-T` (`typed`)."""
    def switch(flag: str, value: str) -> str:
        if flag in SWITCHES and value.lower() in ("true", "false"):
            return flag if value.lower() == "true" else SWITCHES[flag] or f"no {flag}"
        return f"{flag} {value}"

    for key, flag in flags.items():
        if key in typed:
            continue
        message = re.sub(rf"-T {key}=([^\s,:;)]+)", lambda m, flag=flag: switch(flag, m.group(1)), message)
        message = re.sub(rf"-T {key}(?![\w=])", flag, message)
        eval_flag = COMMON_FLAGS.get(key)
        if eval_flag and eval_flag != flag:
            message = re.sub(rf"{re.escape(eval_flag)}(?![\w-])", flag, message)
    return message


@contextmanager
def speaking(flags: dict[str, str], typed: Collection[str] = ()) -> Iterator[None]:
    """Usage errors raised inside (options, the bench, its run) name this command's flags (`in_our_flags`)."""
    try:
        yield
    except UsageError as exc:
        exc.args = (in_our_flags(str(exc), flags, typed),)
        raise


SCORE_FLAGS = {"data": "--data", "predictions": "--predictions", "taxonomy": "--taxonomy", "protocol": "--protocol",
               "ks": "--ks", "baseline": "--baseline"}
"""Option → the `cxm score` flag that fills it (and `gen` → --embedding-model for KB refinement)."""


def _score_flag_users(key: str) -> list[str]:
    """The tasks a `cxm score` flag (by option) applies to."""
    if key in ("embedding_model", "baseline"):
        return ["kb-refinement"]
    return [t for t in TASKS if key in BY_TASK[t].Options.model_fields]


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
    baseline: Annotated[bool | None, typer.Option("--baseline/--no-baseline", metavar="", help="KB refinement: also "
                                                  "sweep the embedding-similarity baseline (bundled MiniLM, offline) "
                                                  "[default: on].")] = None,
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
             "embedding_model": ("--embedding-model", embedding_model),
             "baseline": ("--no-baseline" if baseline is False else "--baseline", baseline)}
    for key, (flag, value) in flags.items():  # each flag goes to the tasks that use it; one no task uses is an error
        if value is not None and not set(_score_flag_users(key)) & set(tasks):
            where = f"--task {tasks[0]}" if task is not None else f"any task scored here ({', '.join(tasks)})"
            raise UsageError(f"{flag} is not used by {where}")
    summaries: list[Summary] = []
    for name in tasks:
        path = predictions or default_predictions(data, name)
        from_file = predictions is not None or path.exists() or name != "kb-refinement"
        if not from_file and baseline is False:
            raise UsageError(f"nothing to score: {path} does not exist and the baseline is off (--no-baseline)")
        given = {"data": ("--data", str(data)), "predictions": ("--predictions", str(path) if from_file else None)}
        given.update({key: flag for key, flag in flags.items() if name in _score_flag_users(key)})
        words = {**SCORE_FLAGS}
        if "embedding_model" in given:  # the KB baseline's embedding model is the bench's model under test
            given["gen"] = given.pop("embedding_model")
            words["gen"] = "--embedding-model"
        with speaking(words):
            bench = BY_TASK[name](_options(name, given))
            slow = name == "kb-refinement" and not from_file  # the baseline embeds the KB: minutes the first time
            summaries.append(run(bench, EngineOptions(show_progress=slow and fmt == "table"), paths=None).summary)
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
                                              "[default: 10]; kb-refinement: nearest neighbours [default: 4].")
                     ] = None,
    query: Annotated[str | None, typer.Option("--query", help="Retrieval query (multi-turn retrieval, generated "
                                              "answers): last_turn, all_user_turns, full_conversation, or llm "
                                              "[default: llm with --rewrite-model, else all_user_turns].")] = None,
    ks: KsOpt = None,
    old_k: OldKsOpt = None,
    chunk: Annotated[str | None, typer.Option("--chunk", help="How KB articles are split (article search, "
                                              "multi-turn retrieval, answers): N = chunks of N characters, 0 = "
                                              "whole articles, pipeline = the pipeline's own chunking.")] = None,
    protocol: ProtocolOpt = None,
    rewrite_model: Annotated[str | None, typer.Option("--rewrite-model", help="Multi-turn retrieval and generated "
                                                      "answers: the LLM that writes each turn's query with CXMArena's "
                                                      "prompt (--query llm).")] = None,
    task_args: Annotated[list[str] | None, typer.Option("-T", "--task-arg", metavar="<key=value>", help="Any other "
                                                        "option of the task's bench KEY=VALUE (repeatable), as in "
                                                        "`ragjudge eval`; `ragjudge benches show cxm-<task>` lists "
                                                        "them.")] = None,
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
    extra = parse_task_args(task_args)
    cls = BY_TASK[name]
    engine = EngineOptions(limit=limit, concurrency=concurrency, cache_dir=cache_dir, use_cache=not no_cache,
                           api_base=api_base, max_retries=max_retries, timeout=timeout, models=models, rpm=rpm,
                           tpm=tpm, preflight=not no_preflight)
    with speaking({key: flag for key, (flag, _) in given.items()}, typed=set(extra)):
        bench = cls(_options(name, given, extra), label=f"cxm-{name}")
        folder = output_folder(out or default_out(bench), "--out folder")
        outcome = run(bench, engine, OutputPaths.in_folder(folder))
    print_run(outcome.summary, fmt, failed=sum(1 for r in outcome.results if r.errors),
              usage=outcome.gateway.usage.by_model if outcome.gateway else None, paths=outcome.paths)
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

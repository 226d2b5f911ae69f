"""`ragjudge eval`: generate answers for a benchmark's tasks, then judge them."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Annotated

import typer

from ragjudge.bench.mtrag import resolve_bench
from ragjudge.cli import common
from ragjudge.cli.report import print_report
from ragjudge.cli.retrieve_cmd import IndexDirOpt, PipelineDirOpt, require_questions, rewrite_warning
from ragjudge.errors import UsageError
from ragjudge.evaluation import session
from ragjudge.formats.mtrag import read_tasks
from ragjudge.generation import build_generator
from ragjudge.retrieval.pipeline import Pipeline
from ragjudge.retrieval.spec import load_pipeline


def _default_out(bench: str, gen: str, setting: str, pipeline: str | None = None) -> Path:
    """runs/<bench>-<gen>-<setting>[-<pipeline>]: runs with different pipelines never share (and resume) a folder."""
    parts = [Path(bench).name, gen, setting] + ([Path(pipeline).stem] if pipeline else [])
    slug = "-".join(re.sub(r"[^A-Za-z0-9_.]+", "_", part).strip("_") for part in parts)
    return Path("runs") / slug


def eval_command(
    bench: Annotated[str, typer.Option("--bench", help="'mtrag', 'cxm' (CXMArena, with --task and --data) or a "
                                       "path to MTRAG-format tasks (file or folder).")],
    gen: Annotated[str, typer.Option("--gen", help="'extractive' (offline baseline) or a litellm model name.")],
    task: Annotated[str | None, typer.Option("--task", help="--bench cxm: intent, quality, tool-calls, "
                                             "answer-classification, kb-refinement or article-search.")] = None,
    force_tool_call: Annotated[bool, typer.Option("--force-tool-call", help="--bench cxm --task tool-calls: require "
                                                  "a tool call (tool_choice=required).")] = False,
    setting: Annotated[str, typer.Option("--setting", help="Which passages the generator sees: reference, "
                                         "reference+rag (references topped up with retrieved passages to 5; tasks "
                                         "with at most 2 references) or rag (top 5 retrieved); the last two need "
                                         "--pipeline and --corpus.")] = "reference",
    pipeline: Annotated[str | None, typer.Option("--pipeline", help="Retrieval pipeline spec (name or YAML path) "
                                                 "for --setting reference+rag or rag.")] = None,
    corpus: Annotated[Path | None, typer.Option("--corpus", help="BEIR corpus JSONL the pipeline retrieves from "
                                                "(its index is built once and reused).")] = None,
    rewrite_model: Annotated[str | None, typer.Option("--rewrite-model", help="litellm model for a pipeline "
                                                      "whose query strategy is rewrite.")] = None,
    pipeline_dir: PipelineDirOpt = None,
    index_dir: IndexDirOpt = None,
    data: Annotated[str | None, typer.Option("--data", help="Local MTRAG tasks for --bench mtrag "
                                             "(default: $RAGJUDGE_DATA, else download into the cache).")] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Output folder (default: runs/<bench>-<gen>-<setting>, "
                                             "plus -<pipeline> with one); rerunning with the same folder resumes.")
                   ] = None,
    judges: common.JudgesOpt = None,
    judge_models: common.JudgeModelsOpt = None,
    limit: common.LimitOpt = None,
    fmt: common.FormatOpt = "table",
    concurrency: common.ConcurrencyOpt = 8,
    cache_dir: common.CacheDirOpt = None,
    no_cache: common.NoCacheOpt = False,
    api_base: common.ApiBaseOpt = None,
    bertscore_model: common.BertModelOpt = None,
    conversational_as_unanswerable: common.ConvOpt = False,
    judge_dir: common.JudgeDirOpt = None,
    max_retries: common.RetriesOpt = 6,
    timeout: common.TimeoutOpt = 120.0,
) -> None:
    """Generate answers for a benchmark's tasks, judge them, and print the paper's breakdowns."""
    if bench == "cxm":  # CXMArena conversation-analytics tasks have their own runner
        from ragjudge.cli.cxm_cmd import run_from_eval

        ignored = [flag for flag, given in (
            ("--setting", setting != "reference"), ("--corpus", corpus is not None), ("--rewrite-model", rewrite_model),
            ("--judges", judges), ("--bertscore-model", bertscore_model),
            ("--conversational-as-unanswerable", conversational_as_unanswerable)) if given]
        if ignored:
            raise UsageError(f"{', '.join(ignored)} {'is' if len(ignored) == 1 else 'are'} not used with --bench cxm")
        return run_from_eval(task=task, data=data, gen=gen, judge_models=judge_models, pipeline=pipeline, out=out,
                             limit=limit, fmt=fmt, concurrency=concurrency, cache_dir=cache_dir, no_cache=no_cache,
                             api_base=api_base, judge_dir=judge_dir, max_retries=max_retries, timeout=timeout,
                             force_tool_call=force_tool_call)
    if task is not None or force_tool_call:
        raise UsageError("--task and --force-tool-call are for --bench cxm")
    options = common.run_options(judges=judges, judge_models=judge_models, fmt=fmt, concurrency=concurrency,
                                 cache_dir=cache_dir, no_cache=no_cache, api_base=api_base,
                                 bertscore_model=bertscore_model, conversational=conversational_as_unanswerable,
                                 judge_dirs=judge_dir, max_retries=max_retries, timeout=timeout)
    session.check_setting(setting)  # reject an unknown setting before any work
    pipe = _pipeline(setting, pipeline, corpus, rewrite_model, pipeline_dir, index_dir)
    judge_objs = session.build_judges(options)
    source = resolve_bench(bench, data)
    tasks = session.tasks_for_setting(read_tasks(source), setting)[:limit]
    if pipe is not None:
        require_questions(tasks, Path(source))
    models = ([] if gen == "extractive" else [gen]) + (options.judge_models if any(j.needs_llm for j in judge_objs) else [])
    models += pipe.llm_models if pipe else []
    gateway = session.build_gateway(options, list(dict.fromkeys(models)))
    if pipe is not None:
        pipe.gateway = gateway
    generator = build_generator(gen, gateway=gateway) if gen != "extractive" else build_generator(gen)
    paths = session.OutputPaths.in_folder(out or _default_out(bench, gen, setting, pipeline if pipe else None))
    paths.results.parent.mkdir(parents=True, exist_ok=True)
    try:
        result = asyncio.run(session.run(tasks=tasks, predictions=None, generator=generator, setting=setting,
                                         judges=judge_objs, gateway=gateway, options=options, paths=paths,
                                         source=str(source), pipeline=pipe, corpus=str(corpus) if corpus else None))
    finally:
        if pipe is not None:
            pipe.close()
    print_report(result, fmt)
    if (warning := rewrite_warning(result.summary.get("query_rewrite", {}))) is not None:
        typer.echo(warning, err=True)
    raise typer.Exit(result.exit_code)


def _pipeline(setting: str, name: str | None, corpus: Path | None, rewrite_model: str | None,
              pipeline_dir: list[str] | None = None, index_dir: Path | None = None) -> Pipeline | None:
    """The retrieval pipeline the setting needs; options that would be ignored are errors, not no-ops."""
    if not session.needs_retrieval(setting):
        if name or corpus or rewrite_model or pipeline_dir or index_dir:
            raise UsageError("--pipeline, --corpus, --rewrite-model, --pipeline-dir and --index-dir are for "
                             "--setting reference+rag or rag")
        return None
    if not name:
        raise UsageError(f"--setting {setting} retrieves passages: pass --pipeline NAME and --corpus FILE")
    pipe = Pipeline(load_pipeline(name, pipeline_dir), extra_dirs=pipeline_dir, index_dir=index_dir,
                    rewrite_model=rewrite_model)
    if pipe.spec.query.strategy == "rewrite" and not pipe.spec.query.model:
        raise UsageError(f"pipeline {name} rewrites queries: pass --rewrite-model MODEL (or set query.model)")
    if corpus is None and not hasattr(pipe.retriever, "attach"):
        raise UsageError(f"pipeline {name} ({pipe.retriever.kind}) indexes a corpus: pass --corpus FILE")
    return pipe


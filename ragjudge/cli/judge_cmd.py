"""`ragjudge judge`: score an existing MTRAG predictions file."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer

from ragjudge.cli import common
from ragjudge.cli.report import print_report
from ragjudge.evaluation import session
from ragjudge.formats.mtrag import read_predictions


def judge_command(
    predictions: Annotated[Path, typer.Argument(help="MTRAG evaluation input: tasks with 'predictions'.")],
    out: Annotated[Path | None, typer.Option("--out", help="Results file (default: <name>.judged.jsonl in the "
                                             "current folder); rerunning with the same file resumes.")] = None,
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
    """Score an existing predictions file the way the benchmark's scripts do, resumably."""
    options = common.run_options(judges=judges, judge_models=judge_models, fmt=fmt, concurrency=concurrency,
                                 cache_dir=cache_dir, no_cache=no_cache, api_base=api_base,
                                 bertscore_model=bertscore_model, conversational=conversational_as_unanswerable,
                                 judge_dirs=judge_dir, max_retries=max_retries, timeout=timeout)
    judge_objs = session.build_judges(options)
    pairs = read_predictions(predictions)[:limit]
    llm_models = options.judge_models if any(j.needs_llm for j in judge_objs) else []
    gateway = session.build_gateway(options, llm_models)
    results_path = out or Path(predictions.name.removesuffix(".jsonl") + ".judged.jsonl")
    paths = session.OutputPaths.beside(results_path)
    paths.results.parent.mkdir(parents=True, exist_ok=True)
    result = asyncio.run(session.run(tasks=[t for t, _ in pairs], predictions={t.key: p for t, p in pairs},
                                     generator=None, setting=None, judges=judge_objs, gateway=gateway,
                                     options=options, paths=paths, source=str(predictions)))
    print_report(result, fmt)
    raise typer.Exit(result.exit_code)

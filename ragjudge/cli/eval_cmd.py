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
from ragjudge.evaluation import session
from ragjudge.formats.mtrag import read_tasks
from ragjudge.generation import build_generator


def _default_out(bench: str, gen: str, setting: str) -> Path:
    slug = "-".join(re.sub(r"[^A-Za-z0-9_.]+", "_", part).strip("_") for part in (Path(bench).name, gen, setting))
    return Path("runs") / slug


def eval_command(
    bench: Annotated[str, typer.Option("--bench", help="'mtrag' or a path to MTRAG-format tasks (file or folder).")],
    gen: Annotated[str, typer.Option("--gen", help="'extractive' (offline baseline) or a litellm model name.")],
    setting: Annotated[str, typer.Option("--setting", help="Which passages the generator sees: reference.")] = "reference",
    data: Annotated[str | None, typer.Option("--data", help="Local MTRAG tasks for --bench mtrag "
                                             "(default: $RAGJUDGE_DATA, else download into the cache).")] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Output folder (default: runs/<bench>-<gen>-<setting>); "
                                             "rerunning with the same folder resumes.")] = None,
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
    options = common.run_options(judges=judges, judge_models=judge_models, fmt=fmt, concurrency=concurrency,
                                 cache_dir=cache_dir, no_cache=no_cache, api_base=api_base,
                                 bertscore_model=bertscore_model, conversational=conversational_as_unanswerable,
                                 judge_dirs=judge_dir, max_retries=max_retries, timeout=timeout)
    session.generation_inputs([], setting)  # reject an unknown setting before any work
    judge_objs = session.build_judges(options)
    source = resolve_bench(bench, data)
    tasks = read_tasks(source)[:limit]
    models = ([] if gen == "extractive" else [gen]) + (options.judge_models if any(j.needs_llm for j in judge_objs) else [])
    gateway = session.build_gateway(options, list(dict.fromkeys(models)))
    generator = build_generator(gen, gateway=gateway) if gen != "extractive" else build_generator(gen)
    paths = session.OutputPaths.in_folder(out or _default_out(bench, gen, setting))
    paths.results.parent.mkdir(parents=True, exist_ok=True)
    result = asyncio.run(session.run(tasks=tasks, predictions=None, generator=generator, setting=setting,
                                     judges=judge_objs, gateway=gateway, options=options, paths=paths,
                                     source=str(source)))
    print_report(result, fmt)
    raise typer.Exit(result.exit_code)

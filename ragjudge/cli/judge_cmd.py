"""`ragjudge judge`: score an existing MTRAG or MTRAG-UN predictions file (the mtrag or mtrag-un bench with its
predictions solver; a file with UNDERSPECIFIED tasks is MTRAG-UN's unless --bench says otherwise)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ragjudge.engine.bench import Bench
from ragjudge.bench.mtrag.bench import MtragBench, MtragOptions
from ragjudge.bench.mtrag.un.bench import MtragUnBench, MtragUnOptions, has_underspecified_tasks
from ragjudge.cli import common
from ragjudge.engine import OutputPaths, run_bench
from ragjudge.engine.context import EngineOptions
from ragjudge.engine.render import print_outcome
from ragjudge.errors import UsageError
from ragjudge.formats.files import output_file


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
    min_panel: common.MinPanelOpt = None,
    models: common.ModelsOpt = None,
    rpm: common.RpmOpt = None,
    tpm: common.TpmOpt = None,
    retry_seconds: common.RetrySecondsOpt = None,
    no_preflight: common.NoPreflightOpt = False,
    retry_errors: common.RetryErrorsOpt = False,
    batch: common.BatchOpt = False,
    bench: Annotated[str | None, typer.Option("--bench", help="mtrag or mtrag-un (default: mtrag-un when a task is "
                                              "UNDERSPECIFIED, else mtrag): MTRAG-UN adds the clarification judge "
                                              "and the official *_idk_underspecified metrics.")] = None,
) -> None:
    """Score an existing predictions file the way the benchmark's scripts do, resumably."""
    fmt = common.check_format(fmt)
    instance, engine = prepare_judge(
        predictions, bench, judges=judges, judge_models=judge_models, judge_dir=judge_dir,
        bertscore_model=bertscore_model, conversational_as_unanswerable=conversational_as_unanswerable,
        min_panel=min_panel, limit=limit, concurrency=concurrency, cache_dir=cache_dir, no_cache=no_cache,
        api_base=api_base, max_retries=max_retries, timeout=timeout, models=models, rpm=rpm, tpm=tpm,
        retry_seconds=retry_seconds, no_preflight=no_preflight, retry_errors=retry_errors, batch=batch)
    results = output_file(out or Path(predictions.name.removesuffix(".jsonl") + ".judged.jsonl"), "results file")
    outcome = run_bench(instance, engine, OutputPaths.beside(results))
    print_outcome(outcome, fmt)
    raise typer.Exit(outcome.exit_code)


def prepare_judge(predictions: Path, bench: str | None = None, *, judges: str | None = None,
                  judge_models: str | None = None, judge_dir: list[str] | None = None,
                  bertscore_model: str | None = None, conversational_as_unanswerable: bool = False,
                  min_panel: int | None = None, **engine_flags: Any) -> tuple[Bench[Any, Any], EngineOptions]:
    """The bench instance and engine options `ragjudge judge` runs on a predictions file (`judges` and
    `judge_models` comma-separated, as typed); shared with the Python API (`ragjudge.evaluate`)."""
    if bench not in (None, "mtrag", "mtrag-un"):
        raise UsageError(f"--bench must be mtrag or mtrag-un, got {bench!r}")
    if bench is None:
        bench = "mtrag-un" if has_underspecified_tasks(predictions) else "mtrag"
    bench_class, options_class = (MtragUnBench, MtragUnOptions) if bench == "mtrag-un" else (MtragBench, MtragOptions)
    options = options_class(predictions=str(predictions), judges=common.split_list(judges),
                            judge_models=common.split_list(judge_models) or [], judge_dir=judge_dir or [],
                            bertscore_model=bertscore_model,
                            conversational_as_unanswerable=conversational_as_unanswerable, min_panel=min_panel)
    engine = common.engine_options(bench_name=bench, uses_llm=True, **engine_flags)
    return bench_class(options), engine

"""`ragjudge judge`: score an existing MTRAG or MTRAG-UN predictions file (the mtrag or mtrag-un bench with its
predictions solver; a file with UNDERSPECIFIED tasks is MTRAG-UN's unless --bench says otherwise)."""

from pathlib import Path
from typing import Annotated

import typer

from ragjudge.cli import common
from ragjudge.run_defaults import DEFAULT_CONCURRENCY


def judge_command(
    predictions: Annotated[Path, typer.Argument(help="MTRAG evaluation input: tasks with 'predictions'.")],
    out: Annotated[Path | None, typer.Option("--out", help="Results file (default: <name>.judged.jsonl in the "
                                             "current folder); rerunning with the same file resumes.")] = None,
    judges: common.JudgesOpt = None,
    judge_models: common.JudgeModelsOpt = None,
    criteria: common.CriterionOpt = None,
    limit: common.LimitOpt = None,
    fmt: common.FormatOpt = "table",
    concurrency: common.ConcurrencyOpt = DEFAULT_CONCURRENCY,
    cache_dir: common.CacheDirOpt = None,
    no_cache: common.NoCacheOpt = False,
    encoder_backend: common.EncoderBackendOpt = None,
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
    from ragjudge.api import prepare_judging
    from ragjudge.engine.bench_options import COMMON_FLAGS, Spelling
    from ragjudge.engine.render import print_run

    judge_cli = Spelling(flag=lambda k: COMMON_FLAGS.get(k, "--" + k.replace("_", "-")),
                         task=lambda k: "--" + k.replace("_", "-"), needs=lambda k: "--" + k.replace("_", "-") + " VALUE")
    # `ragjudge judge` spells every option as a flag (`--min-panel`), none as `-T`.
    fmt = common.check_format(fmt)
    options = {"min_panel": min_panel, "conversational_as_unanswerable": conversational_as_unanswerable or None}
    prepared = prepare_judging(
        predictions, bench, judges=judges, judge_models=judge_models, judge_dir=judge_dir or None,
        bertscore_model=bertscore_model, criteria=criteria or None,
        options={k: v for k, v in options.items() if v is not None},
        spelling=judge_cli, **common.run_settings(
            limit=limit, concurrency=concurrency, cache_dir=cache_dir, no_cache=no_cache, api_base=api_base,
            max_retries=max_retries, timeout=timeout, models=models, rpm=rpm, tpm=tpm, retry_seconds=retry_seconds,
            no_preflight=no_preflight, retry_errors=retry_errors, batch=batch, encoder_backend=encoder_backend))
    result = prepared.execute(results_file=out or Path(predictions.name.removesuffix(".jsonl") + ".judged.jsonl"))
    print_run(result.summary, fmt, failed=sum(1 for s in result.samples if s.errors()), usage=result.usage,
              paths=result.files)
    raise typer.Exit(result.exit_code)

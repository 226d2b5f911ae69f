"""`ragjudge eval --bench NAME [-T key=value ...]`: run any registered benchmark through the one engine.

Built on the Python API (`ragjudge.api.prepare_run`, then `PreparedRun.execute`): bench options come from `-T`
(Inspect AI's convention) and from the common flags, which fill the option of the same name; a flag the bench has no
option for is an error. No benchmark is special-cased here.
"""

from pathlib import Path
from typing import Annotated

import typer

from ragjudge.cli import common
from ragjudge.cli.retrieval_flags import CorpusOpt, IndexDirOpt, OptionalPipelineOpt, PipelineDirOpt, RewriteModelOpt

TaskArgsOpt = Annotated[list[str] | None, typer.Option("-T", "--task-arg", metavar="<key=value>", help="A bench option KEY=VALUE "
                                                       "(repeatable); `ragjudge benches show NAME` lists them.")]


def eval_command(
    bench: Annotated[str, typer.Option("--bench", help="A bench name (`ragjudge benches` lists them) or a path to "
                                       "MTRAG-format tasks (file or folder).")],
    task_args: TaskArgsOpt = None,
    gen: Annotated[str | None, typer.Option("--gen", help="The system under test: 'extractive' (offline MTRAG "
                                            "baseline), a litellm model, or what the bench documents.")] = None,
    data: Annotated[str | None, typer.Option("--data", help="The bench's data (file or folder).")] = None,
    pipeline: OptionalPipelineOpt = None,
    corpus: CorpusOpt = None,
    rewrite_model: RewriteModelOpt = None,
    pipeline_dir: PipelineDirOpt = None,
    index_dir: IndexDirOpt = None,
    judges: common.JudgesOpt = None,
    judge_models: common.JudgeModelsOpt = None,
    criteria: common.CriterionOpt = None,
    judge_dir: common.JudgeDirOpt = None,
    bertscore_model: common.BertModelOpt = None,
    out: Annotated[Path | None, typer.Option("--out", help="Output folder (default: runs/<bench>-<options>); "
                                             "rerunning with the same folder resumes.")] = None,
    limit: common.LimitOpt = None,
    fmt: common.FormatOpt = "table",
    concurrency: common.EvalConcurrencyOpt = None,
    cache_dir: common.CacheDirOpt = None,
    no_cache: common.NoCacheOpt = False,
    encoder_backend: common.EncoderBackendOpt = None,
    api_base: common.ApiBaseOpt = None,
    max_retries: common.EvalRetriesOpt = None,
    timeout: common.EvalTimeoutOpt = None,
    models: common.ModelsOpt = None,
    rpm: common.RpmOpt = None,
    tpm: common.TpmOpt = None,
    retry_seconds: common.RetrySecondsOpt = None,
    no_preflight: common.NoPreflightOpt = False,
    retry_errors: common.RetryErrorsOpt = False,
    batch: common.BatchOpt = False,
) -> None:
    """Run a benchmark: solve its samples, score them, print its summary and breakdowns."""
    from ragjudge.api import prepare_run
    from ragjudge.engine.bench_options import CLI, parse_task_args
    from ragjudge.engine.render import print_run

    fmt = common.check_format(fmt)
    prepared = prepare_run(
        bench, data=data, gen=gen, pipeline=pipeline, corpus=corpus, rewrite_model=rewrite_model,
        pipeline_dir=pipeline_dir or None, index_dir=index_dir, judges=judges, judge_models=judge_models,
        judge_dir=judge_dir or None, bertscore_model=bertscore_model, criteria=criteria or None,
        options=parse_task_args(task_args),
        spelling=CLI, **common.run_settings(limit=limit, concurrency=concurrency, cache_dir=cache_dir,
                                            no_cache=no_cache, api_base=api_base, max_retries=max_retries,
                                            timeout=timeout, models=models, rpm=rpm, tpm=tpm,
                                            retry_seconds=retry_seconds, no_preflight=no_preflight,
                                            retry_errors=retry_errors, batch=batch,
                                            encoder_backend=encoder_backend))
    result = prepared.execute(out or prepared.default_out())
    print_run(result.summary, fmt, failed=sum(1 for s in result.samples if s.errors()), usage=result.usage,
              paths=result.files)
    raise typer.Exit(result.exit_code)

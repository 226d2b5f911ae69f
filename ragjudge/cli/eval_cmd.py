"""`ragjudge eval --bench NAME [-T key=value ...]`: run any registered benchmark through the one engine.

Bench options come from `-T` (Inspect AI's convention) and from the common flags, which fill the option of
the same name; a flag the bench has no option for is an error. No benchmark is special-cased here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ragjudge.engine import registry
from ragjudge.engine.bench import Bench, default_out
from ragjudge.engine.bench_options import build_options, parse_task_args
from ragjudge.cli import common
from ragjudge.engine import OutputPaths, run_bench
from ragjudge.engine.context import EngineOptions
from ragjudge.engine.render import print_outcome
from ragjudge.errors import UsageError
from ragjudge.formats.files import output_folder

TaskArgsOpt = Annotated[list[str] | None, typer.Option("-T", "--task-arg", metavar="<key=value>", help="A bench option KEY=VALUE "
                                                       "(repeatable); `ragjudge benches show NAME` lists them.")]


def eval_command(
    bench: Annotated[str, typer.Option("--bench", help="A bench name (`ragjudge benches` lists them) or a path to "
                                       "MTRAG-format tasks (file or folder).")],
    task_args: TaskArgsOpt = None,
    gen: Annotated[str | None, typer.Option("--gen", help="The system under test: 'extractive' (offline MTRAG "
                                            "baseline), a litellm model, or what the bench documents.")] = None,
    data: Annotated[str | None, typer.Option("--data", help="The bench's data (file or folder).")] = None,
    setting: Annotated[str | None, typer.Option("--setting", help="mtrag: reference, reference+rag or rag.")] = None,
    pipeline: Annotated[str | None, typer.Option("--pipeline", help="Retrieval pipeline spec (name or YAML "
                                                 "path).")] = None,
    corpus: Annotated[Path | None, typer.Option("--corpus", help="BEIR corpus JSONL the pipeline retrieves from "
                                                "(its index is built once and reused).")] = None,
    rewrite_model: Annotated[str | None, typer.Option("--rewrite-model", help="litellm model for a pipeline whose "
                                                      "query strategy is rewrite.")] = None,
    pipeline_dir: Annotated[list[str] | None, typer.Option("--pipeline-dir", metavar="<dir>", help="Extra folder of pipeline specs "
                                                           "(repeatable).")] = None,
    index_dir: Annotated[Path | None, typer.Option("--index-dir", help="Where indexes are kept and reused.")] = None,
    judges: common.JudgesOpt = None,
    judge_models: common.JudgeModelsOpt = None,
    judge_dir: common.JudgeDirOpt = None,
    bertscore_model: common.BertModelOpt = None,
    conversational_as_unanswerable: common.ConvOpt = False,
    min_panel: common.MinPanelOpt = None,
    out: Annotated[Path | None, typer.Option("--out", help="Output folder (default: runs/<bench>-<options>); "
                                             "rerunning with the same folder resumes.")] = None,
    limit: common.LimitOpt = None,
    fmt: common.FormatOpt = "table",
    concurrency: common.EvalConcurrencyOpt = None,
    cache_dir: common.CacheDirOpt = None,
    no_cache: common.NoCacheOpt = False,
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
    fmt = common.check_format(fmt)
    flags: dict[str, Any] = {
        "gen": gen, "data": data, "setting": setting, "pipeline": pipeline, "corpus": _str(corpus),
        "rewrite_model": rewrite_model, "pipeline_dir": pipeline_dir or None, "index_dir": _str(index_dir),
        "judges": judges, "judge_models": judge_models, "judge_dir": judge_dir or None,
        "bertscore_model": bertscore_model, "conversational_as_unanswerable": conversational_as_unanswerable or None,
        "min_panel": min_panel,
    }
    instance, engine = prepare_eval(bench, parse_task_args(task_args), flags, limit=limit, concurrency=concurrency,
                                    cache_dir=cache_dir, no_cache=no_cache, api_base=api_base,
                                    max_retries=max_retries, timeout=timeout, models=models, rpm=rpm, tpm=tpm,
                                    retry_seconds=retry_seconds, no_preflight=no_preflight,
                                    retry_errors=retry_errors, batch=batch)
    folder = output_folder(out or default_out(instance), "output folder (--out)")
    outcome = run_bench(instance, engine, OutputPaths.in_folder(folder))
    print_outcome(outcome, fmt)
    raise typer.Exit(outcome.exit_code)


def prepare_eval(bench: str, task_args: dict[str, Any], flags: dict[str, Any], **engine_flags: Any
                 ) -> tuple[Bench[Any, Any], EngineOptions]:
    """The bench instance and engine options `ragjudge eval` runs: `flags` are the common flags by option name
    (None: not given), `engine_flags` the run-level ones (`common.engine_options`'s keywords). Shared with the
    Python API (`ragjudge.run_bench`), so both validate and default options the same way."""
    cls, label, implied = registry.resolve(bench)
    flags = dict(flags)
    for key, value in implied.items():
        if flags.get(key) is not None:
            raise UsageError(f"--bench {bench} already names the {key}; drop --{key}")
        flags[key] = value
    options = build_options(cls.name, cls.Options, task_args, flags)
    engine = common.engine_options(bench_name=cls.name, uses_llm=cls.llm != "no", **engine_flags)
    return cls(options, label=label), engine


def _str(value: Path | None) -> str | None:
    return None if value is None else str(value)

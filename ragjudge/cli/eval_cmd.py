"""`ragjudge eval --bench NAME [-T key=value ...]`: run any registered benchmark through the one engine.

Built on `ragjudge.api.prepare_run` and `PreparedRun.execute`; no benchmark is special-cased here.
"""

from pathlib import Path
from typing import Annotated, Any

import typer

from ragjudge.cli import common
from ragjudge.cli.retrieval_flags import CorpusOpt, IndexDirOpt, OptionalPipelineOpt, PipelineDirOpt, RewriteModelOpt

TaskArgsOpt = Annotated[list[str] | None, typer.Option("-T", "--task-arg", metavar="<key=value>", help="A bench option KEY=VALUE "
                                                       "(repeatable); `ragjudge benches show NAME` lists them.")]


@common.with_run_settings
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
    fmt: common.FormatOpt = "table",
    settings: dict[str, Any] | None = None,
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
        spelling=CLI, **settings or {})
    result = prepared.execute(out or prepared.default_out())
    print_run(result.summary, fmt, failed=sum(1 for s in result.samples if s.errors()), usage=result.usage,
              paths=result.files)
    raise typer.Exit(result.exit_code)

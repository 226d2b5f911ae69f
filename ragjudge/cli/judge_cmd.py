"""`ragjudge judge`: judge answers you already have. Plain RAG records (question or messages, answer, contexts,
reference) run the `rag` bench; an MTRAG or MTRAG-UN predictions file runs that bench with its predictions solver (a
file with UNDERSPECIFIED tasks is MTRAG-UN's unless --bench says otherwise)."""

from pathlib import Path
from typing import Annotated, Any

import typer

from ragjudge.cli import common


JudgesOpt = Annotated[str | None, typer.Option("--judges", help="Comma-separated judges, instead of the defaults "
                                               "(see above).")]
CriterionOpt = Annotated[list[str] | None, typer.Option("--criterion", metavar="NAME=TEXT", help="A criterion in one "
                                                        "line, judged G-Eval's way (repeatable): NAME=\"Does the "
                                                        "answer cite the policy number?\"; its metric is NAME. Added "
                                                        "to the default judges, or to --judges when given.")]


@common.with_run_settings
def judge_command(
    predictions: Annotated[Path, typer.Argument(
        metavar="RECORDS", help="Your records (CSV, TSV, JSONL, JSON or Parquet, also .gz): question or messages, "
        "answer, contexts, reference; or an MTRAG predictions file (tasks with 'predictions').")],
    out: Annotated[Path | None, typer.Option("--out", help="Where the run is written: --out X.jsonl (or X) "
                                             "writes X.samples.jsonl, X.summary.json, X.csv, X.parquet and "
                                             "X.run.json (MTRAG input: its results in the --out file itself). "
                                             "Default: <records name>.judged.jsonl in the current folder (rows.csv: "
                                             "rows.judged.jsonl). `ragjudge report`, `correlate --judges` and "
                                             "`export` take what --out was given; rerunning with it resumes.")] = None,
    judges: JudgesOpt = None,
    judge_models: common.JudgeModelsOpt = None,
    criteria: CriterionOpt = None,
    fmt: common.FormatOpt = "table",
    bertscore_model: common.BertModelOpt = None,
    conversational_as_unanswerable: common.ConvOpt = False,
    judge_dir: common.JudgeDirOpt = None,
    min_panel: common.MinPanelOpt = None,
    bench: Annotated[str | None, typer.Option("--bench", help="mtrag or mtrag-un (default: mtrag-un when a task is "
                                              "UNDERSPECIFIED, else mtrag): MTRAG-UN adds the clarification judge "
                                              "and the official *_idk_underspecified metrics.")] = None,
    settings: dict[str, Any] | None = None,
) -> None:
    """Judge answers you already have, resumably (a rerun pays for nothing twice).

    Plain records (the rag bench; docs/your-rag-app.md): rb_alg offline (BERTScore and ROUGE-L against the
    reference); with --judge-models, RAGAS's faithfulness, answer_relevancy, context_precision, context_recall and
    answer_correctness. A --criterion is added to these (or to --judges).

    MTRAG predictions (docs/benches/mtrag.md): MTRAG's judges as its scripts run them, idk_lexical,rb_alg offline
    and idk,rb_alg,rb_llm,rl_f with judge models; MTRAG-UN adds its clarification judge."""
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
        spelling=judge_cli, **settings or {})
    result = prepared.execute(results_file=out or default_out(predictions))
    print_run(result.summary, fmt, failed=sum(1 for s in result.samples if s.errors()), usage=result.usage,
              paths=result.files)
    raise typer.Exit(result.exit_code)


def default_out(records: Path) -> Path:
    """`rows.csv` (or rows.jsonl, rows.csv.gz...) -> `rows.judged.jsonl`, in the current folder."""
    from ragjudge.formats.rag_records import records_stem

    return Path(records_stem(records) + ".judged.jsonl")

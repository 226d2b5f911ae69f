"""`ragjudge correlate`: how well do judges agree with human ratings, and humans with each other? Built on
`ragjudge.api.correlate` (with --labels, `ragjudge.api.trust.agreement_with_labels`): this module parses and renders."""

import json
from pathlib import Path
from typing import Annotated

import typer

from ragjudge.errors import UsageError


def correlate_command(
    humans: Annotated[Path, typer.Argument(metavar="HUMANS_OR_RUN", help="InspectorRAGet JSON with human ratings "
                                           "(MTRAG's human evaluation format; its algorithm metrics are judges too); "
                                           "with --labels, a run folder or results file.")],
    labels: Annotated[Path | None, typer.Option(
        "--labels", metavar="<file>", help="A person's labels of RUN's samples (ragjudge.labels/1 JSONL, or a CSV with "
        "one column per metric): each judge's agreement with them and each mean with PPI++ intervals.")] = None,
    judges: Annotated[list[str] | None, typer.Option(
        "--judges", metavar="<[model=]path>", help="[MODEL_ID=]PATH of judge values (repeatable): a ragjudge results.jsonl or run folder "
        "(for the model MODEL_ID of HUMANS), or an InspectorRAGet .json (e.g. from `ragjudge export`).")] = None,
    model_id: Annotated[str | None, typer.Option(
        "--model-id", help="Model of a --judges results file given without MODEL_ID= (default: the only model "
        "in HUMANS).")] = None,
    human_metrics: Annotated[list[str] | None, typer.Option(
        "--human-metrics", metavar="<names>", help="Human dimensions to use, comma-separated (default: all).")] = None,
    judge_metrics: Annotated[list[str] | None, typer.Option(
        "--judge-metrics", metavar="<names>", help="Judge metrics to use, comma-separated (default: all).")] = None,
    where: Annotated[list[str] | None, typer.Option(
        "--where", metavar="<field=values>", help="Keep items whose task FIELD has one of the values, e.g. answerability=ANSWERABLE,PARTIAL "
        "(repeatable; fields are the tasks' enrichments, case-insensitive).")] = None,
    exclude_model: Annotated[list[str] | None, typer.Option(
        "--exclude-model", metavar="<model>", help="Leave out a model's items, e.g. reference (repeatable, comma-separated).")] = None,
    weighting: Annotated[str, typer.Option(
        "--weighting", help="none, or inverse-frequency: weight each item by 1 / frequency of its human score "
        "(weighted rank correlation, as MTRAG reported).")] = "none",
    bootstrap: Annotated[int, typer.Option("--bootstrap", min=0, help="Bootstrap resamples of tasks for "
                                           "confidence intervals (0: none).")] = 1000,
    seed: Annotated[int, typer.Option("--seed", help="Random seed of the bootstrap.")] = 0,
    confidence: Annotated[float, typer.Option("--confidence", min=0.5, max=0.999,
                                              help="Confidence level of the intervals.")] = 0.95,
    stat: Annotated[str, typer.Option("--stat", help="Statistic shown in the table and heatmap and used to pick "
                                      "the best judge: spearman, kendall or pearson.")] = "spearman",
    members: Annotated[bool, typer.Option("--members", metavar="", help="Also correlate each panel member (e.g. each RB_llm "
                                          "judge model) on its own, as NAME[model].")] = False,
    idk_metrics: Annotated[list[str] | None, typer.Option(
        "--idk-metrics", metavar="<names>", help="Judge metrics scored against answerability labels (default: idk_eval,idk_lexical "
        "when present).")] = None,
    clarification_metrics: Annotated[list[str] | None, typer.Option(
        "--clarification-metrics", metavar="<names>", help="Clarification judge metrics scored against the "
        "UNDERSPECIFIED class (MTRAG-UN); the first also scores UNDERSPECIFIED tasks in the IDK table, as the official "
        "conditioning does (default: underspecified_eval when present).")] = None,
    conversational_as_unanswerable: Annotated[bool, typer.Option(
        "--conversational-as-unanswerable", metavar="", help="Score IDK judges on conversational turns as unanswerable.")] = False,
    fmt: Annotated[str, typer.Option("--format", help="table, json or csv, on stdout. json: one object whose "
                                        "\"correlations\" is the list of rows {judge, human, n, spearman, kendall, "
                                        "pearson} (each statistic {value, ci_low, ci_high, p}) and whose "
                                        "\"agreement\" maps each human dimension to its agreement measures.")
                   ] = "table",
    csv_out: Annotated[Path | None, typer.Option("--csv", help="Also write the correlations as CSV here.")] = None,
    heatmap_out: Annotated[Path | None, typer.Option("--heatmap", help="Also draw a heatmap here (.png, .pdf, "
                                                     ".svg or .jpg).")] = None,
) -> None:
    """Correlate judges with human ratings (Spearman, Kendall, Pearson with bootstrap CIs) and measure
    inter-annotator, judge-panel and IDK agreement; with --labels, a run's judges against your labels."""
    if labels is not None:
        unused = {"--judges": judges, "--model-id": model_id, "--human-metrics": human_metrics, "--where": where,
                  "--exclude-model": exclude_model, "--weighting": weighting != "none", "--stat": stat != "spearman",
                  "--members": members, "--idk-metrics": idk_metrics, "--clarification-metrics": clarification_metrics,
                  "--conversational-as-unanswerable": conversational_as_unanswerable, "--heatmap": heatmap_out}
        given = [flag for flag, value in unused.items() if value]
        if given:
            raise UsageError(f"{given[0]} does not apply with --labels (it is for an InspectorRAGet file of human "
                             "ratings)")
        from ragjudge.api.names import names
        from ragjudge.cli.trust_render import print_labels_report

        return print_labels_report(humans, labels, metrics=names(judge_metrics), bootstrap=bootstrap, seed=seed,
                                   confidence=confidence, fmt=fmt, csv_out=csv_out)
    from ragjudge.api import correlate
    from ragjudge.correlation.render import print_report, to_csv
    from ragjudge.engine.bench_options import CLI

    if fmt not in ("table", "json", "csv"):
        raise UsageError(f"--format must be table, json or csv, got {fmt!r}")
    report = correlate(humans, judges=judges, model_id=model_id, human_metrics=human_metrics,
                       judge_metrics=judge_metrics, where=where, exclude_model=exclude_model, weighting=weighting,
                       bootstrap=bootstrap, seed=seed, confidence=confidence, stat=stat, members=members,
                       idk_metrics=idk_metrics, clarification_metrics=clarification_metrics,
                       conversational_as_unanswerable=conversational_as_unanswerable, csv=csv_out,
                       heatmap=heatmap_out, spelling=CLI)
    if fmt == "json":
        from ragjudge.formats.jsonl import to_jsonable

        print(json.dumps(to_jsonable(report), indent=2, allow_nan=False))
    elif fmt == "csv":
        print(to_csv(report), end="")
    else:
        from rich.console import Console

        print_report(report, Console())
    if csv_out:
        typer.echo(f"correlations: {csv_out}", err=True)
    if heatmap_out:
        typer.echo(f"heatmap: {heatmap_out}", err=True)

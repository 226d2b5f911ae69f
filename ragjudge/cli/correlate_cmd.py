"""`ragjudge correlate`: how well do judges agree with human ratings, and humans with each other?"""

import json
from pathlib import Path
from typing import Annotated

import typer

from ragjudge.errors import InputError, UsageError

HEATMAP_FORMATS = (".png", ".pdf", ".svg", ".jpg", ".jpeg")


def _split(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    out = [v.strip() for value in values for v in value.split(",") if v.strip()]
    if not out:
        raise UsageError("an empty list was given")
    return out


def _where(conditions: list[str] | None) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for condition in conditions or []:
        name, sep, values = condition.partition("=")
        wanted = [v.strip() for v in values.split(",") if v.strip()]
        if not sep or not name.strip() or not wanted:
            raise UsageError(f"--where expects FIELD=VALUE[,VALUE...], got {condition!r}")
        out.setdefault(name.strip(), []).extend(wanted)
    return out


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
        from ragjudge.cli.trust_render import print_labels_report

        return print_labels_report(humans, labels, metrics=_split(judge_metrics), bootstrap=bootstrap, seed=seed,
                                   confidence=confidence, fmt=fmt, csv_out=csv_out)
    from ragjudge.formats.samples import names_run

    if names_run(humans) or (humans.is_dir() and (humans / "summary.json").is_file()):
        raise UsageError(f"{humans} is a run, not human ratings: measure its judges against your labels with "
                         f"`ragjudge correlate {humans} --labels FILE` (`ragjudge label-sample {humans}` draws which "
                         f"samples to label), or against an InspectorRAGet file of human ratings with "
                         f"`ragjudge correlate HUMANS.json --judges {humans}`")
    from ragjudge.correlation import CorrelateOptions, analyze, load_humans
    from ragjudge.correlation.dataset import add_inspectorraget_judges, add_results
    from ragjudge.correlation.idk import CLARIFICATION_METRICS, IDK_METRICS
    from ragjudge.correlation.render import heatmap, print_report, to_csv
    from ragjudge.correlation.sources import is_inspectorraget, parse_source, results_file
    from ragjudge.correlation.stats import STATS, WEIGHTINGS
    from ragjudge.formats.files import atomic_output, output_file

    if fmt not in ("table", "json", "csv"):
        raise UsageError(f"--format must be table, json or csv, got {fmt!r}")
    if weighting not in WEIGHTINGS:
        raise UsageError(f"--weighting must be one of {', '.join(WEIGHTINGS)}, got {weighting!r}")
    if stat not in STATS:
        raise UsageError(f"--stat must be one of {', '.join(STATS)}, got {stat!r}")
    if heatmap_out is not None:  # checked before any work, not after the bootstrap
        if heatmap_out.suffix.lower() not in HEATMAP_FORMATS:
            raise UsageError(f"--heatmap {heatmap_out}: the heatmap is an image; name it "
                             f"{' or '.join('*' + s for s in HEATMAP_FORMATS)}")
        output_file(heatmap_out, "heatmap image (--heatmap)")
    if csv_out is not None:
        output_file(csv_out, "CSV file (--csv)")

    ds = load_humans(humans)
    results_sources = []
    for spec in judges or []:
        given, path = parse_source(spec)
        if is_inspectorraget(path):
            if given:
                raise UsageError(f"--judges {spec}: an InspectorRAGet file names its own models; drop '{given}='")
            if add_inspectorraget_judges(ds, path) == 0:
                raise InputError(f"no evaluation matches a task and model of {humans} (models there: "
                                 f"{', '.join(ds.models)})", file=str(path))
        else:
            results_sources.append((given, path))
    if model_id and sum(given is None for given, _ in results_sources) != 1:
        raise UsageError("--model-id applies to exactly one --judges results file given without MODEL_ID=")
    for given, path in results_sources:
        chosen = given or model_id
        if chosen is None:
            if len(ds.models) != 1:
                raise UsageError(f"--judges {path}: which model of {humans} produced these results? pass "
                                 f"--judges MODEL_ID={path} (models: {', '.join(ds.models)})")
            chosen = next(iter(ds.models))
        chosen = ds.resolve_model(chosen, "--judges")
        joined = add_results(ds, path, chosen)
        if joined == 0:
            example = next(iter(ds.items.values())).task_id if ds.items else "?"
            raise InputError(f"no result matches a task of {humans} for model {chosen!r} (task ids there look like "
                             f"{example!r}); is it the right model and task set?", file=str(results_file(path)))

    ds = ds.select(_split(human_metrics), _split(judge_metrics))
    if exclude_model:
        ds = ds.exclude_models(_split(exclude_model) or [])
    conditions = _where(where)
    if conditions:
        ds = ds.where(conditions)
    if members:
        ds = ds.with_members()
    if not any(ds.humans[h].values for h in ds.humans):
        raise UsageError("no human-rated items left in the selection")
    if ds.judges and not any(set(j.values) & set(h.values) for j in ds.judges.values() for h in ds.humans.values()):
        raise UsageError("no item has both a judge value and a human rating in the selection")

    if heatmap_out is not None and not ds.judges:
        raise UsageError("--heatmap needs at least one judge")
    options = CorrelateOptions(weighting=weighting, bootstrap=bootstrap, seed=seed, confidence=confidence, stat=stat,
                               idk_metrics=tuple(_split(idk_metrics) or IDK_METRICS),
                               clarification_metrics=tuple(_split(clarification_metrics) or CLARIFICATION_METRICS),
                               conversational_as_unanswerable=conversational_as_unanswerable,
                               filters={"where": conditions, "exclude_model": _split(exclude_model) or []})
    show_progress = bootstrap > 0 and len(ds.judges) * len(ds.humans) * bootstrap >= 20_000
    from rich.console import Console

    from ragjudge.formats.jsonl import to_jsonable
    from ragjudge.progress import progress_bars

    with progress_bars(show_progress) as bars:
        report = analyze(ds, options, progress=bars.bar)

    if fmt == "json":
        print(json.dumps(to_jsonable(report), indent=2, allow_nan=False))
    elif fmt == "csv":
        print(to_csv(report), end="")
    else:
        print_report(report, Console())
    if csv_out:
        with atomic_output(csv_out) as tmp:
            tmp.write_text(to_csv(report), encoding="utf-8")
        typer.echo(f"correlations: {csv_out}", err=True)
    if heatmap_out:
        with atomic_output(heatmap_out) as tmp:
            heatmap(report, tmp)
        typer.echo(f"heatmap: {heatmap_out}", err=True)

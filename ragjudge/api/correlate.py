"""`correlate`: how well judges agree with human ratings, and humans with each other (`ragjudge correlate` is this
call and a rendering of its report; `correlate RUN --labels FILE` is `ragjudge.api.trust.agreement_with_labels`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ragjudge.api.names import Names, names
from ragjudge.engine.bench_options import PYTHON, Spelling
from ragjudge.errors import InputError, UsageError

HEATMAP_FORMATS = (".png", ".pdf", ".svg", ".jpg", ".jpeg")


def correlate(humans: str | Path, *, judges: Sequence[str | Path] | None = None, model_id: str | None = None,
              human_metrics: Names = None, judge_metrics: Names = None,
              where: Mapping[str, Sequence[str] | str] | Sequence[str] | None = None, exclude_model: Names = None,
              weighting: str = "none", bootstrap: int = 1000, seed: int = 0, confidence: float = 0.95,
              stat: str = "spearman", members: bool = False, idk_metrics: Names = None,
              clarification_metrics: Names = None, conversational_as_unanswerable: bool = False,
              csv: str | Path | None = None, heatmap: str | Path | None = None, show_progress: bool = True,
              spelling: Spelling = PYTHON) -> dict[str, Any]:
    """Correlations of judges with the human ratings of `humans` (an InspectorRAGet file; its algorithm metrics are
    judges too), with bootstrap intervals, and inter-annotator, judge-panel and IDK agreement: the report
    `ragjudge correlate --format json` prints. `judges`: more judge values, each `[MODEL_ID=]PATH` of a ragjudge run
    (for the model MODEL_ID of `humans`; `model_id` for one given without) or an InspectorRAGet file; `where`: keep
    items whose task field has one of the values; `csv`, `heatmap`: also write the correlations there."""
    from ragjudge.correlation import CorrelateOptions, analyze, load_humans
    from ragjudge.correlation.dataset import add_inspectorraget_judges, add_results
    from ragjudge.correlation.idk import CLARIFICATION_METRICS, IDK_METRICS
    from ragjudge.correlation.render import heatmap as draw_heatmap
    from ragjudge.correlation.render import to_csv
    from ragjudge.correlation.sources import is_inspectorraget, parse_source, results_file
    from ragjudge.correlation.stats import STATS, WEIGHTINGS
    from ragjudge.formats.files import atomic_output, output_file
    from ragjudge.progress import progress_bars

    from ragjudge.formats.run_layout import OutputPaths
    from ragjudge.formats.samples import names_run

    humans, flag = Path(humans), spelling.flag
    if names_run(humans) or (humans.is_dir() and OutputPaths.in_folder(humans).summary.is_file()):
        raise UsageError(f"{humans} is a run, not human ratings: measure its judges against your labels with "
                         f"`ragjudge correlate {humans} --labels FILE` (`ragjudge label-sample {humans}` draws which "
                         f"samples to label), or against an InspectorRAGet file of human ratings with "
                         f"`ragjudge correlate HUMANS.json --judges {humans}`")
    if weighting not in WEIGHTINGS:
        raise UsageError(f"{flag('weighting')} must be one of {', '.join(WEIGHTINGS)}, got {weighting!r}")
    if stat not in STATS:
        raise UsageError(f"{flag('stat')} must be one of {', '.join(STATS)}, got {stat!r}")
    heatmap_out, csv_out = (Path(heatmap) if heatmap else None), (Path(csv) if csv else None)
    if heatmap_out is not None:  # checked before any work, not after the bootstrap
        if heatmap_out.suffix.lower() not in HEATMAP_FORMATS:
            raise UsageError(f"{flag('heatmap')} {heatmap_out}: the heatmap is an image; name it "
                             f"{' or '.join('*' + s for s in HEATMAP_FORMATS)}")
        output_file(heatmap_out, f"heatmap image ({flag('heatmap')})")
    if csv_out is not None:
        output_file(csv_out, f"CSV file ({flag('csv')})")

    ds = load_humans(humans)
    results_sources = []
    for spec in judges or []:
        given, path = parse_source(str(spec))
        if is_inspectorraget(path):
            if given:
                raise UsageError(f"{flag('judges')} {spec}: an InspectorRAGet file names its own models; drop "
                                 f"'{given}='")
            if add_inspectorraget_judges(ds, path) == 0:
                raise InputError(f"no evaluation matches a task and model of {humans} (models there: "
                                 f"{', '.join(ds.models)})", file=str(path))
        else:
            results_sources.append((given, path))
    if model_id and sum(given is None for given, _ in results_sources) != 1:
        raise UsageError(f"{flag('model_id')} applies to exactly one {flag('judges')} results file given without "
                         "MODEL_ID=")
    for given, path in results_sources:
        chosen = given or model_id
        if chosen is None:
            if len(ds.models) != 1:
                raise UsageError(f"{flag('judges')} {path}: which model of {humans} produced these results? pass "
                                 f"{flag('judges')} MODEL_ID={path} (models: {', '.join(ds.models)})")
            chosen = next(iter(ds.models))
        chosen = ds.resolve_model(chosen, flag("judges"))
        if add_results(ds, path, chosen) == 0:
            example = next(iter(ds.items.values())).task_id if ds.items else "?"
            raise InputError(f"no result matches a task of {humans} for model {chosen!r} (task ids there look like "
                             f"{example!r}); is it the right model and task set?", file=str(results_file(path)))

    ds = ds.select(names(human_metrics), names(judge_metrics))
    excluded = names(exclude_model) or []
    if excluded:
        ds = ds.exclude_models(excluded)
    conditions = _where(where, flag("where"))
    if conditions:
        ds = ds.where(conditions)
    if members:
        ds = ds.with_members()
    if not any(ds.humans[h].values for h in ds.humans):
        raise UsageError("no human-rated items left in the selection")
    if ds.judges and not any(set(j.values) & set(h.values) for j in ds.judges.values() for h in ds.humans.values()):
        raise UsageError("no item has both a judge value and a human rating in the selection")
    if heatmap_out is not None and not ds.judges:
        raise UsageError(f"{flag('heatmap')} needs at least one judge")
    options = CorrelateOptions(weighting=weighting, bootstrap=bootstrap, seed=seed, confidence=confidence, stat=stat,
                               idk_metrics=tuple(names(idk_metrics) or IDK_METRICS),
                               clarification_metrics=tuple(names(clarification_metrics) or CLARIFICATION_METRICS),
                               conversational_as_unanswerable=conversational_as_unanswerable,
                               filters={"where": conditions, "exclude_model": excluded})
    show = show_progress and bootstrap > 0 and len(ds.judges) * len(ds.humans) * bootstrap >= 20_000
    with progress_bars(show) as bars:
        report = analyze(ds, options, progress=bars.bar)
    if csv_out:
        with atomic_output(csv_out) as tmp:
            tmp.write_text(to_csv(report), encoding="utf-8")
    if heatmap_out:
        with atomic_output(heatmap_out) as tmp:
            draw_heatmap(report, tmp)
    return report


def _where(conditions: Mapping[str, Sequence[str] | str] | Sequence[str] | None, name: str) -> dict[str, list[str]]:
    """`{"answerability": ["ANSWERABLE"]}`, or conditions as typed: `["answerability=ANSWERABLE,PARTIAL"]`."""
    if isinstance(conditions, Mapping):
        return {str(k): names(v) or [] for k, v in conditions.items()}
    out: dict[str, list[str]] = {}
    for condition in [conditions] if isinstance(conditions, str) else conditions or []:
        field, sep, values = condition.partition("=")
        wanted = [v.strip() for v in values.split(",") if v.strip()]
        if not sep or not field.strip() or not wanted:
            raise UsageError(f"{name} expects FIELD=VALUE[,VALUE...], got {condition!r}")
        out.setdefault(field.strip(), []).extend(wanted)
    return out

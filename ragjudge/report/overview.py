"""The overview of one or more runs: settings, metrics with errors, breakdowns (tables and charts), the bench's
own tables and LLM usage. Numbers come from each run's summary.json as its bench wrote it; what a summary
lacks (a generic bench without `metrics` or `breakdowns`) is computed from the per-sample values."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from ragjudge.report.charts import SERIES, bar_chart
from ragjudge.report.load import LoadedRun
from ragjudge.report.pack import RunSamples, is_categorical
from ragjudge.report.view import display

SETTING_KEYS = ("generator", "setting", "source", "task", "data")
SKIP_INFO = {"bench", "options", "engine", "usage", "ragjudge_version", "n_samples", "seconds", "data_hash", "judges",
             "judge_models", "pipeline", "files"} | set(SETTING_KEYS)
MAX_BREAKDOWN_VALUES = 12


@dataclass
class Breakdown:
    dimension: str
    title: str
    values: list[str]
    columns: list[str]
    """Column headers after the value: `tasks (run)` then `metric (run)`."""
    rows: list[list[Any]]
    chart: str


@dataclass
class Overview:
    metrics: list[str]
    headline: list[str]
    directions: dict[str, bool | None]
    metric_rows: list[dict[str, Any]]
    """{"name", "runs": [{"mean", "n", "errors"} or None]}."""
    breakdowns: list[Breakdown]
    metric_chart: str
    settings: list[dict[str, Any]]
    """{"label", "rows": [[key, text]]} per run."""
    usage: list[dict[str, Any]]
    """{"label", "rows": [[model, calls, cached, retries, failed, prompt, completion, cost]], "total"} per run."""
    tables: list[dict[str, Any]] = field(default_factory=list)
    """{"label", "tables": [Table], "notes": [text]} per run."""


def metric_order(runs: list[LoadedRun], samples: list[RunSamples]) -> list[str]:
    names: list[str] = []
    for run in runs:
        names += [m for m in run.view.summary_metrics(run.summary) if m not in names]
    for s in samples:
        for metrics in s.metrics:
            names += [m for m in metrics if m not in names]
    return names


def build_overview(runs: list[LoadedRun], samples: list[RunSamples]) -> Overview:
    metrics = metric_order(runs, samples)
    first = runs[0]
    sampled = [m for m in metrics if any(m in x for s in samples for x in s.metrics)]
    headline = [m for m in first.view.headline(first.summary, sampled or metrics) if m in metrics][:4]
    directions = {m: first.view.direction(m) for m in metrics}
    rows = []
    for name in metrics:
        cells = []
        for run, s in zip(runs, samples, strict=True):
            stats = run.view.summary_metrics(run.summary).get(name)
            if stats is None:
                values = [x[name] for x in s.metrics if name in x]
                stats = {"mean": statistics.fmean(values), "n": len(values), "errors": None} if values else None
            cells.append(stats)
        rows.append({"name": name, "runs": cells, "headline": name in headline, "direction": directions[name]})
    chart_metrics = [r for r in rows if all(c is None or c["mean"] is None or 0 <= c["mean"] <= 1 for c in r["runs"])
                     and any(c and c["mean"] is not None for c in r["runs"])][:16]
    labels = [r.label for r in runs]
    metric_chart = bar_chart("Mean of each metric" + (" by run" if len(runs) > 1 else ""),
                             [r["name"] for r in chart_metrics], labels,
                             {(r["name"], labels[k]): (c or {}).get("mean") for r in chart_metrics
                              for k, c in enumerate(r["runs"])}) if chart_metrics else ""
    return Overview(metrics=metrics, headline=headline, directions=directions, metric_rows=rows,
                    breakdowns=breakdowns(runs, samples, headline), metric_chart=metric_chart,
                    settings=[settings(r, s) for r, s in zip(runs, samples, strict=True)],
                    usage=[usage(r) for r in runs if r.run_info],
                    tables=[{"label": r.label, "tables": r.view.extra_tables(r.summary), "notes":
                             r.view.notes(r.summary) + r.notes} for r in runs])


def _computed_breakdowns(s: RunSamples, metrics: list[str]) -> dict[str, dict[str, dict[str, Any]]]:
    """Means of `metrics` by each facet, for runs whose summary has no breakdowns."""
    groups: dict[str, dict[str, list[dict[str, float]]]] = {}
    for facets, values in zip(s.facets, s.metrics, strict=True):
        for name, value in facets.items():
            for v in value if isinstance(value, list) else [value]:
                groups.setdefault(name, {}).setdefault(str(v), []).append(values)
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for name, by_value in groups.items():
        if not is_categorical(len(by_value), len(s.ids), MAX_BREAKDOWN_VALUES):
            continue
        out[name] = {}
        for value, members in sorted(by_value.items()):
            stats: dict[str, Any] = {"n_tasks": len(members)}
            for m in metrics:
                found = [x[m] for x in members if m in x]
                stats[m] = statistics.fmean(found) if found else None
            out[name][value] = stats
    return out


def breakdowns(runs: list[LoadedRun], samples: list[RunSamples], headline: list[str]) -> list[Breakdown]:
    per_run = []
    for run, s in zip(runs, samples, strict=True):
        found = run.view.breakdowns(run.summary)
        per_run.append(found if found else _computed_breakdowns(s, headline))
    dims: list[str] = []
    for found in per_run:
        dims += [d for d in found if d not in dims]
    titles = runs[0].view.breakdown_titles()
    multi = len(runs) > 1
    out = []
    for dim in dims:
        values: list[str] = []
        for found in per_run:
            values += [v for v in found.get(dim, {}) if v not in values]
        metrics = [m for m in headline if any(m in g for found in per_run for g in found.get(dim, {}).values())]
        if not metrics:
            first = next(g for found in per_run for g in found.get(dim, {}).values())
            metrics = [k for k in first if k not in ("n_tasks", "n") and isinstance(first[k], (int, float))][:4]
        columns, table = [], []
        for run in runs:
            columns.append("tasks" + (f" ({run.label})" if multi else ""))
        for m in metrics:
            columns += [m + (f" ({run.label})" if multi else "") for run in runs]
        charted = metrics[:1] if multi else metrics[:3]  # the table has them all; a chart stays readable
        series = [(m, k) for m in charted for k in range(len(runs))][:SERIES]
        names = {(m, k): (f"{m} · {runs[k].label}" if multi else m) for m, k in series}
        chart_values: dict[tuple[str, str], float | None] = {}
        for value in values:
            groups = [found.get(dim, {}).get(value, {}) for found in per_run]
            row: list[Any] = [value, *(g.get("n_tasks", g.get("n")) for g in groups)]
            row += [groups[k].get(m) for m in metrics for k in range(len(runs))]
            table.append(row)
            for m, k in series:
                chart_values[(value, names[(m, k)])] = groups[k].get(m)
        title = titles.get(dim, f"By {dim.replace('_', ' ')}")
        chart = bar_chart(title, values, [names[x] for x in series], chart_values) if series else ""
        out.append(Breakdown(dim, title, values, columns, table, chart))
    return out


def settings(run: LoadedRun, s: RunSamples) -> dict[str, Any]:
    info = run.run_info
    rows: list[list[str]] = [["bench", run.bench], ["samples", str(len(s.ids))],
                             ["samples with errors", str(sum(1 for e in s.errors if e))]]
    for key in SETTING_KEYS:
        if info.get(key) not in (None, "", [], {}):
            rows.append([key, display(info[key], 300)])
    pipeline = info.get("pipeline")
    if isinstance(pipeline, dict):
        spec = pipeline.get("spec") or {}
        rows.append(["pipeline", display({k: spec.get(k) for k in ("name", "k") if spec.get(k) is not None}
                                         | {"retriever": (pipeline.get("retriever") or {}).get("kind"),
                                            "queries": pipeline.get("query_strategy")}, 400)])
    elif pipeline:
        rows.append(["pipeline", display(pipeline, 300)])
    for judge, models in (info.get("judges") or {}).items():
        rows.append([f"judge {judge}", ", ".join(map(str, models)) if isinstance(models, list) and models
                     else display(models, 200) if models else "offline"])
    options = {k: v for k, v in (info.get("options") or {}).items() if v not in (None, "", [], {}, False)}
    if options:
        rows.append(["bench options", display(options, 600)])
    for key, value in info.items():
        if key not in SKIP_INFO and value not in (None, "", [], {}):
            rows.append([key, display(value, 300)])
    if info.get("engine"):
        rows.append(["engine", display(info["engine"], 300)])
    rows.append(["data hash", str(info.get("data_hash") or "not recorded (run made before ragjudge recorded it)")])
    rows.append(["results sha256", run.results_sha256[:16]])
    rows.append(["ragjudge", str(info.get("ragjudge_version", "unknown"))])
    if info.get("seconds") is not None:
        rows.append(["run time", f"{info['seconds']} s"])
    rows.append(["results", str(run.path)])
    return {"label": run.label, "rows": rows}


def usage(run: LoadedRun) -> dict[str, Any]:
    rows = []
    total = [0, 0, 0, 0, 0, 0, 0.0]
    for model, u in sorted((run.run_info.get("usage") or {}).items()):
        cells = [u.get(k, 0) or 0 for k in ("calls", "cached", "retries", "failures", "prompt_tokens",
                                             "completion_tokens", "cost")]
        rows.append([model, *cells])
        total = [a + b for a, b in zip(total, cells, strict=True)]
    return {"label": run.label, "rows": rows, "total": total}



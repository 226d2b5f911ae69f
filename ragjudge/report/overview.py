"""The overview of one or more runs of one bench, from each run's summary alone (the result contract).

Each metric's metadata says which way is better and what kind of number it is, so counts and times are listed but
never drawn on the 0-1 axis of the scores; every group of every breakdown is drawn (no bar limit hides a system).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ragjudge.engine.render import ARROWS, own_tables
from ragjudge.engine.summary import UNIT_KINDS, Metric, Stat, Summary
from ragjudge.report.charts import bar_chart
from ragjudge.report.load import LoadedRun
from ragjudge.report.pack import RunSamples
from ragjudge.report.view import display

SETTING_KEYS = ("generator", "setting", "source", "task", "data")
SKIP_INFO = {"bench", "options", "engine", "usage", "ragjudge_version", "n_samples", "seconds", "data_hash", "judges",
             "judge_models", "pipeline", "files", "inputs", "models", "usage_this_invocation",
             "rate_limits"} | set(SETTING_KEYS)


@dataclass
class Breakdown:
    dimension: str
    title: str
    values: list[str]
    columns: list[str]
    """Column headers after the value: `n (run)` then `metric (run)`."""
    rows: list[list[Any]]
    chart: str
    note: str = ""


@dataclass
class Overview:
    metrics: list[str]
    headline: list[str]
    directions: dict[str, bool | None]
    metric_rows: list[dict[str, Any]]
    """{"name", "arrow", "kind", "description", "runs": [Stat or None]}."""
    breakdowns: list[Breakdown]
    metric_chart: str
    settings: list[dict[str, Any]]
    """{"label", "rows": [[key, text]]} per run."""
    usage: list[dict[str, Any]]
    """{"label", "rows": [[model, calls, cached, retries, failed, prompt, completion, cost]], "total"} per run."""
    tables: list[dict[str, Any]] = field(default_factory=list)
    """{"label", "tables": [Table], "notes": [text]} per run."""
    headlines: list[dict[str, str]] = field(default_factory=list)
    """{"label", "text"}: each run's headline line."""
    not_applicable: bool = False
    """Whether a metric did not apply to some sample of some run: the table then has an `n/a` column."""


def metric_meta(summaries: list[Summary]) -> dict[str, Metric]:
    """Every metric of every run, in the first run's order, with the metadata of the first run that has it."""
    meta: dict[str, Metric] = {}
    for summary in summaries:
        for name, metric in summary.metrics.items():
            meta.setdefault(name, metric)
    return meta


def headline_metrics(summary: Summary) -> list[str]:
    """What the compare tab leads with: the headline's metric, then what the first breakdown shows."""
    first = next(iter(summary.breakdowns.values()), None)
    names = list(dict.fromkeys([*([summary.headline.metric] if summary.headline else []),
                                *(first.columns if first else [])]))
    return (names or list(summary.metrics))[:4]


def build_overview(runs: list[LoadedRun], samples: list[RunSamples]) -> Overview:
    summaries = [r.summary for r in runs]
    meta = metric_meta(summaries)
    metrics = list(meta)
    headline = headline_metrics(summaries[0])
    directions = {m: meta[m].higher_is_better for m in metrics}
    rows = [{"name": name, "arrow": ARROWS[m.higher_is_better], "kind": m.kind, "description": m.description,
             "headline": name in headline, "runs": [s.metrics.get(name) for s in summaries]}
            for name, m in meta.items()]
    charted = [r for r in rows if r["kind"] in UNIT_KINDS and any(c is not None and c.value is not None
                                                                   for c in r["runs"])]
    labels = [r.label for r in runs]
    metric_chart = bar_chart("Each score and rate (0 to 1)" + (" by run" if len(runs) > 1 else ""),
                             [r["name"] for r in charted], labels,
                             {(r["name"], labels[k]): c.value if c is not None else None for r in charted
                              for k, c in enumerate(r["runs"])}) if charted else ""
    return Overview(metrics=metrics, headline=headline, directions=directions, metric_rows=rows,
                    breakdowns=breakdowns(runs, meta), metric_chart=metric_chart,
                    settings=[settings(r, s) for r, s in zip(runs, samples, strict=True)],
                    usage=[usage(r) for r in runs if r.run_info],
                    tables=[{"label": r.label, "tables": own_tables(r.summary), "notes": r.summary.notes + r.notes}
                            for r in runs],
                    headlines=[{"label": r.label, "text": r.summary.headline.text} for r in runs
                               if r.summary.headline is not None],
                    not_applicable=any(m.not_applicable for s in summaries for m in s.metrics.values()))


def breakdowns(runs: list[LoadedRun], meta: dict[str, Metric]) -> list[Breakdown]:
    """Every breakdown of every run, their groups together, each metric a column per run; a chart of the scores
    and rates among the breakdown's columns (the first when comparing runs), every group drawn."""
    dims = list(dict.fromkeys(d for run in runs for d, b in run.summary.breakdowns.items() if b.groups))
    multi = len(runs) > 1
    out = []
    for dim in dims:
        found = [run.summary.breakdowns.get(dim) for run in runs]
        first = next(b for b in found if b is not None)
        values = list(dict.fromkeys(v for b in found if b for v in b.groups))
        shown = first.columns or list(dict.fromkeys(m for b in found if b for g in b.groups.values() for m in g.metrics))
        columns = ["n" + (f" ({run.label})" if multi else "") for run in runs]
        columns += [f"{m} {ARROWS[meta[m].higher_is_better]}" + (f" ({run.label})" if multi else "")
                    for m in shown for run in runs]
        table = []
        for value in values:
            groups = [b.groups.get(value) if b else None for b in found]
            row: list[Any] = [value, *(g.n if g else None for g in groups)]
            row += [_value(g.metrics.get(m) if g else None) for m in shown for g in groups]
            table.append(row)
        drawn = [m for m in shown if meta[m].kind in UNIT_KINDS][: 1 if multi else 3]
        series = [(m, k) for m in drawn for k in range(len(runs))]
        names = {(m, k): (f"{m} · {runs[k].label}" if multi else m) for m, k in series}
        chart_values = {(value, names[(m, k)]): _value(found[k].groups[value].metrics.get(m))
                        for value in values for m, k in series
                        if found[k] is not None and value in found[k].groups}
        chart = bar_chart(first.title, values, [names[x] for x in series], chart_values) if series else ""
        out.append(Breakdown(dim, first.title, values, columns, table, chart, first.note))
    return out


def _value(stat: Stat | None) -> float | None:
    return None if stat is None else stat.value


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
    if options := {k: v for k, v in (info.get("options") or {}).items() if v not in (None, "", [], {}, False)}:
        rows.append(["bench options", display(options, 600)])
    for key, value in info.items():
        if key not in SKIP_INFO and value not in (None, "", [], {}):
            rows.append([key, display(value, 300)])
    if info.get("engine"):
        rows.append(["engine", display(info["engine"], 300)])
    rows.append(["data hash", str(info.get("data_hash") or "not recorded (run made before ragjudge recorded it)")])
    rows.append(["samples sha256", run.samples_sha256[:16]])
    rows.append(["ragjudge", str(info.get("ragjudge_version", "unknown"))])
    if info.get("seconds") is not None:
        rows.append(["run time", f"{info['seconds']} s"])
    rows.append(["samples", str(run.path)])
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



"""Build the report: one HTML file with its styles, script and data inside (no server, no network).

The task data is gzip-compressed and base64-encoded in the page (the browser's own DecompressionStream inflates
it): a full MTRAG run with several judges stays a few megabytes, small enough to attach to a pull request or email.
"""

from __future__ import annotations

import base64
import gzip
import json
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path
from typing import Any

from ragjudge.version import __version__
from ragjudge.errors import UsageError
from ragjudge.formats.files import atomic_output
from ragjudge.report.charts import heatmap
from ragjudge.report.judges import SPREAD_AT, judge_report
from ragjudge.report.load import LoadedRun, load_run, unique_labels
from ragjudge.report.overview import build_overview
from ragjudge.report.pack import page_data, read_samples

ASSETS = "assets"


@dataclass
class BuiltReport:
    path: Path
    bytes: int
    seconds: float
    n_tasks: int
    runs: list[str]


def build_report(runs: list[str | Path | LoadedRun], out: str | Path, *, labels: list[str] | None = None,
                 correlate: list[str | Path] | None = None, compress: bool = True,
                 to_label: list[str] | None = None,
                 human_labels: str | Path | list[str | Path] | None = None) -> BuiltReport:
    """Write the report of `runs` (run folders or results files) to `out`. `to_label`: sample ids drawn to be
    labelled (`ragjudge label-sample`): the report gets a labelling mode that shows them first. `human_labels`: a
    person's labels of each run's samples (one file per run): the Judges tab shows each judge against them, the
    Compare tab the PPI++ paired differences."""
    started = time.perf_counter()
    if not runs:
        raise UsageError("give at least one run folder or results file")
    if labels and len(labels) != len(runs):
        raise UsageError(f"--label was given {len(labels)} time(s) for {len(runs)} run(s): give one per run or none")
    loaded = [run if isinstance(run, LoadedRun) else load_run(run, labels[k] if labels else None)
              for k, run in enumerate(runs)]
    by_bench: dict[str, list[str]] = {}
    for run in loaded:
        by_bench.setdefault(run.bench, []).append(str(run.path))
    if len(by_bench) > 1:
        raise UsageError("these runs are of different benches (" + "; ".join(
            f"{bench}: {', '.join(paths)}" for bench, paths in by_bench.items()) + "): a report compares runs of one "
            "bench; make one report per bench")
    if not labels:
        unique_labels(loaded)
    trust: tuple[list[dict[str, Any]], list[list[dict[str, Any]]]] = ([], [])
    if human_labels is not None:
        from ragjudge.report.trust import with_labels

        trust = with_labels(loaded, [human_labels] if isinstance(human_labels, (str, Path)) else list(human_labels))
    html, n_tasks = render(loaded, correlate or [], compress=compress, to_label=to_label, trust=trust)
    out = Path(out)
    with atomic_output(out) as tmp:
        tmp.write_text(html, encoding="utf-8")
    return BuiltReport(path=out, bytes=out.stat().st_size, seconds=time.perf_counter() - started, n_tasks=n_tasks,
                       runs=[r.label for r in loaded])


def render(runs: list[LoadedRun], correlate: list[str | Path], *, compress: bool = True,
           to_label: list[str] | None = None,
           trust: tuple[list[dict[str, Any]], list[list[dict[str, Any]]]] = ([], [])) -> tuple[str, int]:
    samples = [read_samples(r) for r in runs]
    overview = build_overview(runs, samples)
    benches = sorted({r.bench for r in runs})
    sampled = list(dict.fromkeys(m for s in samples for values in s.metrics for m in values))
    columns = overview.metrics + [m for m in sampled if m not in overview.metrics]
    directions = {m: overview.directions.get(m) for m in columns}  # a per-sample value only: no known direction
    data = page_data(runs, samples, columns, overview.headline, directions)
    if to_label is not None:
        from ragjudge.report.labelling import labelling_data

        data["label"] = labelling_data(runs[0], samples[0], to_label)
    from ragjudge.report.compare import compare_runs

    comparisons = compare_runs([r.label for r in runs], [s.values() for s in samples], columns,
                               directions, [r.run_info.get("data_hash") for r in runs]) \
        if len(runs) > 1 else []
    judges = []
    for run, s in zip(runs, samples, strict=True):
        report = judge_report(s.judges)
        matrix = report.correlation
        chart = heatmap(f"Spearman ρ between judges ({run.label})", matrix["names"], matrix["names"],
                        matrix["matrix"]) if matrix else ""
        judges.append({"label": run.label, "index": len(judges), "report": report, "heatmap": chart,
                       "flags": {f: sum(1 for x in s.flags if x.get(f)) for f in data["flags"]},
                       "errors": sum(1 for e in s.errors if e)})
    humans = []
    if correlate:
        from ragjudge.report.humans import load_correlate  # imports scipy.stats: only when asked for

        humans = [load_correlate(p) for p in correlate]
    env = _environment()
    page = env.get_template("report.html.j2").render(
        title=" vs ".join(r.label for r in runs), runs=runs, samples=samples, benches=benches,
        n_tasks=len(data["ids"]), overview=overview, comparisons=comparisons, judges=judges, humans=humans,
        spread_at=SPREAD_AT, flags=data["flags"], version=__version__, labelling="label" in data, trust=trust[0],
        labelled_diffs=trust[1],
        generated=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        css=_asset("report.css"), script=_asset("report.js"), data=_encode(data, compress),
        encoding="gzip+base64" if compress else "json")
    return page, len(data["ids"])


def _encode(data: dict[str, Any], compress: bool) -> str:
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    if not compress:
        return text.replace("</", "<\\/")  # never closes the script element early
    return base64.b64encode(gzip.compress(text.encode("utf-8"), compresslevel=4, mtime=0)).decode("ascii")


def _asset(name: str) -> str:
    return resources.files("ragjudge.report").joinpath(ASSETS, name).read_text(encoding="utf-8")


def _environment() -> Any:
    import jinja2

    env = jinja2.Environment(loader=jinja2.PackageLoader("ragjudge.report", ASSETS), autoescape=True,
                             trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)
    env.filters["num"] = _num
    env.filters["signed"] = lambda v, d=3: "–" if v is None else f"{v:+.{d}f}"
    env.filters["pvalue"] = _pvalue
    env.filters["cell"] = _num  # a bench's own table: numbers as the terminal shows them
    env.filters["metric"] = _metric
    env.filters["slug"] = lambda s: "".join(c if c.isalnum() else "-" for c in str(s)).strip("-").lower()
    return env


def _num(value: Any, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _metric(value: float | None, kind: str) -> str:
    """A metric's value as its kind reads: counts whole, times in seconds, the rest with three decimals."""
    if value is None:
        return "–"
    if kind == "count":
        return f"{int(value):,}"
    if kind == "seconds":
        return f"{value:.2f} s"
    return f"{value:.3f}"


def _pvalue(value: float | None) -> str:
    if value is None:
        return "–"
    return "< 0.001" if value < 0.001 else f"{value:.3f}"

"""Judges vs humans: `ragjudge correlate --format json` output (or its `--heatmap` PNG) shown in the report."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from ragjudge.correlation.render import STAT_NAMES, judge_matrix
from ragjudge.engine.render import LaidOutTable
from ragjudge.errors import InputError
from ragjudge.report.charts import heatmap

REQUIRED = ("correlations", "judges", "humans", "stat")
AGREEMENT_COLUMNS = ["metric", "items", "raters", "MTRAG agreement", "exact", "Krippendorff α", "Cohen κ",
                     "κ quadratic"]


def load_correlate(path: str | Path) -> dict[str, Any]:
    """A section for the page: {"source", "title", "heatmap" (SVG), "image" (PNG data URI), "tables"}."""
    path = Path(path)
    if not path.is_file():
        raise InputError("file not found", file=str(path))
    if path.suffix.lower() == ".png":
        data = path.read_bytes()
        if not data.startswith(b"\x89PNG"):
            raise InputError("not a PNG image", file=str(path))
        return {"source": str(path), "title": "Judges vs humans (heatmap from ragjudge correlate --heatmap)",
                "image": "data:image/png;base64," + base64.b64encode(data).decode(), "heatmap": "", "tables": [],
                "judge_heatmap": ""}
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"invalid JSON ({exc}); pass the output of `ragjudge correlate --format json` or its "
                         "--heatmap PNG", file=str(path)) from None
    if missing := [k for k in REQUIRED if not isinstance(report, dict) or k not in report]:
        raise InputError(f"not a `ragjudge correlate --format json` output (no {', '.join(missing)})",
                         file=str(path), field=missing[0])
    return correlate_section(report, str(path))


def correlate_section(report: dict[str, Any], source: str) -> dict[str, Any]:
    stat, judges, humans = report["stat"], list(report["judges"]), list(report["humans"])
    by_pair = {(r["judge"], r["human"]): r for r in report["correlations"]}
    name = STAT_NAMES.get(stat, stat)
    matrix = [[(by_pair.get((j, h)) or {}).get(stat, {}).get("value") for h in humans] for j in judges]
    weighting = "" if report.get("weighting", "none") == "none" else f", weighted ({report['weighting']})"
    title = f"{name} of judges with human ratings{weighting}"
    rows = []
    for j in judges:
        for h in humans:
            r = by_pair.get((j, h))
            if r is None:
                continue
            s = r.get(stat) or {}
            ci = f"[{s['ci_low']:+.2f}, {s['ci_high']:+.2f}]" if s.get("ci_low") is not None and \
                s.get("ci_high") is not None else None
            rows.append([j, h, r.get("n"), s.get("value"), ci, s.get("p"),
                         "best" if (report.get("best") or {}).get(h) == j else ""])
    tables = [LaidOutTable(title, ["judge", "human", "n", name, "CI", "p", ""], rows,
                    [f"{report.get('n_rated_items', '?')} rated items, {report.get('n_tasks', '?')} tasks; models: "
                     f"{', '.join(report.get('models') or [])}"])]
    for key, caption in (("agreement", "Agreement between human annotators"),
                         ("judge_agreement", "Agreement between judge panel members")):
        if report.get(key):
            tables.append(LaidOutTable(caption, AGREEMENT_COLUMNS, [
                [metric, a.get("n_items"), a.get("n_raters"), a.get("mtrag_agreement"), a.get("exact_agreement"),
                 a.get("krippendorff_alpha"), (a.get("cohen_kappa") or {}).get("mean"),
                 (a.get("cohen_kappa") or {}).get("mean_quadratic")] for metric, a in report[key].items()]))
    if report.get("idk_accuracy"):
        rows = []
        for judge, acc in report["idk_accuracy"].items():
            groups = [f"{label} {g['accuracy']:.3f} ({g['scored']})" for label, g in
                      (acc.get("by_answerability") or {}).items() if g.get("scored") and g.get("accuracy") is not None]
            rows.append([judge, acc.get("n"), acc.get("accuracy"), ", ".join(groups)])
        tables.append(LaidOutTable("IDK judges vs answerability labels", ["judge", "n", "accuracy", "by answerability"], rows))
    if report.get("clarification"):  # MTRAG-UN: does the judge say "asks for clarification" on UNDERSPECIFIED?
        tables.append(LaidOutTable("Clarification judges vs the UNDERSPECIFIED class",
                            ["judge", "n", "agreement", "precision", "recall", "tp", "fp", "fn", "tn"],
                            [[judge, c.get("n"), c.get("agreement"), c.get("precision"), c.get("recall"), c.get("tp"),
                              c.get("fp"), c.get("fn"), c.get("tn")] for judge, c in report["clarification"].items()]))
    judge_heatmap = heatmap(f"{name} between judges", judges, judges, judge_matrix(report)) \
        if len(judges) >= 2 and report.get("judge_vs_judge") else ""
    return {"source": source, "title": title, "heatmap": heatmap(title, judges, humans, matrix, report.get("best")),
            "image": "", "tables": tables, "judge_heatmap": judge_heatmap}

"""The correlation report for people (rich tables, a heatmap) and for spreadsheets (CSV)."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from rich.console import Console

from ragjudge.correlation.stats import STATS
from ragjudge.engine.render import LaidOutTable, print_tables

STAT_NAMES = {"spearman": "Spearman ρ", "kendall": "Kendall τ-b", "pearson": "Pearson r"}


def _num(value: float | None, digits: int = 3, signed: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def _cell(stat: dict[str, Any], best: bool = False) -> str:
    """The value (marked * when best), and under it its confidence interval."""
    text = _num(stat["value"], signed=True) + (" *" if best else "")
    if stat["ci_low"] is not None and stat["ci_high"] is not None:
        text += f"\n[{stat['ci_low']:+.2f},{stat['ci_high']:+.2f}]"
    return text


def _by_pair(report: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["judge"], r["human"]): r for r in report["correlations"]}


def report_tables(report: dict[str, Any]) -> list[LaidOutTable]:
    """The report as the engine's tables, so they are laid out like every other ragjudge table: split to the
    console's width with the label columns repeated, confidence intervals never cut."""
    stat = report["stat"]
    rows = _by_pair(report)
    weighting = "" if report["weighting"] == "none" else f", weighted ({report['weighting']})"
    ci = (f", {report['confidence']:.0%} bootstrap CI over tasks (B={report['bootstrap']})"
          if report["bootstrap"] else "")
    tables = []
    if report["judges"]:
        main = LaidOutTable(f"{STAT_NAMES[stat]} of judges with human ratings{weighting}{ci}",
                     ["judge", "n", *report["humans"]], [],
                     [f"{report['n_rated_items']} rated items, {report['n_tasks']} tasks, models: "
                      f"{', '.join(report['models'])}. * best judge per column."])
        for judge in report["judges"]:
            ns = sorted({rows[(judge, h)]["n"] for h in report["humans"]})
            cells = [_cell(rows[(judge, h)][stat], best=report["best"].get(h) == judge) for h in report["humans"]]
            main.rows.append([judge, "–".join(str(n) for n in (ns[0], ns[-1])) if len(ns) > 1 else ns[0], *cells])
        tables.append(main)
    tables.append(_agreement_table(report["agreement"], "Agreement between human annotators"))
    if report["judge_agreement"]:
        tables.append(_agreement_table(report["judge_agreement"], "Agreement between judge panel members"))
    if report["idk_accuracy"]:
        idk = LaidOutTable("IDK judges vs answerability labels", ["judge", "n", "accuracy", "by answerability (accuracy, n)"],
                    [])
        for judge, acc in report["idk_accuracy"].items():
            parts = [f"{label} {_num(g['accuracy'])} ({g['scored']})"
                     for label, g in acc["by_answerability"].items() if g["scored"]]
            idk.rows.append([judge, acc["n"], acc["accuracy"], ", ".join(parts)])
        if asks_by := {acc.get("underspecified_by") for acc in report["idk_accuracy"].values()} - {None}:
            idk.notes.append(f"UNDERSPECIFIED tasks scored as MTRAG-UN's official conditioning does: right when the "
                             f"response asks for clarification ({', '.join(sorted(asks_by))} == 1), whatever the IDK "
                             f"judge says")
        tables.append(idk)
    if report.get("clarification"):
        clar = LaidOutTable("Clarification judges vs the UNDERSPECIFIED class",
                     ["judge", "n", "agreement", "precision", "recall", "asks, by answerability (share, n)"], [],
                     ["asking for clarification (value 1) is right exactly on UNDERSPECIFIED tasks; precision and "
                      "recall are those of asking for UNDERSPECIFIED"])
        for judge, c in report["clarification"].items():
            parts = [f"{label} {_num(g['share'])} ({g['n']})" for label, g in c["by_answerability"].items()]
            clar.rows.append([judge, c["n"], c["agreement"], c["precision"], c["recall"], ", ".join(parts)])
        tables.append(clar)
    if len(report["judges"]) >= 2:  # columns are numbered (#1, #2...) so that the matrix fits the width
        judges = report["judges"]
        tables.append(LaidOutTable(f"{STAT_NAMES[stat]} between judges", ["judge", *(f"#{i}" for i in range(1, len(judges) + 1))],
                                   [[f"#{i} {a}", *row] for i, (a, row) in
                                    enumerate(zip(judges, judge_matrix(report), strict=True), start=1)]))
    return tables


def judge_matrix(report: dict[str, Any]) -> list[list[float | None]]:
    """Judges × judges: the report's statistic between each two (1 on the diagonal, None where not measured)."""
    pair: dict[tuple[str, str], float | None] = {}
    for r in report.get("judge_vs_judge") or []:
        pair[(r["a"], r["b"])] = pair[(r["b"], r["a"])] = (r.get(report["stat"]) or {}).get("value")
    return [[1.0 if a == b else pair.get((a, b)) for b in report["judges"]] for a in report["judges"]]


def print_report(report: dict[str, Any], console: Console) -> None:
    if not report["judges"]:
        console.print("[yellow]no judges to correlate: pass --judges or use a file with algorithm metrics[/yellow]")
    print_tables(report_tables(report), console)


def _agreement_table(agreement: dict[str, Any], title: str) -> LaidOutTable:
    table = LaidOutTable(title, ["metric", "items", "raters", "per item", "MTRAG", "exact", "Krippendorff α", "Cohen κ",
                          "κ quadr."], [],
                  ["MTRAG: all agree, or a majority agrees and the rest are one step away."])
    for name, a in agreement.items():
        per = a["raters_per_item"]
        span = "-" if not per else str(per["min"]) if per["min"] == per["max"] else f"{per['min']}–{per['max']}"
        table.rows.append([name, a["n_items"], a["n_raters"], span, a["mtrag_agreement"], a["exact_agreement"],
                           a["krippendorff_alpha"], a["cohen_kappa"]["mean"], a["cohen_kappa"]["mean_quadratic"]])
    return table


CSV_COLUMNS = ["judge", "human", "n"] + [f"{s}{suffix}" for s in STATS for suffix in ("", "_ci_low", "_ci_high", "_p")]


def to_csv(report: dict[str, Any]) -> str:
    """One row per (judge, human dimension)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for r in report["correlations"]:
        row: list[Any] = [r["judge"], r["human"], r["n"]]
        for s in STATS:
            row += ["" if r[s][k] is None else repr(float(r[s][k])) for k in ("value", "ci_low", "ci_high", "p")]
        writer.writerow(row)
    return out.getvalue()


def heatmap(report: dict[str, Any], path: str | Path) -> None:
    """Judges × human dimensions, coloured by the report's statistic; the best judge per column is boxed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    stat, judges, humans = report["stat"], report["judges"], report["humans"]
    rows = _by_pair(report)
    values = np.array([[rows[(j, h)][stat]["value"] if rows[(j, h)][stat]["value"] is not None else np.nan
                        for h in humans] for j in judges], dtype=float).reshape(len(judges), len(humans))
    fig, ax = plt.subplots(figsize=(1.6 + 1.3 * max(len(humans), 1), 1.0 + 0.45 * max(len(judges), 1)))
    image = ax.imshow(np.ma.masked_invalid(values), cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto")
    ax.set_xticks(range(len(humans)), labels=humans, rotation=30, ha="right")
    ax.set_yticks(range(len(judges)), labels=judges)
    for i, judge in enumerate(judges):
        for j, human in enumerate(humans):
            value = values[i, j]
            best = report["best"].get(human) == judge
            ax.text(j, i, "-" if np.isnan(value) else f"{value:.2f}", ha="center", va="center", fontsize=8,
                    fontweight="bold" if best else "normal",
                    color="white" if abs(np.nan_to_num(value)) > 0.6 else "black")
            if best:
                ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, linewidth=2, edgecolor="black"))
    weighting = "" if report["weighting"] == "none" else f" (weighted: {report['weighting']})"
    ax.set_title(f"{STAT_NAMES[stat]}: judges vs humans{weighting}, n={report['n_rated_items']}", fontsize=9)
    fig.colorbar(image, ax=ax, fraction=0.05)
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=150)
    plt.close(fig)

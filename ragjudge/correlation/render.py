"""The correlation report for people (rich tables, a heatmap) and for spreadsheets (CSV)."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ragjudge.correlation.stats import STATS

STAT_NAMES = {"spearman": "Spearman ρ", "kendall": "Kendall τ-b", "pearson": "Pearson r"}


def _num(value: float | None, digits: int = 3, signed: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def _cell(stat: dict[str, Any]) -> str:
    text = _num(stat["value"], signed=True)
    if stat["ci_low"] is not None and stat["ci_high"] is not None:
        text += f" [{stat['ci_low']:+.2f},{stat['ci_high']:+.2f}]"
    return text


def _by_pair(report: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["judge"], r["human"]): r for r in report["correlations"]}


def print_report(report: dict[str, Any], console: Console) -> None:
    stat = report["stat"]
    rows = _by_pair(report)
    weighting = "" if report["weighting"] == "none" else f", weighted ({report['weighting']})"
    ci = (f", {report['confidence']:.0%} bootstrap CI over tasks (B={report['bootstrap']})"
          if report["bootstrap"] else "")
    table = Table(title=f"{STAT_NAMES[stat]} of judges with human ratings{weighting}{ci}",
                  caption=f"{report['n_rated_items']} rated items, {report['n_tasks']} tasks, "
                          f"models: {escape(', '.join(report['models']))}.  * best judge per column.")
    table.add_column("judge")
    table.add_column("n", justify="right")
    for human in report["humans"]:
        table.add_column(escape(human), justify="right")
    for judge in report["judges"]:
        ns = sorted({rows[(judge, h)]["n"] for h in report["humans"]})
        cells = []
        for human in report["humans"]:
            text = _cell(rows[(judge, human)][stat])
            cells.append(f"[bold]{text} *[/bold]" if report["best"].get(human) == judge else text + "  ")
        table.add_row(escape(judge), "–".join(str(n) for n in (ns[0], ns[-1])) if len(ns) > 1 else str(ns[0]), *cells)
    if report["judges"]:
        console.print(table)
    else:
        console.print("[yellow]no judges to correlate: pass --judges or use a file with algorithm metrics[/yellow]")
    _print_agreement(report["agreement"], "Agreement between human annotators", console)
    if report["judge_agreement"]:
        _print_agreement(report["judge_agreement"], "Agreement between judge panel members", console)
    if report["idk_accuracy"]:
        t = Table(title="IDK judges vs answerability labels")
        for col in ("judge", "n", "accuracy", "by answerability (accuracy, n)"):
            t.add_column(col, justify="left" if col.startswith(("judge", "by")) else "right")
        for judge, acc in report["idk_accuracy"].items():
            parts = [f"{escape(label)} {_num(g['accuracy'])} ({g['scored']})"
                     for label, g in acc["by_answerability"].items() if g["scored"]]
            t.add_row(escape(judge), str(acc["n"]), _num(acc["accuracy"]), ", ".join(parts))
        console.print(t)
    if len(report["judges"]) >= 2 and console.width < 16 + 8 * len(report["judges"]):
        console.print("[dim]judge-vs-judge correlations: too many judges for this terminal; see --format json[/dim]")
    elif len(report["judges"]) >= 2:
        t = Table(title=f"{STAT_NAMES[stat]} between judges")
        t.add_column("")
        for judge in report["judges"]:
            t.add_column(escape(judge), justify="right")
        pair = {}
        for r in report["judge_vs_judge"]:
            pair[(r["a"], r["b"])] = pair[(r["b"], r["a"])] = r[stat]["value"]
        for a in report["judges"]:
            t.add_row(escape(a), *("1" if a == b else _num(pair.get((a, b)), signed=True) for b in report["judges"]))
        console.print(t)


def _print_agreement(agreement: dict[str, Any], title: str, console: Console) -> None:
    t = Table(title=title, caption="MTRAG: all agree, or a majority agrees and the rest are one step away.")
    for col in ("metric", "items", "raters", "per item", "MTRAG", "exact", "Krippendorff α", "Cohen κ", "κ quadr."):
        t.add_column(col, justify="left" if col == "metric" else "right")
    for name, a in agreement.items():
        per = a["raters_per_item"]
        span = "-" if not per else str(per["min"]) if per["min"] == per["max"] else f"{per['min']}–{per['max']}"
        t.add_row(escape(name), str(a["n_items"]), str(a["n_raters"]), span,
                  _num(a["mtrag_agreement"]), _num(a["exact_agreement"]), _num(a["krippendorff_alpha"]),
                  _num(a["cohen_kappa"]["mean"]), _num(a["cohen_kappa"]["mean_quadratic"]))
    console.print(t)


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

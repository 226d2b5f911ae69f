"""`ragjudge correlate RUN --labels FILE`'s output: per metric, agreement with the labels and the mean three ways."""

import json
from pathlib import Path
from typing import Any

import typer

from ragjudge.errors import UsageError

FIGURES = ("balanced_accuracy", "kappa", "tpr", "fpr", "spearman", "kendall", "mae")


def _ci(figure: dict[str, Any] | None) -> str:
    if not figure or figure.get("value") is None:
        return "-"
    low, high = figure.get("ci_low"), figure.get("ci_high")
    return f"{figure['value']:.3f}" + (f" [{low:.3f}, {high:.3f}]" if low is not None else "")


def csv_rows(report: dict[str, Any]) -> list[list[Any]]:
    rows: list[list[Any]] = [["metric", "figure", "value", "ci_low", "ci_high", "n"]]
    for row in report["metrics"]:
        for name in FIGURES:
            figure = (row["agreement"] or {}).get(name)
            if figure:
                rows.append([row["metric"], name, figure["value"], figure["ci_low"], figure["ci_high"],
                             row["n_labelled"]])
        threshold = (row["agreement"] or {}).get("threshold")
        if threshold is not None:
            rows.append([row["metric"], "threshold (cross-validated)", threshold, None, None, row["n_labelled"]])
        for method, interval in row["means"].items():
            if interval:
                rows.append([row["metric"], f"mean ({method})", interval["estimate"], interval["low"],
                             interval["high"], interval["n_labels"] or interval["n_samples"]])
    return rows


def print_labels_report(run: Path, labels: Path, *, metrics: list[str] | None, bootstrap: int, seed: int,
                        confidence: float, fmt: str, csv_out: Path | None) -> None:
    import csv
    import io

    from rich.console import Console
    from rich.table import Table

    from ragjudge.api.trust import agreement_with_labels
    from ragjudge.formats.files import atomic_output, output_file

    if fmt not in ("table", "json", "csv"):
        raise UsageError(f"--format must be table, json or csv, got {fmt!r}")
    if csv_out is not None:
        output_file(csv_out, "CSV file (--csv)")
    report = agreement_with_labels(run, labels, metrics=metrics, resamples=bootstrap, seed=seed,
                                   confidence=confidence)
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(csv_rows(report))
    if fmt == "json":
        print(json.dumps(report, indent=2, allow_nan=False))
    elif fmt == "csv":
        print(buffer.getvalue(), end="")
    else:
        console = Console()
        for row in report["metrics"]:
            table = Table(title=f"{row['metric']}: {row['n_labelled']} labelled of {row['n_samples']} samples "
                                f"({confidence:.0%} intervals)")
            table.add_column("figure")
            table.add_column(f"value [{confidence:.0%} interval]")
            agreement = row["agreement"] or {}
            for name in FIGURES:
                if name in agreement:
                    table.add_row(name.replace("_", " "), _ci(agreement[name]))
            if agreement.get("confusion"):
                c = agreement["confusion"]
                table.add_row("confusion", f"tp {c['tp']} fp {c['fp']} fn {c['fn']} tn {c['tn']}")
            if agreement.get("threshold") is not None:
                table.add_row("threshold (cross-validated)", f"{agreement['threshold']:.3f}")
            for method, interval in row["means"].items():
                if interval:
                    table.add_row(f"mean ({method})", f"{interval['estimate']:.3f} [{interval['low']:.3f}, "
                                                      f"{interval['high']:.3f}]")
            console.print(table)
            if row["disagreements"]:
                console.print(f"disagreements ({len(row['disagreements'])}): " + ", ".join(
                    d["sample_id"] for d in row["disagreements"][:10]) + (" ..." if len(row["disagreements"]) > 10
                                                                          else ""))
    if csv_out:
        with atomic_output(csv_out) as tmp:
            tmp.write_text(buffer.getvalue(), encoding="utf-8")
        typer.echo(f"agreement: {csv_out}", err=True)

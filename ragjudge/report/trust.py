"""The report with a person's labels (`--human-labels`, one file per run): each run's judges against its labels (as
`correlate RUN --labels`), and with several runs the PPI++ paired difference beside the Compare tab's judge-only one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragjudge.errors import UsageError
from ragjudge.report.load import LoadedRun
from ragjudge.trust.labels import by_metric, read_labels
from ragjudge.trust.runs import agreement_with_labels, paired_difference


def with_labels(runs: list[LoadedRun], files: list[str | Path]) -> tuple[list[dict[str, Any]], list[list[dict]]]:
    """(per run: its agreement report, per comparison with the first run: [{metric, ppi++, judge only}])."""
    if len(files) != len(runs):
        raise UsageError(f"--human-labels was given {len(files)} time(s) for {len(runs)} run(s): give one per run, "
                         "in the same order")
    labels = [read_labels(f) for f in files]
    sections = []
    for run, file, given in zip(runs, files, labels, strict=True):
        report = agreement_with_labels(run.samples, given, report="")
        sections.append({**report, "labels": Path(file).name, "label": run.label})
    paired: list[list[dict[str, Any]]] = []
    for k in range(1, len(runs)):
        shared = sorted(set(by_metric(labels[0])) & set(by_metric(labels[k])))
        rows = []
        for metric in shared:
            found = paired_difference(runs[0].samples, runs[k].samples, metric, labels_a=labels[0],
                                      labels_b=labels[k])
            if found["ppi++"] is not None:
                rows.append({"metric": metric, "ppi": found["ppi++"], "judge": found["judge only"]})
        paired.append(rows)
    return sections, paired

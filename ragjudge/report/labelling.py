"""The report's labelling mode: which samples it shows first (those `ragjudge label-sample` drew) and which
metrics a person can label (those the run scored per sample). The page keeps the labels in the browser's storage
and downloads them as a `ragjudge.labels/1` file (report.js); nothing here is sent anywhere."""

from __future__ import annotations

from typing import Any

from ragjudge.errors import InputError
from ragjudge.report.load import LoadedRun
from ragjudge.report.pack import RunSamples

LABELS_SCHEMA = "ragjudge.labels/1"  # ragjudge.trust.labels.SCHEMA_ID, the format the page writes


def labelling_data(run: LoadedRun, samples: RunSamples, to_label: list[str]) -> dict[str, Any]:
    """{"ids": drawn ids, in the order drawn, "metrics": labellable metrics, "key": the browser storage key}."""
    known = set(samples.ids)
    if missing := [i for i in to_label if i not in known]:
        raise InputError(f"the samples to label include {missing[0]!r}, which is not in this run"
                         + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else "")
                         + ": draw them from this run with `ragjudge label-sample`", file=str(run.path))
    metrics = list(dict.fromkeys(m for values in samples.metrics for m in values))
    return {"ids": list(to_label), "metrics": metrics, "schema": LABELS_SCHEMA,
            "key": f"ragjudge-labels:{run.path.resolve()}"}

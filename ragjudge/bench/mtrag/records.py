"""MTRAG's official evaluation records (results.jsonl, `ragjudge judge --out`): what the benchmark's own scripts read,
written from the same task outcomes as the sample log (fields: docs/benches/mtrag.md, Outputs).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragjudge.bench.mtrag.metrics import TaskOutcome
from ragjudge.formats.mtrag import result_record


def official_record(outcome: TaskOutcome, setting: str | None) -> dict[str, Any]:
    """`setting`: the generator's, or None when the answers were read from a predictions file."""
    o = outcome
    metrics = {k: [v] for k, v in o.metrics.items()}
    details: dict[str, Any] = {"judges": {k: r.record() for k, r in o.results.items()}}
    if o.prediction.contexts is not None and setting == "rag":
        details["reference_contexts"] = [p.to_record() for p in o.task.contexts]
    if o.errors:
        details["errors"] = o.errors
    return result_record(o.task, o.prediction, metrics, details)


def official_records(outcomes: Sequence[TaskOutcome], setting: str | None) -> list[dict[str, Any]]:
    return [official_record(o, setting) for o in outcomes]

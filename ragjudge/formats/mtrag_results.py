"""Official MTRAG results files (written by MTRAG's own scripts, with no sample log beside it) read as samples, once,
at the bottom: `correlate` and `export` then read one type, the `Sample`, whichever run they are given."""

from __future__ import annotations

import math
from typing import Any

from ragjudge.errors import InputError
from ragjudge.formats.inspectorraget import as_number
from ragjudge.formats.jsonl import json_type
from ragjudge.formats.mtrag import RECORD_FIELDS
from ragjudge.formats.samples import Sample, Score, contexts_of, messages


def sample_from_result(record: dict[str, Any], *, file: str, line: int) -> Sample:
    """An official MTRAG results line (no sample log beside it: MTRAG's own scripts wrote it) as the sample the MTRAG
    bench would have logged, so every reader of runs reads one type: the task's own fields in `metadata["record"]`,
    the conversation, the passages, the answer, each numeric metric a score (with the judge's verdict and panel that
    `ragjudge.judges` kept), the generation setting and reference passages."""
    task_id = record.get("task_id")
    if isinstance(task_id, bool) or not isinstance(task_id, (str, int)) or not str(task_id).strip():
        raise InputError("is missing or not a string", file=file, line=line, field="task_id")
    details, judges = _details(record, file=file, line=line)
    by_metric = {str(d["metric"]): {"judge": str(judge), **d} for judge, d in judges.items() if d.get("metric")}
    scores = {}
    for name, raw in (record.get("metrics") if isinstance(record.get("metrics"), dict) else {}).items():
        value = as_number(raw[0] if isinstance(raw, list) and raw else (None if isinstance(raw, list) else raw))
        if value is not None and math.isfinite(value):
            scores[name] = Score.of({**by_metric.get(name, {}), "value": value})
    predictions = record.get("predictions")
    first = predictions[0] if isinstance(predictions, list) and predictions else None
    turns = record.get("input") if isinstance(record.get("input"), list) else []
    setting = details.get("setting")
    return Sample(id=str(task_id), input=messages(t for t in turns if isinstance(t, dict)),
                  contexts=contexts_of([c for c in record.get("contexts") or [] if isinstance(c, dict)]),
                  target_contexts=contexts_of([c for c in details.get("reference_contexts") or []
                                               if isinstance(c, dict)]),
                  output=first.get("text") if isinstance(first, dict) and isinstance(first.get("text"), str)
                  else None, scores=scores,
                  metadata={k: v for k, v in {"record": {k: v for k, v in record.items() if k not in RECORD_FIELDS},
                                              "setting": setting if isinstance(setting, str) else None}.items() if v})


def _details(record: dict[str, Any], *, file: str, line: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """(`ragjudge`, `ragjudge.judges`) of a results line, checked for shape: a malformed part is an InputError
    naming the field."""
    details = record.get("ragjudge")
    if details is None:
        return {}, {}
    if not isinstance(details, dict):
        raise InputError(f"must be an object, got {json_type(details)}", file=file, line=line, field="ragjudge")
    judges = details.get("judges") or {}
    if not isinstance(judges, dict):
        raise InputError(f"must be an object, got {json_type(judges)}", file=file, line=line, field="ragjudge.judges")
    for name, detail in judges.items():
        field = f"ragjudge.judges.{name}"
        if not isinstance(detail, dict):
            raise InputError(f"must be an object, got {json_type(detail)}", file=file, line=line, field=field)
        members = detail.get("members")
        if members is not None and not (isinstance(members, list) and all(isinstance(m, dict) for m in members)):
            raise InputError("must be a list of objects", file=file, line=line, field=f"{field}.members")
    return details, judges

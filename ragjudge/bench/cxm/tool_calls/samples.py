"""A tool-calling prediction as the sample log's record: gold calls as `target`, the model's as `output` (one a
line), figures under the summary's names (prefixed `auto ` or `forced ` when the run holds both modes)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ragjudge.bench.cxm.models import ToolCase
from ragjudge.bench.cxm.samples import CALL_FACTS, conversation, error_of, facts
from ragjudge.bench.cxm.tool_calls.scorers import tool_outcome
from ragjudge.engine.bench import Record
from ragjudge.formats.samples import Sample, Score


def _call(name: Any, arguments: Any) -> str:
    return str(name) if arguments is None else f"{name} {json.dumps(arguments, ensure_ascii=False, sort_keys=True)}"


def figures(case: ToolCase, row: Record, modes: Sequence[str]) -> dict[str, float]:
    """The prediction's own figures; `modes`: the modes the run holds (one: no prefix)."""
    o = tool_outcome(case, row, None, 0)
    prefix = "" if len(modes) <= 1 else f"{row.get('mode') or 'auto'} "
    values: dict[str, Any] = {f"{prefix}tool-selection accuracy": o["selected"],
                              f"{prefix}tool-selection accuracy @{row.get('n_tools')} tools": o["selected"],
                              f"{prefix}argument match": o["args"],
                              f"{prefix}argument values right": o["hit"] / o["total"] if o["total"] else None,
                              f"{prefix}no tool called": o["no_call"]}
    return {name: float(v) for name, v in values.items() if v is not None}


def tool_sample(sample_id: str, case: ToolCase | None, row: Record, modes: Sequence[str]) -> Sample:
    case_id = str(row.get("case_id", case.case_id if case else sample_id))
    scored = case is not None and not row.get("error")
    calls = [_call(c.get("name"), c.get("arguments")) for c in row.get("tool_calls") or [] if isinstance(c, dict)]
    return Sample(id=sample_id, input=conversation(case.messages) if case is not None else case_id,
                  target=[_call(c.name, c.arguments) for c in case.expected] if case is not None else None,
                  output=None if row.get("error") else "\n".join(calls) or "(no tool called)",
                  scores={name: Score(value=v) for name, v in figures(case, row, modes).items()} if scored else {},
                  error=error_of(row),
                  metadata=facts(row, ("n_tools", "mode", "offered", "text", *CALL_FACTS), case_id=case_id))

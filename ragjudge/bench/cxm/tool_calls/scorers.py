"""How one tool-calling prediction is scored (`tool_outcome`): the set of called tool names against the gold set
(CXMArena's evaluator), gold calls with their arguments, argument values right, and whether any tool was called."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragjudge.bench.cxm import metrics as M
from ragjudge.bench.cxm.models import ToolCase, parse_arguments
from ragjudge.bench.cxm.rows import bad

MODES = ("auto", "forced")
"""How the tools were offered: the model chose whether to call one (auto), or had to (forced: tool_choice=required)."""


def _pred_calls(row: dict[str, Any], path: Path | None, line: int) -> list[tuple[str, dict[str, Any] | None]]:
    calls = []
    for call in row.get("tool_calls") or []:
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            raise bad(path, line, "tool_calls", "each tool call needs a name")
        calls.append((call["name"], parse_arguments(call.get("arguments"))))
    return calls


def tool_outcome(case: ToolCase, row: dict[str, Any], path: Path | None, line: int) -> dict[str, Any]:
    """`selected` (the right set of tools), `args` (every gold call with its arguments; None when the gold names
    tools only), `hit` of `total` gold argument values, `no_call`."""
    pred = _pred_calls(row, path, line)
    gold = [(c.name, c.arguments) for c in case.expected]
    hit, total = M.argument_value_accuracy(gold, pred)
    return {"selected": M.tool_selection_correct([g for g, _ in gold], [p for p, _ in pred]),
            "args": M.arguments_match(gold, pred), "hit": hit, "total": total, "no_call": not pred}

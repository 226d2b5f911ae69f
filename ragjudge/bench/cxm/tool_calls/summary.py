"""Tool-calling scores: tool selection (sorted set of names), arguments, accuracy vs offered tools."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragjudge.bench.cxm import metrics as M
from ragjudge.bench.cxm.models import ToolCase
from ragjudge.bench.cxm.rows import Rows, bad, known_id
from ragjudge.bench.cxm.summary import TaskReport, table
from ragjudge.bench.cxm.tool_calls.scorers import MODES, tool_outcome

def score_tools(cases: Sequence[ToolCase], rows: Rows, path: Path | None = None) -> TaskReport:
    by_id = {c.case_id: c for c in cases}
    seen: set[tuple[str, int, str]] = set()
    results: list[dict[str, Any]] = []
    errors = 0
    for line, row in rows:
        case_id = known_id(row, "case_id", set(by_id), path, line, "case")
        size = row.get("n_tools")
        if isinstance(size, str) and size.strip().isdigit():
            size = int(size)
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise bad(path, line, "n_tools", f"n_tools must be the number of offered tools, a whole number >= 1, "
                                             f"got {size!r}"[:160])
        mode = row.get("mode") or "auto"
        if mode not in MODES:
            raise bad(path, line, "mode", f"mode must be {' or '.join(MODES)}, got {mode!r}"[:160])
        if row.get("tool_calls") is not None and not isinstance(row["tool_calls"], list):
            raise bad(path, line, "tool_calls", 'tool_calls must be a list of {"name", "arguments"}')
        if (case_id, size, mode) in seen:
            raise bad(path, line, "case_id", f"second prediction for case {case_id!r} with {size} tools ({mode})")
        seen.add((case_id, size, mode))
        if row.get("error"):
            errors += 1
            continue
        results.append({"case": case_id, "size": size, "mode": mode, **tool_outcome(by_id[case_id], row, path, line)})
    missing = [c.case_id for c in cases if not any(r["case"] == c.case_id for r in results)
               and not any(k[0] == c.case_id for k in seen)]
    modes = sorted({r["mode"] for r in results})
    metrics: dict[str, Any] = {"cases": len(cases), "predictions": len(results)}
    table_rows = []
    ns: dict[str, int] = {}
    for mode in modes:
        mine = [r for r in results if r["mode"] == mode]
        prefix = "" if len(modes) == 1 else f"{mode} "
        with_args = [r["args"] for r in mine if r["args"] is not None]
        metrics[f"{prefix}tool-selection accuracy"] = M.ratio(sum(r["selected"] for r in mine), len(mine))
        metrics[f"{prefix}argument match"] = M.ratio(sum(with_args), len(with_args)) if with_args else None
        metrics[f"{prefix}argument values right"] = M.ratio(sum(r["hit"] for r in mine), sum(r["total"] for r in mine))
        metrics[f"{prefix}no tool called"] = M.ratio(sum(r["no_call"] for r in mine), len(mine))
        ns.update({f"{prefix}tool-selection accuracy": len(mine), f"{prefix}argument match": len(with_args),
                   f"{prefix}argument values right": sum(r["total"] for r in mine),
                   f"{prefix}no tool called": len(mine)})
        curve = M.accuracy_by_size((r["size"], r["selected"]) for r in mine)
        for size, stats in curve.items():
            metrics[f"{prefix}tool-selection accuracy @{size} tools"] = stats["accuracy"]
            at = [r for r in mine if r["size"] == size]
            ns[f"{prefix}tool-selection accuracy @{size} tools"] = len(at)
            args_at = [r["args"] for r in at if r["args"] is not None]
            table_rows.append([mode, size, stats["n"], stats["accuracy"],
                               M.ratio(sum(args_at), len(args_at)) if args_at else None,
                               M.ratio(sum(r["no_call"] for r in at), len(at))])
    metrics.update({"errors": errors, "missing": len(missing)})
    notes = [f"no prediction for {len(missing)} case(s), e.g. {missing[0]}"] if missing else []
    if not any(c.arguments is not None for case in cases for c in case.expected):
        notes.append("the gold names tools only (no arguments): argument match is not measured")
    lead = "tool-selection accuracy" if len(modes) <= 1 else f"{modes[0]} tool-selection accuracy"
    return TaskReport(task="tool calls", metrics=metrics,
                      tables=[table("Accuracy vs number of offered tools",
                                    ["mode", "tools", "n", "selection acc", "argument match", "no call"], table_rows)],
                      notes=notes, problems=errors + len(missing), ns=ns, errors={name: errors for name in ns},
                      headline=[(lead, "predictions")])

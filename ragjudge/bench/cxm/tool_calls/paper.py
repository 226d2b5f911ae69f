"""The paper's Table 9: how to run it as the paper did (`SETUP`, shown by `ragjudge benches show`) and its figures
beside a run measured under the same conditions (`beside`; the rule: `cxm.references`)."""

from __future__ import annotations

from typing import Any

from ragjudge.bench.cxm import paper as T
from ragjudge.bench.cxm.references import (FILE, NO_LIMIT, Shown, none_shown, not_reported, paper_row, reference,
                                           shown_not)

SETUP = (
    "The paper's Table 9 (tool-selection accuracy with 16 to 128 offered tools, the tool choice left to the model): "
    "`ragjudge eval --bench cxm-tool-calls --data FOLDER --gen openai/gpt-4o` (or gpt-4o-mini, "
    "gemini/gemini-2.0-flash, gemini/gemini-1.5-pro) on the release, whose tool_candidatesN are the tools offered; "
    f"not -T force_tool_call. {NO_LIMIT}")


def beside(gen: str | None, forced: bool, offered_by_data: dict[int, bool], from_file: bool, partial: bool,
           metrics: dict[str, Any], metric: str) -> Shown:
    """Table 9: tool-selection accuracy by number of offered tools, the model choosing whether to call one.
    `offered_by_data`: for each number of tools run, whether every case's offer is the release's own candidates;
    `metric`: our figure's name with `{n}` for the number of tools."""
    if from_file:
        return none_shown(FILE)
    row = paper_row(gen, T.TABLE9_TOOLS)
    why = [] if row else [not_reported(9, T.TABLE9_TOOLS, "model", gen)]
    if forced:
        why.append("the paper leaves the tool choice to the model; this run forces a call (-T force_tool_call)")
    sizes = [n for n, given in sorted(offered_by_data.items()) if given and n in T.TABLE9_TOOLS.get(row or "", {})]
    if not why and not sizes:
        why.append("Table 9 offers 16, 32, 64, 96 or 128 of the release's own candidate tools (tool_candidatesN); "
                   "this run offers " + ", ".join(f"{n} ({'the data' if given else 'a seeded draw'})"
                                                  for n, given in sorted(offered_by_data.items())))
    if stop := shown_not(why, partial):
        return stop
    assert row is not None
    rows = [[f"tool-selection accuracy @{n} tools", T.TABLE9_TOOLS[row][n], metrics.get(metric.format(n=n))]
            for n in sizes]
    return Shown([reference(9, f"tool selection, {row}", rows,
                            f"this run: {row} offered the release's own candidate tools, the tool choice left to it; "
                            f"ours: the sorted set of called tool names equals the gold set, as CXMArena's "
                            f"evaluator; still different: ragjudge's system prompt (judges/cxm_tool_call.yaml)")])

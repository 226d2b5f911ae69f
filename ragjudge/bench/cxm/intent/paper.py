"""The paper's Table 4: how to run it as the paper did (`SETUP`, shown by `ragjudge benches show`) and its figures
beside a run measured under the same conditions (`beside`; the rule: `cxm.references`)."""

from __future__ import annotations

from typing import Any

from ragjudge.bench.cxm import paper as T
from ragjudge.bench.cxm.references import (FILE, NO_LIMIT, Shown, none_shown, not_reported, paper_row, reference,
                                           shown_not)

SETUP = (
    "The paper's Table 4 (accuracy on each of the release's taxonomies taxonomy_1, _2, _3 = the paper's A, B, C): "
    "`ragjudge eval --bench cxm-intent --data FOLDER --gen openai/gpt-4.1` (or gpt-4.1-mini, gpt-4.1-nano, "
    "gemini/gemini-2.0-flash, Qwen2.5-14B-Instruct, Qwen2.5-7B-Instruct); the paper's figure is set beside our "
    f"accuracy under the paper protocol (both protocols are always computed). {NO_LIMIT}")


def beside(gen: str | None, from_file: bool, partial: bool, accuracy: dict[str, Any]) -> Shown:
    """Table 4: accuracy per taxonomy (`accuracy`: taxonomy → our accuracy under the paper protocol)."""
    if from_file:
        return none_shown(FILE)
    row = paper_row(gen, T.TABLE4_INTENT)
    why = [] if row else [not_reported(4, T.TABLE4_INTENT, "model", gen)]
    taxonomies = [t for t in accuracy if t in T.TAXONOMIES]
    if not taxonomies:
        why.append(f"the paper's taxonomies are the release's {', '.join(T.TAXONOMIES)}; this run's: "
                   f"{', '.join(accuracy)}")
    if stop := shown_not(why, partial):
        return stop
    assert row is not None
    columns = list(T.TAXONOMIES)
    rows = [[f"accuracy, {T.TAXONOMIES[t]} ({t})", T.TABLE4_INTENT[row][columns.index(t)], accuracy[t]]
            for t in taxonomies]
    return Shown([reference(4, f"intent prediction, {row}", rows,
                            f"this run: {row} on the release's Intent_Prediction, accuracy under the paper "
                            f"protocol (answers fuzzy-mapped to the taxonomy as CXMArena's predictor does, thefuzz "
                            f"WRatio >= 70, then exact match); still different: ragjudge's prompt "
                            f"(judges/cxm_intent_prediction.yaml), not CXMArena's")])

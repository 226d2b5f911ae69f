"""The paper's Table 5: how to run it as the paper did (`SETUP`, shown by `ragjudge benches show`) and its figures
beside a run measured under the same conditions (`beside`; the rule: `cxm.references`)."""

from __future__ import annotations

from typing import Any

from ragjudge.bench.cxm import paper as T
from ragjudge.bench.cxm.references import (FILE, NO_LIMIT, Shown, none_shown, not_reported, paper_row, reference,
                                           shown_not, side_by_side)

SETUP = (
    "The paper's Table 5 (case- and question-level accuracy): `ragjudge eval --bench cxm-quality --data FOLDER --gen "
    "openai/gpt-4.1` (or the table's other models, as for cxm-intent); the question level is set beside ours under "
    f"the paper protocol (an unanswered question skipped). {NO_LIMIT}")


def beside(gen: str | None, from_file: bool, partial: bool, metrics: dict[str, Any], paper_accuracy: str,
           case_accuracy: str) -> Shown:
    """Table 5: case-level and question-level accuracy."""
    if from_file:
        return none_shown(FILE)
    row = paper_row(gen, T.TABLE5_QUALITY)
    why = [] if row else [not_reported(5, T.TABLE5_QUALITY, "model", gen)]
    if stop := shown_not(why, partial):
        return stop
    assert row is not None
    rows = side_by_side(["case-level accuracy", "question-level accuracy"], T.TABLE5_QUALITY[row], metrics,
                        [case_accuracy, paper_accuracy])
    return Shown([reference(5, f"agent quality adherence, {row}", rows,
                            f"this run: {row} on the release's Agent_Quality_Adherence; ours: {case_accuracy} and "
                            f"{paper_accuracy} (CXMArena's evaluator: an unanswered question skipped); still "
                            f"different: ragjudge's prompt (judges/cxm_quality_adherence.yaml), not CXMArena's")])

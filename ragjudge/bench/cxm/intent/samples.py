"""An intent prediction as the sample log's record: gold intent as `target`, predicted label as `output`, its
figures under the summary's names (the LLM-verified one with the judge's verdict), the taxonomy as its label."""

from __future__ import annotations

from typing import Any

from ragjudge.bench.cxm import metrics as M
from ragjudge.bench.cxm.intent.scorers import outcome
from ragjudge.bench.cxm.intent.summary import EXACT, PAPER_ACCURACY, VERIFIED
from ragjudge.bench.cxm.models import IntentCase, Taxonomy
from ragjudge.bench.cxm.samples import conversation, error_of, facts
from ragjudge.engine.bench import Record
from ragjudge.formats.samples import Sample, Score

LEVEL1 = "level-1 accuracy"


def verdict(record: Record | None) -> Score | None:
    """The LLM-verified match (`verified_match`, by rule or by the judge model `verified_by`) as a Score."""
    if not record or (record.get("verified_match") is None and not record.get("verify_error")):
        return None
    by = record.get("verified_by")
    judged = by is not None and by != "rule"
    value = record.get("verified_match")
    return Score(value=None if value is None else float(value), error=record.get("verify_error"),
                 model=by if judged else None, raw=record.get("verify_raw"),
                 details={"by": "rule"} if by == "rule" else {})


def intent_sample(sample_id: str, case: IntentCase | None, taxonomy: Taxonomy | None, row: Record,
                  verified: Record | None = None) -> Sample:
    """`verified`: the judge's verdict when a run's scorer gave it (a predictions file holds it in the row)."""
    gold = case.gold.get(taxonomy.name) if case is not None and taxonomy is not None else None
    scores: dict[str, Score] = {}
    if gold is not None and taxonomy is not None and not row.get("error"):
        o = outcome(gold, taxonomy, row)
        scores = {EXACT: Score(value=float(o.exact), label=o.pred),
                  PAPER_ACCURACY: Score(value=float(o.paper), label=o.paper_pred)}
        if (judged := verdict(verified if verified is not None else row)) is not None:
            scores[VERIFIED] = judged
        if taxonomy.two_level:
            scores[LEVEL1] = Score(value=float(M.level1(o.pred) == M.level1(gold)))
    case_id = str(row.get("case_id", case.case_id if case else sample_id))
    extra: dict[str, Any] = {"case_id": case_id}
    return Sample(id=sample_id, input=conversation(case.messages) if case is not None else case_id, target=gold,
                  output=row.get("intent"), scores=scores,
                  labels={"taxonomy": taxonomy.name} if taxonomy is not None else {}, error=error_of(row),
                  metadata=facts(row, ("raw_intent", "mapping", "in_taxonomy", "model", "prompt_tokens",
                                       "completion_tokens", "cached", "raw", "parse_error"), **extra))

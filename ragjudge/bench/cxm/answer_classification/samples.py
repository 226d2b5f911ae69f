"""A reply as the sample log's record; its figures under the summary's names: 1 for its class's share (carrying the
judge's verdict), 0 for the others, the judge's agreement with a gold label, the recall of the gold articles."""

from __future__ import annotations

from typing import Any

from ragjudge.bench.cxm.answer_classification.data import ranking_of
from ragjudge.bench.cxm.answer_classification.scorers import gold_recall
from ragjudge.bench.cxm.models import ANSWER_LABELS, RagCase, normalize_class
from ragjudge.bench.cxm.samples import articles, conversation, error_of, facts
from ragjudge.engine.bench import Record
from ragjudge.formats.samples import Sample, Score

AGREEMENT = "judge agreement with gold labels"
RECALL = "retrieval recall of gold articles"


def figures(case: RagCase, reply: Record, verdict: Record) -> dict[str, Score]:
    """`verdict`: the judge's (`label`, `judge_model`, `judge_raw`, or `error`); a run's classify score, or the
    predictions file's row itself."""
    scores: dict[str, Score] = {}
    if verdict.get("error") and not reply.get("error"):
        scores = {f"{name} share": Score(error=str(verdict["error"]), model=verdict.get("judge_model"),
                                         raw=verdict.get("judge_raw")) for name in ANSWER_LABELS}
    elif (label := normalize_class(verdict.get("label"))) is not None and not verdict.get("error"):
        said: dict[str, Any] = {"label": label, "model": verdict.get("judge_model"), "raw": verdict.get("judge_raw")}
        scores = {f"{name} share": Score(value=1.0, **said) if name == label else Score(value=0.0)
                  for name in ANSWER_LABELS}
        if case.label:
            scores[AGREEMENT] = Score(value=float(normalize_class(case.label) == label), label=case.label)
    ranking = ranking_of(reply)
    if case.kb_ids and ranking is not None:
        scores[RECALL] = Score(value=gold_recall(case.kb_ids, [str(i) for i in ranking]))
    return scores


def reply_sample(sample_id: str, case: RagCase | None, reply: Record, verdict: Record) -> Sample:
    ranking = [str(i) for i in ranking_of(reply) or []]
    case_id = case.case_id if case is not None else str(reply.get("case_id", sample_id))
    return Sample(id=sample_id, input=conversation(case.messages) if case is not None else case_id,
                  target=case.reference if case is not None else None,
                  target_contexts=articles(case.kb_ids, [1.0] * len(case.kb_ids)) if case is not None else [],
                  output=reply.get("response"), contexts=articles(ranking),
                  scores=figures(case, reply, verdict) if case is not None else {}, error=error_of(reply),
                  metadata=facts(reply, ("query", "query_strategy", "query_raw", "model", "prompt_tokens",
                                         "completion_tokens", "cached"), case_id=case_id))

"""A conversation's questionnaire as the sample log's record: gold answers as `target` and predicted ones with their
cited message ids as `output` (one line a question), the case's own figures under the summary's names."""

from __future__ import annotations

from typing import Any

from ragjudge.bench.cxm import metrics as M
from ragjudge.bench.cxm.models import QualityCase
from ragjudge.bench.cxm.quality.scorers import Answers, paper_outcomes, question_outcomes, read_answers
from ragjudge.bench.cxm.quality.summary import figures as figures_of
from ragjudge.bench.cxm.samples import CALL_FACTS, conversation, error_of, facts
from ragjudge.engine.bench import Record
from ragjudge.formats.samples import Sample, Score


def _said(value: Any) -> str:
    return {True: "True", False: "False", None: "NA"}.get(value, "unanswered") if not isinstance(value, str) \
        else "unanswered"


def figures(case: QualityCase, answers: Answers, unreadable: set[str]) -> dict[str, float]:
    """The case's own figures, by the summary's names (those with nothing to average over left out)."""
    values = figures_of(question_outcomes(case, answers), paper_outcomes(case, answers, unreadable))
    return {name: float(v) for name, v in values.items() if v is not None}


def quality_sample(sample_id: str, case: QualityCase | None, row: Record) -> Sample:
    if case is None:  # (a row the summary refused never gets here)
        return Sample(id=sample_id, input=str(row.get("case_id", sample_id)), error=error_of(row))
    answers, unreadable = ({}, set()) if row.get("error") else read_answers(case, row, None, 0)
    scores = {} if row.get("error") else {name: Score(value=v) for name, v in figures(case, answers, unreadable).items()}
    lines = []
    for q in case.questions:
        answer, evidence = answers.get(q.question_id, (M.UNPARSABLE, ()))
        said = "unreadable" if q.question_id in unreadable else _said(answer)
        lines.append(f"{q.text} {said}" + (f" (messages {', '.join(evidence)})" if evidence else ""))
    return Sample(id=sample_id, input=conversation(case.messages),
                  target=[f"{q.text} {_said(q.answer)}" + (f" (messages {', '.join(q.evidence)})" if q.evidence
                                                            else "") for q in case.questions],
                  output=None if row.get("error") else "\n".join(lines), scores=scores, error=error_of(row),
                  metadata=facts(row, (*CALL_FACTS, "unreadable"), case_id=case.case_id))

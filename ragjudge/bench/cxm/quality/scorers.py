"""How one conversation's questionnaire is scored: each question's outcome (unanswered is wrong,
`question_outcomes`) and CXMArena's own reading (unanswered skipped, `paper_outcomes`). No judge."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragjudge.bench.cxm import metrics as M
from ragjudge.bench.cxm.data import normalize_message_id
from ragjudge.bench.cxm.models import QualityCase
from ragjudge.bench.cxm.quality.data import parse_answer
from ragjudge.bench.cxm.rows import bad, ids

Answers = dict[str, tuple[bool | None, tuple[str, ...]]]
"""Question id → (the answer True/False/None for NA, the message ids cited)."""


def read_answers(case: QualityCase, row: dict[str, Any], path: Path | None, line: int) -> tuple[Answers, set[str]]:
    """A row's answers (validated: one-line errors naming the row's file, line and field) and the ids of the
    questions it answered with something unreadable (`unreadable`, as the solver writes it)."""
    answers: Answers = {}
    items = row.get("answers") or []
    if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
        raise bad(path, line, "answers", 'answers must be a list of {"question_id", "answer", "evidence"}')
    questions = {q.question_id for q in case.questions}
    for i, item in enumerate(items):
        where = f"answers[{i}]"
        qid = str(item.get("question_id"))
        if qid not in questions:
            raise bad(path, line, f"{where}.question_id", f"case {case.case_id!r} has no question {qid!r}")
        try:
            answer = parse_answer(item.get("answer"))
        except ValueError as exc:
            raise bad(path, line, f"{where}.answer", str(exc)) from None
        key = "evidence" if item.get("evidence") is not None else "message_ids"
        evidence = tuple(normalize_message_id(x) for x in ids(item, key, path, line, f"{where}.{key}"))
        answers[qid] = (answer, evidence)
    unreadable = {str(x) for x in row.get("unreadable") or [] if isinstance(x, (str, int))}
    return answers, unreadable


def question_outcomes(case: QualityCase, answers: Answers) -> list[M.QuestionOutcome]:
    """Every question of the case, answered or not (an unanswered one is `M.UNPARSABLE`: wrong)."""
    return [M.QuestionOutcome(case.case_id, q.answer, (given := answers.get(q.question_id, (M.UNPARSABLE, ())))[0],
                              None if q.evidence is None else tuple(q.evidence), given[1]) for q in case.questions]


def paper_outcomes(case: QualityCase, answers: Answers, unreadable: set[str]) -> list[bool]:
    """CXMArena's evaluator: a question the model left out is skipped (it compares the answer list only as far
    as it goes), except that a response with no readable answer at all counts every question wrong."""
    if not answers and not unreadable:
        return [False] * len(case.questions)
    return [q.question_id not in unreadable and answers[q.question_id][0] == q.answer for q in case.questions
            if q.question_id in unreadable or q.question_id in answers]

"""The model under test answers a conversation's quality questions (True/False/NA), citing message ids."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragjudge.bench.cxm import prompts as P
from ragjudge.bench.cxm.data import normalize_message_id
from ragjudge.bench.cxm.models import QualityCase, render_conversation
from ragjudge.bench.cxm.quality.data import parse_answer
from ragjudge.bench.cxm.solver import complete, usage
from ragjudge.engine.bench import EachSolver, Record
from ragjudge.judges.spec import JudgeSpec
from ragjudge.llm import LLMGateway

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext


def read_quality_answers(value: Any, case: QualityCase, spec: JudgeSpec | None = None
                         ) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    """The model's answers → (answers in question order, ids of unanswered questions, ids answered with no
    True/False/NA). The keys come from the spec's options (`answers_key`, `question_key`, `answer_key`,
    `evidence_key`), so a prompt written for the release runs unchanged. An item names its question by number or
    text, else by position."""
    options = spec.options if spec is not None else {}
    answers_key = options.get("answers_key", "answers")
    q_key, a_key = options.get("question_key", "question"), options.get("answer_key", "answer")
    e_key = options.get("evidence_key", "message_ids")
    items = value if answers_key is None else (value.get(answers_key, []) if isinstance(value, dict) else [])
    answers: dict[str, dict[str, Any]] = {}
    unreadable: list[str] = []
    numbers = {str(i + 1): q.question_id for i, q in enumerate(case.questions)}
    by_text = {q.text.strip().casefold(): q.question_id for q in case.questions}
    for position, item in enumerate(items if isinstance(items, list) else []):
        if not isinstance(item, dict):
            continue
        key = str(item.get(q_key, "")).strip().rstrip(".")
        question_id = numbers.get(key) or by_text.get(key.casefold())
        if question_id is None and position < len(case.questions):
            question_id = case.questions[position].question_id
        if question_id is None or question_id in answers or question_id in unreadable:
            continue
        try:
            answer = parse_answer(item.get(a_key))
        except ValueError:
            unreadable.append(question_id)
            continue
        evidence = [normalize_message_id(x) for x in item.get(e_key) or [] if isinstance(x, (str, int))]
        answers[question_id] = {"question_id": question_id, "answer": answer, "evidence": evidence}
    ordered = [answers[q.question_id] for q in case.questions if q.question_id in answers]
    missing = [q.question_id for q in case.questions
               if q.question_id not in answers and q.question_id not in unreadable]
    return ordered, missing, unreadable


async def predict_quality(gateway: LLMGateway, case: QualityCase, model: str, spec: JudgeSpec) -> dict[str, Any]:
    questions = [{"number": i + 1, "text": q.text} for i, q in enumerate(case.questions)]
    variables = {"conversation": render_conversation(case.messages), "questions": questions,
                 "transcript": case.transcript or render_conversation(case.messages),
                 "question_list": str([q.text for q in case.questions])}
    response = await complete(gateway, model, P.messages(spec, variables), spec.params)
    row: dict[str, Any] = {"case_id": case.case_id, "model": model}
    if isinstance(response, str):
        return {**row, "error": response}
    row.update(usage(response), raw=response.text)
    parsed = P.parse_json(response.text, spec)
    if not parsed.ok:
        return {**row, "answers": [], "parse_error": parsed.error}
    answers, missing, unreadable = read_quality_answers(parsed.value, case, spec)
    if missing or unreadable:
        row["parse_error"] = f"no readable answer for question(s) {', '.join(missing + unreadable)}"
    if unreadable:
        row["unreadable"] = unreadable
    return {**row, "answers": answers}


class QualitySolver(EachSolver[QualityCase]):
    def __init__(self, model: str, book: P.PromptBook):
        self.name = model
        self.model = model
        self.spec = book.spec(P.QUALITY)

    def fingerprint(self, sample: QualityCase) -> str:
        return P.fingerprint_of(self.spec, self.model)

    def key(self, sample: QualityCase) -> str:
        return sample.case_id

    async def solve_one(self, sample: QualityCase, ctx: RunContext) -> Record:
        return await predict_quality(ctx.require_gateway(), sample, self.model, self.spec)

"""Agent quality adherence: conversations with quality questions, gold answers and supporting message ids.

A gold evidence id naming no message of its conversation (or the wrong speaker: `AGENT[2]` for a customer message)
spoils that question's evidence only: it keeps its answer (scored, as CXMArena's evaluator ignores evidence) and
`evidence_error`, and is left out of the evidence metrics, counted and noted.
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path
from typing import Any

from ragjudge.bench.cxm.data import conversation, id_of, message_id_speaker, normalize_message_id, records, transcript
from ragjudge.bench.cxm.models import Message, QualityCase, QualityQuestion
from ragjudge.bench.cxm.tables import field, id_list, require_file, structured
from ragjudge.errors import InputError


_ANSWERS = {**dict.fromkeys(("true", "yes", "y", "1"), True), **dict.fromkeys(("false", "no", "n", "0"), False),
            **dict.fromkeys(("na", "n/a", "not applicable", "none", "null", ""), None)}


def parse_answer(value: Any) -> bool | None:
    """True/False/NA from booleans or text (Yes/No/NA as the release writes them). ValueError otherwise."""
    if isinstance(value, bool) or value is None:
        return value
    text = str(value).strip().lower().rstrip(".")
    if text not in _ANSWERS:
        raise ValueError(f"{value!r} is not True, False or NA")
    return _ANSWERS[text]


def _questions(row: dict[str, Any], path: Path, line: int) -> list[dict[str, Any]]:
    raw = field(row, "questions", "question_answers")
    if raw is None:
        raise InputError("missing questions (or question_answers)", file=str(path), line=line)
    items = structured(raw, path=path, line=line, name="questions")
    if not isinstance(items, list) or not items:
        raise InputError("questions must be a non-empty list", file=str(path), line=line, field="questions")
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise InputError(f"question {i + 1} is not an object", file=str(path), line=line, field="questions")
        text = field(item, "question", "Question", "text")
        if not isinstance(text, str):
            raise InputError(f"question {i + 1} has no text", file=str(path), line=line, field="questions")
        if "answer" not in item and "Answer" not in item:  # a missing answer is not "NA": say so
            raise InputError(f"question {i + 1} has no answer (true, false or \"NA\")", file=str(path), line=line,
                             field="answer")
        try:
            answer = parse_answer(field(item, "answer", "Answer"))
        except ValueError as exc:
            raise InputError(f"question {i + 1}: {exc}", file=str(path), line=line, field="answer") from None
        evidence_raw = field(item, "evidence", "message_ids", "proof_message_ids")
        evidence, problem = None, None
        if evidence_raw is not None:
            try:
                evidence = id_list(evidence_raw, path=path, line=line, name="evidence")
            except InputError as exc:
                problem = exc.message
        out.append({"id": field(item, "id", "question_id"), "text": text, "answer": answer, "evidence": evidence,
                    "line": line, "problem": problem, "number": i + 1})
    return out


def _evidence_problem(raw: list[str], messages: list[Message], case_id: str) -> str | None:
    by_id = {m.id: m for m in messages}
    for item in raw:
        message = by_id.get(normalize_message_id(item))
        if message is None:
            return f"evidence names message {item!r}, which case {case_id!r} does not have"
        speaker = message_id_speaker(item)
        if speaker is not None and speaker != message.speaker:
            return f"evidence {item!r} names message {message.id}, which is a {message.speaker} message"
    return None


def load_quality(folder: Path) -> list[QualityCase]:
    """One case per conversation; release rows that share a conversation_id are merged."""
    path = require_file(folder, "quality-adherence cases", ("quality.jsonl",), (("Agent_Quality_Adherence", "train"),))
    grouped: dict[str, dict[str, Any]] = OrderedDict()
    for line, index, row in records(path, "quality-adherence cases"):
        case_id = id_of(row, ("case_id", "conversation_id", "id"), path, line, index)
        questions = _questions(row, path, line)
        if case_id not in grouped:
            grouped[case_id] = {"messages": conversation(row, path, line), "questions": [], "line": line,
                                "transcript": transcript(row)}
        grouped[case_id]["questions"].extend(questions)
    cases = []
    for case_id, group in grouped.items():
        questions: list[QualityQuestion] = []
        for i, q in enumerate(group["questions"]):
            question_id = str(q["id"]) if q["id"] is not None else f"q{i + 1}"
            if any(x.question_id == question_id for x in questions):
                raise InputError(f"question id {question_id!r} repeats in case {case_id!r}", file=str(path),
                                 line=q["line"], field="questions")
            problem = q["problem"] or (_evidence_problem(q["evidence"], group["messages"], case_id)
                                       if q["evidence"] else None)
            evidence = None if q["evidence"] is None or problem else [normalize_message_id(e) for e in q["evidence"]]
            questions.append(QualityQuestion(
                question_id=question_id, text=q["text"], answer=q["answer"], evidence=evidence,
                evidence_error=f"{path}:{q['line']}: evidence of question {q['number']}: {problem}" if problem
                else None))
        cases.append(QualityCase(case_id=case_id, messages=group["messages"], questions=questions,
                                 transcript=group["transcript"]))
    return cases

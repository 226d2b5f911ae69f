"""A DialSim question's outcome as the sample log's record (`ragjudge.sample/1`; fields: docs/benches/dialsim.md).

`contexts` are the memory items as shown, each its session's id with the label the agent saw as title, so the report
marks recalled items from an evidence session; their texts are not kept (a whole session, or a context window of
them, per question): they are in the data, at the session and utterance the label names.
"""

from __future__ import annotations

from typing import Any

from ragjudge.bench.dialsim.judge import SPEC_NAME
from ragjudge.bench.dialsim.plan import OPTION_LETTERS, PlannedQuestion
from ragjudge.bench.dialsim.prompts import AnswerFormat, question_line
from ragjudge.engine.bench import Record, SampleResult, failed
from ragjudge.formats.samples import Passage, Sample, Score

ANSWER_FACTS = ("model", "latency", "retrieval_seconds", "answer_seconds", "cached", "timed_out", "memory_chars")
"""What the solver records about an answer besides the reply and the memory: kept in metadata."""


def session_id(index: int) -> str:
    return f"session-{index}"


def question_sample(result: SampleResult[PlannedQuestion], fmt: AnswerFormat) -> Sample:
    q, output = result.sample, result.output
    score = result.scores.get("dialsim", {})
    metadata: dict[str, Any] = {
        "episode": q.episode, "scene": q.scene, "session": q.session, "date": q.date, "ask_after": q.ask_after,
        "asker": q.asker, "agent": q.agent, "names": q.names, "question_id": q.question_id, "question": q.question,
        "options": list(q.options), "gold": q.gold}
    if q.evidence_sessions is not None:
        metadata["evidence_sessions"] = list(q.evidence_sessions)
    metadata.update({key: output[key] for key in ANSWER_FACTS if output.get(key) is not None})
    if not failed(score) and "committed" in score:
        metadata["committed"] = bool(score["committed"])
    return Sample(
        id=q.id, input=question_line(q, fmt), target=gold_answer(q, fmt),
        target_contexts=[Passage(id=session_id(i)) for i in q.evidence_sessions or []],
        output=None if failed(output) else str(output.get("answer", "")), contexts=memory_passages(output),
        scores=scores(score) if score else {}, labels=labels(q),
        error=str(output["error"]) if failed(output) else None, metadata=metadata)


def gold_answer(q: PlannedQuestion, fmt: AnswerFormat) -> str:
    if fmt == "mc":
        return f"{q.gold} {q.options[OPTION_LETTERS.index(q.gold)]}"
    return q.gold_text


def memory_passages(output: Record) -> list[Passage]:
    """The recalled items in the order shown; an output journaled before the items' sessions were recorded keeps
    its labels only."""
    labels = output.get("memory") or []
    sessions = output.get("memory_sessions") or [None] * len(labels)
    found = output.get("memory_scores") or [None] * len(labels)
    return [Passage(id=None if s is None else session_id(s), title=label, score=value)
            for label, s, value in zip(labels, sessions, found, strict=False)]


def scores(score: Record) -> dict[str, Score]:
    """The scorer's record under the summary's metric names; a failed score is an error under both accuracies."""
    llm = score.get("judge_raw") is not None
    judge = {"judge": SPEC_NAME, "model": score.get("judged_by"), "raw": score.get("judge_raw")} if llm else {}
    if failed(score):
        error = Score(error=str(score.get("error")), **judge)
        return {"accuracy": error, "accuracy_calibrated": error.model_copy(update={"judge": None, "raw": None,
                                                                                   "model": None})}
    details = {k: score[k] for k in ("judged_by", "choice") if score.get(k) is not None}
    return {"accuracy": Score(value=float(score["value"]), label=score.get("verdict"), details=details, **judge),
            "accuracy_calibrated": Score(value=float(score["calibrated_value"]), label=score.get("calibrated")),
            "declined": Score(value=float(bool(score.get("declined"))))}


def labels(q: PlannedQuestion) -> dict[str, str | list[str]]:
    """The question's group in each of the summary's breakdowns (hop: temporal questions only)."""
    found = {"seed": str(q.seed), "show": q.show, "source": q.source, "hop": q.hop,
             "answerability": "answerable" if q.answerable else "unanswerable", "type": q.type}
    return {k: v for k, v in found.items() if v is not None}

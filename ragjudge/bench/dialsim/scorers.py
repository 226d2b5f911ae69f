"""Scoring each answer: strict and calibrated multiple choice, or exact match then a judge (LLM or lexical); a score
also records whether the agent declined ("I don't know") and what judged it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any, Literal

from ragjudge.bench.dialsim.judge import AnswerJudge
from ragjudge.bench.dialsim.metrics import (calibrate, committed, declined, distill, exact_match, lexical_verdict,
                                            strict_mc)
from ragjudge.bench.dialsim.plan import PlannedQuestion
from ragjudge.bench.dialsim.prompts import AnswerFormat, question_line
from ragjudge.engine.bench import Record, Scorer, failed, fingerprint
from ragjudge.engine.parallel import each_as_completed

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext

JudgeKind = Literal["llm", "lexical"]


def rule_score(fmt: str, gold: str, gold_text: str, options: Sequence[str], answer: str,
               judge: JudgeKind) -> dict[str, Any]:
    """Everything that needs no LLM. For natural-language answers that the exact match does not settle
    and an LLM judge is used, `verdict` is None: the judge decides."""
    out: dict[str, Any] = {"declined": declined(fmt, answer, options)}
    out["committed"] = committed(fmt, answer, options)
    if fmt == "mc":
        verdict = strict_mc(gold, answer)
        out.update(verdict=verdict, choice=distill(answer), judged_by="rule",
                   calibrated=calibrate(gold, answer, options) if verdict == "ambiguous" else verdict)
    elif exact_match(gold_text, answer):
        out.update(verdict="correct", calibrated="correct", judged_by="exact")
    elif judge == "lexical":
        verdict = lexical_verdict(answer, gold_text, options, gold_is_idk=gold == "(E)")
        out.update(verdict=verdict, calibrated=verdict, judged_by="lexical")
    else:
        out.update(verdict=None, calibrated=None, judged_by="llm")
    return out


def finish(score: dict[str, Any]) -> dict[str, Any]:
    score["value"] = int(score["verdict"] == "correct")
    score["calibrated_value"] = int(score["calibrated"] == "correct")
    return score


def timed_out() -> dict[str, Any]:
    """An answer abandoned at the time limit: wrong, as the official simulator counts it."""
    return finish({"verdict": "timeout", "calibrated": "timeout", "declined": False, "committed": False,
                   "judged_by": "time limit"})


async def answer_score(fmt: str, gold: str, gold_text: str, options: Sequence[str], answer: str, judge: JudgeKind,
                       llm_judge: AnswerJudge | None, question: str) -> dict[str, Any]:
    """`rule_score`, then the LLM judge where the rule leaves the verdict open; a failed judge call adds `error`."""
    score = rule_score(fmt, gold, gold_text, options, answer, judge)
    if score["verdict"] is None:
        assert llm_judge is not None
        judged = await llm_judge.judge(question, gold_text, answer)
        score.update(verdict=judged.get("verdict"), calibrated=judged.get("verdict"), judged_by=llm_judge.model,
                     judge_raw=judged.get("raw"))
        if "error" in judged:
            return {**score, "error": judged["error"]}
    return finish(score)


class AnswerScorer(Scorer[PlannedQuestion]):
    name = "dialsim"

    def __init__(self, fmt: AnswerFormat, judge: JudgeKind, llm_judge: AnswerJudge | None = None):
        self.fmt = fmt
        self.judge = judge
        self.llm_judge = llm_judge
        self._fp = fingerprint(fmt, judge, llm_judge.identity if llm_judge else None)

    def fingerprint(self, sample: PlannedQuestion, output: Record) -> str:
        return fingerprint(self._fp, output.get("answer"), bool(output.get("timed_out")))

    async def score(self, items: Sequence[tuple[PlannedQuestion, Record]],
                    ctx: RunContext) -> AsyncIterator[tuple[str, Record]]:
        async for (q, _), score in each_as_completed(list(items), self._one):
            yield q.id, score

    async def _one(self, item: tuple[PlannedQuestion, Record]) -> Record:
        q, output = item
        if output.get("timed_out"):
            return timed_out()
        score = await answer_score(self.fmt, q.gold, q.gold_text, q.options, str(output.get("answer", "")), self.judge,
                                   self.llm_judge, question_line(q, self.fmt))
        return {k: score[k] for k in ("error", "judge_raw", "judged_by")} if failed(score) else score

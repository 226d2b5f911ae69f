"""Judges over RAG records: each judge reads a record as the task and prediction it judges (MTRAG's model, so every
judge spec works on both), and a judgement is reused only for the very answer and passages it was made on."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING

from ragjudge.bench.mtrag.scorers import JudgeScorer
from ragjudge.engine.bench import Record, Scorer
from ragjudge.formats.rag_records import FIELDS, RagRecord
from ragjudge.judges import Judge, JudgeContext
from ragjudge.models import JudgeResult

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext


class RecordScorer(Scorer[RagRecord]):
    def __init__(self, judge: Judge, judge_ctx: JudgeContext):
        self.inner = JudgeScorer(judge, judge_ctx)
        self.name = judge.name

    def fingerprint(self, sample: RagRecord, output: Record) -> str:
        return self.inner.fingerprint(sample.task(), output)

    def unscorable(self, sample: RagRecord, output: Record) -> Record:
        return self.inner.unscorable(sample.task(), output)

    async def score(self, items: Sequence[tuple[RagRecord, Record]], ctx: RunContext
                    ) -> AsyncIterator[tuple[str, Record]]:
        """A record without an answer is not applicable to any judge (nothing to judge; never an empty answer's 0)."""
        judge = self.inner.judge
        for record, _ in items:
            if (reason := no_answer(record)) is not None:
                yield record.key, JudgeResult(judge=judge.name, metric=judge.metric,
                                              details={"skipped": reason}).model_dump(exclude_none=True)
        answered = [(record.task(), output) for record, output in items if no_answer(record) is None]
        if answered:
            async for key, score in self.inner.score(answered, ctx):
                yield key, score


def no_answer(record: RagRecord) -> str | None:
    """Why a record has nothing to judge, or None."""
    if record.answer is None:
        return f"no answer (the record has none of: {', '.join(FIELDS['answer'])})"
    if not record.answer.strip():
        return "empty answer"
    return None

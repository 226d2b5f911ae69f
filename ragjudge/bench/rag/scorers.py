"""Judges over RAG records: each judge reads a record as the task and prediction it judges (MTRAG's model, so every
judge spec works on both), and a judgement is reused only for the very answer and passages it was made on."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING

from ragjudge.bench.mtrag.scorers import JudgeScorer
from ragjudge.engine.bench import Record, Scorer
from ragjudge.formats.rag_records import RagRecord
from ragjudge.judges import Judge, JudgeContext

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
        async for key, score in self.inner.score([(record.task(), output) for record, output in items], ctx):
            yield key, score

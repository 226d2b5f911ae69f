"""Judges as the engine's scorers, for every bench that judges answers (rag, MTRAG, MTRAG-UN) and the pytest
plugin: each bench says how its sample and output read as a `JudgedItem`; a judgement is reused only for the very
answer and passages it was made on."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Generic

from ragjudge.engine.bench import Record, S, Scorer, fingerprint
from ragjudge.engine.parallel import each_as_completed
from ragjudge.formats.samples import Score
from ragjudge.judges import Judge, JudgeContext, JudgedItem

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext


class JudgeScorer(Scorer[S], Generic[S]):
    def __init__(self, judge: Judge, judge_ctx: JudgeContext, item_of: Callable[[S, Record], JudgedItem],
                 skipped: Callable[[S], str | None] = lambda sample: None):
        """`item_of`: the sample and its output as the judge reads them; `skipped`: why a sample has nothing to
        judge (not applicable to any judge), or None."""
        self.judge = judge
        self.name = judge.name
        self.judge_ctx = judge_ctx
        self.item_of = item_of
        self.skipped = skipped
        self._spec_fp = fingerprint(judge.spec.model_dump(exclude={"source"}), judge.describe_models(judge_ctx))

    def fingerprint(self, sample: S, output: Record) -> str:
        item = self.item_of(sample, output)
        return fingerprint(self._spec_fp, item.answer, [p.document_id for p in item.contexts])

    def unscorable(self, sample: S, output: Record) -> Record:
        return self.judge.result(error=f"no prediction to judge: {output.get('error')}").record()

    async def score(self, items: Sequence[tuple[S, Record]], ctx: RunContext | None
                    ) -> AsyncIterator[tuple[str, Record]]:
        judged = []
        for sample, output in items:
            item = self.item_of(sample, output)
            if (reason := self.skipped(sample)) is not None:
                yield item.id, self.judge.result(details={"skipped": reason}).record()
            else:
                judged.append(item)
        async for item, result in self.judged(judged):
            yield item.id, result.record()

    async def judged(self, items: Sequence[JudgedItem]) -> AsyncIterator[tuple[JudgedItem, Score]]:
        """LLM judges: every item in flight at once, each yielded when it returns (the gateway paces them);
        computed judges (RB_alg): in chunks, so that batched encoding stays efficient."""
        quiet = replace(self.judge_ctx, on_progress=lambda n: None)
        if self.judge.needs_llm:
            async def one(item: JudgedItem) -> Score:
                [result] = await self.judge.judge([item], quiet)
                return result

            async for item, result in each_as_completed(items, one):
                yield item, result
            return
        size = self.judge.chunk_size
        for start in range(0, len(items), size):
            chunk = list(items[start:start + size])
            for item, result in zip(chunk, await self.judge.judge(chunk, quiet), strict=True):
                yield item, result

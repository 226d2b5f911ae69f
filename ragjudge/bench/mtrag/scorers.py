"""MTRAG's judges as scorers: each judgement is reused only for the very answer and passages it was made on."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from ragjudge.bench.mtrag.solver import passage_ids
from ragjudge.engine.bench import Record, Scorer, fingerprint
from ragjudge.engine.parallel import each_as_completed
from ragjudge.judges import Judge, JudgeContext, JudgeItem
from ragjudge.models import JudgeResult, Prediction, Task

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext


class JudgeScorer(Scorer[Task]):
    def __init__(self, judge: Judge, judge_ctx: JudgeContext):
        self.judge = judge
        self.name = judge.name
        self.judge_ctx = judge_ctx
        self._spec_fp = fingerprint(judge.spec.model_dump(exclude={"source"}), judge.describe_models(judge_ctx))

    def fingerprint(self, sample: Task, output: Record) -> str:
        item = JudgeItem(sample, Prediction.model_validate(output))
        return fingerprint(self._spec_fp, item.prediction.text, passage_ids(item.passages))

    def unscorable(self, sample: Task, output: Record) -> Record:
        return JudgeResult(judge=self.judge.name, metric=self.judge.metric,
                           error=f"no prediction to judge: {output.get('error')}").model_dump(exclude_none=True)

    async def score(self, items: Sequence[tuple[Task, Record]], ctx: RunContext) -> AsyncIterator[tuple[str, Record]]:
        """LLM judges: every item in flight at once, each journaled when it returns (the gateway paces them);
        computed judges (RB_alg): in chunks, so that batched encoding stays efficient."""
        judge_items = [JudgeItem(task, Prediction.model_validate(output)) for task, output in items]
        quiet = replace(self.judge_ctx, on_progress=lambda n: None)
        if self.judge.needs_llm:
            async def one(item: JudgeItem) -> JudgeResult:
                [result] = await self.judge.judge([item], quiet)
                return result

            async for item, result in each_as_completed(judge_items, one):
                yield item.task.key, result.model_dump(exclude_none=True)
            return
        size = self.judge.chunk_size
        for start in range(0, len(judge_items), size):
            chunk = judge_items[start:start + size]
            results = await self.judge.judge(chunk, quiet)
            for item, result in zip(chunk, results, strict=True):
                yield item.task.key, result.model_dump(exclude_none=True)

"""The system under test of the retrieval benches: a pipeline searching every query once, in a batch over one index.
Each output is the query searched (`query`) and its ranked passages in MTRAG's run-file shape (`contexts`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any

from ragjudge.bench.mtrag.retrieval.data import RetrievalQuery
from ragjudge.engine.bench import Record, Solver
from ragjudge.formats.runs import Hit

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext
    from ragjudge.retrieval.pipeline import Pipeline


def ranking(output: Record) -> list[Hit]:
    """An output's ranked passages, as a run holds them."""
    return [Hit(doc_id=c["document_id"], score=float(c["score"]), text=c.get("text"), title=c.get("title"))
            for c in output.get("contexts", [])]


class PipelineSolver(Solver[RetrievalQuery]):
    """Searches every query once in `prepare` (a batch over one index); cheap to redo, so not journaled."""

    journaled = False

    def __init__(self, pipeline: Pipeline, corpus: str | None, k: int):
        self.pipeline = pipeline
        self.name = pipeline.spec.name
        self.corpus = corpus
        self.k = k
        self.outputs: dict[str, Record] = {}

    async def queries(self, samples: Sequence[RetrievalQuery], ctx: RunContext) -> list[tuple[str, dict[str, Any]]]:
        """The text searched for each sample and what its output adds: as loaded here; a subclass may build some
        now (an LLM rewrite)."""
        return [(q.text, {}) for q in samples]

    async def prepare(self, samples: Sequence[RetrievalQuery], ctx: RunContext) -> None:
        built = await self.queries(samples, ctx)
        self.pipeline.open(self.corpus, ctx.bars)
        results = self.pipeline.search([text for text, _ in built], self.k)
        for query, (text, extra), passages in zip(samples, built, results, strict=True):
            self.outputs[query.id] = {"query": self.pipeline.prepare(text), **extra, "contexts": [
                {"document_id": p.document_id, "score": float(p.score or 0.0), "text": p.text, "title": p.title}
                for p in passages]}

    def fingerprint(self, sample: RetrievalQuery) -> str:
        return self.name

    async def solve(self, samples: Sequence[RetrievalQuery], ctx: RunContext) -> AsyncIterator[tuple[str, Record]]:
        for q in samples:
            yield q.id, self.outputs[q.id]

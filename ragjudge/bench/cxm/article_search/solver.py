"""The system under test: a retrieval pipeline ranking the KB's articles for each question."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import TYPE_CHECKING

from ragjudge.bench.cxm.models import SearchQuery
from ragjudge.bench.cxm.retrieve import KbIndex
from ragjudge.engine.bench import Record, Solver

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext


class SearchSolver(Solver[SearchQuery]):
    """Ranks every query at once (one index, one batch search); cheap to redo, so not journaled."""

    journaled = False

    def __init__(self, open_index: Callable[[RunContext], KbIndex], pipeline: str, depth: int):
        self.open_index = open_index
        self.name = pipeline
        self.depth = depth
        """Distinct articles ranked per query (the deepest cut-off)."""

    def fingerprint(self, sample: SearchQuery) -> str:
        return self.name

    async def solve(self, samples: Sequence[SearchQuery], ctx: RunContext) -> AsyncIterator[tuple[str, Record]]:
        index = self.open_index(ctx)
        try:
            hits = index.search([q.query for q in samples], self.depth)
        finally:
            index.close()
        for q, h in zip(samples, hits, strict=True):
            row: Record = {"query_id": q.query_id, "ranking": h.ranking, "retriever": self.name}
            if index.chunking is not None:
                row["chunk_articles"] = h.chunk_articles
            yield q.query_id, row

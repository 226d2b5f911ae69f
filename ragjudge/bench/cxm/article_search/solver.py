"""The system under test: a retrieval pipeline ranking the KB's articles for each question."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING

from ragjudge.bench.cxm.models import SearchQuery
from ragjudge.engine.bench import Record, Solver

if TYPE_CHECKING:
    from ragjudge.bench.cxm.article_search.bench import ArticleSearchBench
    from ragjudge.engine.context import RunContext


class SearchSolver(Solver[SearchQuery]):
    """Ranks every query at once (one index, one batch search); cheap to redo, so not journaled."""

    journaled = False

    def __init__(self, bench: ArticleSearchBench):
        self.bench = bench
        self.name = bench.options.pipeline

    def fingerprint(self, sample: SearchQuery) -> str:
        return self.name

    async def solve(self, samples: Sequence[SearchQuery], ctx: RunContext) -> AsyncIterator[tuple[str, Record]]:
        index = self.bench.open_index(ctx)
        try:
            hits = index.search([q.query for q in samples], max(self.bench.options.ks))
        finally:
            index.close()
        for q, h in zip(samples, hits, strict=True):
            row: Record = {"query_id": q.query_id, "ranking": h.ranking, "retriever": self.name}
            if index.chunking is not None:
                row["chunk_articles"] = h.chunk_articles
            yield q.query_id, row

"""The system under test: each turn's conversation made a query (a strategy, or an LLM), then a retrieval pipeline's
ranking of the KB's articles (`queries.ConversationSearch`, the way answer classification retrieves too)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING

from ragjudge.bench.cxm.models import RagCase
from ragjudge.bench.cxm.queries import ConversationSearch
from ragjudge.engine.bench import Record, Solver

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext


class RetrievalSolver(Solver[RagCase]):
    """Queries for every turn, then one batch search. Journaled: a rerun reuses the turns already ranked (and their
    LLM queries)."""

    def __init__(self, search: ConversationSearch, pipeline: str, depth: int):
        self.search = search
        self.name = f"{pipeline}/{search.strategy}"
        self.depth = depth
        """Distinct articles ranked per turn (the deepest cut-off)."""

    def key(self, sample: RagCase) -> str:
        return sample.case_id

    def fingerprint(self, sample: RagCase) -> str:
        return self.search.fingerprint(self.depth)

    async def solve(self, samples: Sequence[RagCase], ctx: RunContext) -> AsyncIterator[tuple[str, Record]]:
        rows = await self.search.rank(samples, ctx, self.depth)
        for case in samples:
            yield case.case_id, {"case_id": case.case_id, **rows[case.case_id]}

"""CDR's scorer: hit (the paper's ACC), P, R, nDCG and MRR at 1, 5, 10, 20 of each query's conversation ranking,
through ranx in one call for every query it is given."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING

from ragjudge.bench.cdr.data import CdrQuery
from ragjudge.bench.cdr.metrics import HEADLINE, METRICS, score_queries
from ragjudge.engine.bench import Record, Scorer, fingerprint

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext


class MetricsScorer(Scorer[CdrQuery]):
    """hit (the paper's ACC), P, R, nDCG and MRR at 1, 5, 10, 20 per query, through ranx."""

    name = "metrics"

    def fingerprint(self, sample: CdrQuery, output: Record) -> str:
        return fingerprint(METRICS, [(r["id"], r["score"]) for r in output.get("ranking", [])])

    async def score(self, items: Sequence[tuple[CdrQuery, Record]], ctx: RunContext
                    ) -> AsyncIterator[tuple[str, Record]]:
        queries = [q for q, _ in items]
        rankings = {q.id: out.get("ranking", []) for q, out in items}
        scores = score_queries(queries, rankings)  # one ranx call (numba threads are set per call)
        for query in queries:
            yield query.id, {"value": scores[query.id][HEADLINE], "metrics": scores[query.id]}

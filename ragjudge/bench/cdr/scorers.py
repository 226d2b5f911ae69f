"""The figures of each query's conversation ranking: hit (the paper's ACC), P, R, nDCG and MRR at 1, 5, 10, 20,
through ranx, every query the scorer is given in one call (numba threads are set per call). A query's figures
depend on its own ranking only, so a resumed run scores just the queries searched again."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING

from ragjudge.bench.cdr.data import CdrQuery
from ragjudge.bench.cdr.metrics import HEADLINE, METRICS, score_queries
from ragjudge.engine.bench import Record, Scorer, fingerprint

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext


class MetricsScorer(Scorer[CdrQuery]):
    """`{"value": nDCG@10, "metrics": {name: value}}` per query, names as the summary's."""

    name = "metrics"

    def fingerprint(self, sample: CdrQuery, output: Record) -> str:
        return fingerprint(METRICS, [(r["id"], r["score"]) for r in output.get("ranking", [])])

    async def score(self, items: Sequence[tuple[CdrQuery, Record]], ctx: RunContext
                    ) -> AsyncIterator[tuple[str, Record]]:
        queries = [q for q, _ in items]
        scores = score_queries(queries, {q.id: out.get("ranking", []) for q, out in items})
        for query in queries:
            yield query.id, {"value": scores[query.id][HEADLINE], "metrics": scores[query.id]}

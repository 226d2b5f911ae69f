"""The system under test (a ragjudge retrieval pipeline over the units) and the metric scorer.

The pipeline's index is opened (built once, then reused) in `prepare`; `solve` searches the queries not yet
in the journal, in batches (engines answer a batch far faster than single queries), and journals each
query's conversation ranking with its share of the batch's time, so the inference time of a resumed run
still adds up. The scorer computes every metric of the queries it is given through ranx in one call.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragjudge.engine.bench import Record, Scorer, Solver, fingerprint
from ragjudge.bench.cdr.data import CdrQuery
from ragjudge.bench.cdr.metrics import HEADLINE, METRICS, score_queries
from ragjudge.bench.cdr.ranking import search_conversations
from ragjudge.bench.cdr.truncation import encoders_of, truncation
from ragjudge.bench.cdr.units import UnitTable

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext
    from ragjudge.retrieval.pipeline import IndexInfo, Pipeline


class RetrievalSolver(Solver[CdrQuery]):
    name = "retrieve"

    def __init__(self, pipeline: Pipeline, table: UnitTable, units_file: Path, depth: int, batch: int):
        self.pipeline = pipeline
        self.table = table
        self.units_file = units_file
        self.depth = depth
        self.batch = batch
        self.index: IndexInfo | None = None
        self.truncation: list[dict[str, Any]] = []
        self.searched_now = 0
        self.search_seconds_now = 0.0

    async def prepare(self, samples: Sequence[CdrQuery], ctx: RunContext) -> None:
        for encoder, _ in encoders_of(self.pipeline.retriever):  # the paper's ingestion time excludes model loading
            if hasattr(encoder, "max_tokens"):
                _ = encoder.max_tokens  # loads the local model
        self.index = self.pipeline.open(self.units_file, ctx.bars)
        self.truncation = truncation(self.pipeline.retriever, [u.text for u in self.table.units], self.units_file)

    def fingerprint(self, sample: CdrQuery) -> str:
        return str([self.pipeline.spec.record(), self.pipeline.index_identity(), self.depth])

    async def solve(self, samples: Sequence[CdrQuery], ctx: RunContext) -> AsyncIterator[tuple[str, Record]]:
        n_conversations = len(set(self.table.conversation_of.values()))
        for start in range(0, len(samples), self.batch):
            batch = list(samples[start : start + self.batch])
            started = time.perf_counter()
            ranked, searched = await asyncio.to_thread(
                search_conversations, self.pipeline.search, [q.text for q in batch], self.table.conversation_of,
                self.depth, len(self.table), n_conversations)
            seconds = time.perf_counter() - started
            self.searched_now += len(batch)
            self.search_seconds_now += seconds
            for query, conversations, units in zip(batch, ranked, searched, strict=True):
                yield query.id, {"ranking": [c.as_dict() for c in conversations], "units_ranked": units,
                                 "seconds": round(seconds / len(batch), 6)}


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

"""The system under test: a ragjudge retrieval pipeline over the units, its index opened in `prepare`. Queries are
searched in batches, each journaled with its share of the batch's time, so a resumed run's inference time still adds
up; what the run learns as a whole (index, truncated units, queries searched now) goes to `ctx.facts["cdr"]`.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragjudge.engine.bench import Record, Solver
from ragjudge.bench.cdr.data import CdrQuery
from ragjudge.bench.cdr.ranking import search_conversations
from ragjudge.bench.cdr.truncation import encoders_of, truncation
from ragjudge.bench.cdr.units import UnitTable

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext
    from ragjudge.retrieval.pipeline import IndexInfo, Pipeline


@dataclass
class SearchFacts:
    """What the solver learns about the run as a whole, for the summary and run.json."""

    index: IndexInfo | None = None
    truncation: list[dict[str, Any]] = field(default_factory=list)
    """Per encoder: units longer than its input limit (`truncation.truncation`)."""
    searched_now: int = 0
    search_seconds_now: float = 0.0
    """Queries searched by this invocation (a resumed run reads the others from its journal), and how long."""


class RetrievalSolver(Solver[CdrQuery]):
    name = "retrieve"

    def __init__(self, pipeline: Pipeline, table: UnitTable, units_file: Path, depth: int, batch: int):
        self.pipeline = pipeline
        self.table = table
        self.units_file = units_file
        self.depth = depth
        self.batch = batch
        self.facts = SearchFacts()

    async def prepare(self, samples: Sequence[CdrQuery], ctx: RunContext) -> None:
        for encoder, _ in encoders_of(self.pipeline.retriever):  # the paper's ingestion time excludes model loading
            if hasattr(encoder, "max_tokens"):
                _ = encoder.max_tokens  # loads the local model
        self.facts.index = self.pipeline.open(self.units_file, ctx.bars)
        self.facts.truncation = truncation(self.pipeline.retriever, [u.text for u in self.table.units],
                                           self.units_file)
        ctx.facts["search"] = self.facts

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
            self.facts.searched_now += len(batch)
            self.facts.search_seconds_now += seconds
            for query, conversations, units in zip(batch, ranked, searched, strict=True):
                yield query.id, {"ranking": [c.as_dict() for c in conversations], "units_ranked": units,
                                 "seconds": round(seconds / len(batch), 6)}

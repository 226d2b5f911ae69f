"""The system under test: a ragjudge retrieval pipeline over the units, ranking conversations.

The pipeline's index is opened (built once, then reused) in `prepare`; `solve` searches the queries not yet
in the journal, in batches (engines answer a batch far faster than single queries), and journals each
query's conversation ranking with its share of the batch's time, so the inference time of a resumed run
still adds up. What the index and this invocation's searches were (`SearchFacts`: built or reused, how long,
how many units an encoder truncated) is the solver's to say; the summary reports it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
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
    """The index a run searched and what this invocation did with it."""

    index: IndexInfo | None = None
    truncation: list[dict[str, Any]] = field(default_factory=list)
    """Per encoder: the units longer than it reads (`truncation.truncation`)."""
    searched_now: int = 0
    seconds_now: float = 0.0


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
            self.facts.seconds_now += seconds
            for query, conversations, units in zip(batch, ranked, searched, strict=True):
                yield query.id, {"ranking": [c.as_dict() for c in conversations], "units_ranked": units,
                                 "seconds": round(seconds / len(batch), 6)}


"""The engine's view of the benchmark: one solver builds every dialogue's queries (the LLM rewrite among
them), and each system is a scorer that ranks the candidates and measures the ranking.

Each system is journaled on its own (its fingerprint: its spec, its scoring code version, the pool
statistics it used and the queries it read), so adding a system to a finished run ranks with the new one
only, and a resumed run skips every dialogue a system already ranked. Rankings are computed from the
candidates' texts and the queries; the labels are read only after, to measure.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ragjudge.engine.bench import Record, Scorer, Solver, fingerprint
from ragjudge.bench.sentence_retrieval.data import Dialogue
from ragjudge.bench.sentence_retrieval.metrics import METRICS, measure
from ragjudge.bench.sentence_retrieval.queries import (
    QueryConfig,
    build_parts,
    rewrite_query,
)
from ragjudge.bench.sentence_retrieval.systems import (
    Queries,
    RankingMemo,
    System,
    system_fingerprint,
)
from ragjudge.engine.parallel import each_as_completed
from ragjudge.llm import LLMError
from ragjudge.retrieval.encoders import EncodingError

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext

QUERY_VERSION = 1
"""Bump when query building changes: journaled queries are then rebuilt."""


def queries_of(output: Record) -> Queries:
    return {k: [(float(w), str(t)) for w, t in parts] for k, parts in output.get("queries", {}).items()}


class QuerySolver(Solver[Dialogue]):
    name = "queries"

    def __init__(self, configs: Sequence[QueryConfig], on_prepare: Callable[[Sequence[Dialogue], RunContext], None]):
        self.configs = {c.key(): c for c in configs}
        self.on_prepare = on_prepare

    async def prepare(self, samples: Sequence[Dialogue], ctx: RunContext) -> None:
        self.on_prepare(samples, ctx)

    def fingerprint(self, sample: Dialogue) -> str:
        return fingerprint(QUERY_VERSION, sorted((k, c.model_dump(mode="json")) for k, c in self.configs.items()))

    async def _one(self, dialogue: Dialogue, ctx: RunContext) -> Record:
        queries: dict[str, Any] = {}
        rewrites: dict[str, Any] = {}
        for key, config in self.configs.items():
            if config.strategy == "rewrite":
                parts, info = await rewrite_query(dialogue, config, ctx.gateway)
                rewrites[key] = info
            else:
                parts = build_parts(dialogue, config)
            queries[key] = [[w, t] for w, t in parts]
        return {"queries": queries, **({"rewrite": rewrites} if rewrites else {})}

    async def solve(self, samples: Sequence[Dialogue], ctx: RunContext) -> AsyncIterator[tuple[str, Record]]:
        async for dialogue, output in each_as_completed(list(samples), lambda d: self._one(d, ctx)):
            yield dialogue.id, output


class SystemScorer(Scorer[Dialogue]):
    """Ranks with one system (every grid setting) and measures AP, nDCG@5 and RR of each ranking."""

    def __init__(self, system: System, memo: RankingMemo, chunk: int = 32):
        self.system = system
        self.name = system.name
        self.memo = memo
        self.chunk = chunk

    def fingerprint(self, sample: Dialogue, output: Record) -> str:
        return system_fingerprint(self.system, queries_of(output))

    async def score(self, items: Sequence[tuple[Dialogue, Record]], ctx: RunContext
                    ) -> AsyncIterator[tuple[str, Record]]:
        keys = self.system.setting_keys
        for start in range(0, len(items), self.chunk):
            chunk = [(d, queries_of(out)) for d, out in items[start:start + self.chunk]]
            try:
                rankings = await self.memo.get(self.system, chunk)
            except (EncodingError, LLMError) as exc:
                for d, _ in chunk:
                    yield d.id, {"error": f"{self.name}: {exc}"}
                continue
            for (d, _), ranking in zip(chunk, rankings, strict=True):
                orders = np.stack([ranking[k] for k in keys])
                values = measure(np.asarray(d.labels), orders)
                yield d.id, {"settings": keys, "rankings": orders.tolist(), "metrics": values.tolist()}


def metric_dict(values: Sequence[float]) -> dict[str, float]:
    """Per-dialogue names: AP, nDCG@5, RR (the means over dialogues are MAP, nDCG@5, MRR)."""
    names = ("AP", "nDCG@5", "RR")
    assert len(names) == len(METRICS)
    return dict(zip(names, values, strict=True))

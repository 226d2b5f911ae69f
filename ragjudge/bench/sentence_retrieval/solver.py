"""The solver: every dialogue's queries, built for each query strategy the systems read (the LLM rewrite among
them, through the cached gateway). The systems themselves are scorers (`scorers.py`), journaled each on its own."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import TYPE_CHECKING, Any

from ragjudge.engine.bench import Record, Solver, fingerprint
from ragjudge.bench.sentence_retrieval.data import Dialogue
from ragjudge.bench.sentence_retrieval.queries import QueryConfig, build_parts, rewrite_query
from ragjudge.bench.sentence_retrieval.systems import Queries
from ragjudge.engine.parallel import each_as_completed

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

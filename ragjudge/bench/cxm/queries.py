"""Conversation → query → KB articles, the one way `cxm-multiturn-retrieval` (Table 8) and
`cxm-answer-classification` (Table 7) retrieve: the same options (`--pipeline`, `-T chunk`, `-T query`,
`--rewrite-model`), the same query formation (a strategy without an LLM, or CXMArena's query-formation prompt put
to an LLM through the gateway and its cache) and the same chunked KB search.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import Field, field_validator

from ragjudge.engine.bench import Record
from ragjudge.bench.cxm import prompts as P
from ragjudge.bench.cxm.models import RagCase
from ragjudge.bench.cxm.reference import QueryFormation
from ragjudge.bench.cxm.retrieve import describe_chunking
from ragjudge.bench.cxm.runners import QUERY_STRATEGIES, conversation_query, form_query
from ragjudge.bench.cxm.search import RetrievalOptions
from ragjudge.engine.parallel import each_as_completed
from ragjudge.errors import UsageError

if TYPE_CHECKING:
    from ragjudge.bench.cxm.search import KbRetrievalBench
    from ragjudge.engine.context import RunContext

LLM_QUERY = "llm"
QUERY_CHOICES = (*QUERY_STRATEGIES, LLM_QUERY)
QUERY_HELP = ("How a conversation becomes a query: last_turn, all_user_turns, full_conversation, or llm (an LLM "
              "writes it with CXMArena's query-formation prompt, as the paper does; needs --rewrite-model). "
              "Default: llm with --rewrite-model, else all_user_turns.")


class ConversationQueryOptions(RetrievalOptions):
    """The retrieval options of the benches that search the KB for a conversation."""

    query: str | None = Field(None, description=QUERY_HELP)
    rewrite_model: str | None = Field(None, description="The LLM (litellm name) that writes queries (-T query=llm).")
    judge_dir: list[str] = Field(default_factory=list, description="Extra folders of prompt specs (cxm_*, e.g. "
                                 "cxm_query_formation).")

    @field_validator("query")
    @classmethod
    def _known_query(cls, value: str | None) -> str | None:
        if value is not None and value not in QUERY_CHOICES:
            raise ValueError(f"unknown strategy {value!r} (available: {', '.join(QUERY_CHOICES)})")
        return value


def query_strategy(options: ConversationQueryOptions, *, scoring_file: bool = False) -> str:
    """The strategy a run uses (`-T query`, else llm with --rewrite-model, else all_user_turns); an LLM strategy
    without its model, or a model without the LLM strategy, is a usage error."""
    strategy = options.query or (LLM_QUERY if options.rewrite_model else "all_user_turns")
    if not scoring_file and strategy == LLM_QUERY and not options.rewrite_model:
        raise UsageError("-T query=llm needs the model that writes queries: --rewrite-model MODEL")
    if strategy != LLM_QUERY and options.rewrite_model:
        raise UsageError(f"--rewrite-model is only used with -T query=llm, not {strategy}")
    return strategy


def query_formation(strategy: str, book: P.PromptBook) -> QueryFormation:
    """What the paper's tables need to know of a run's queries: the strategy, and whether an LLM's are written with
    CXMArena's own prompt (the bundled spec, not one a --judge-dir folder overrides)."""
    if strategy != LLM_QUERY:
        return QueryFormation(strategy)
    used = book.spec(P.QUERY_FORMATION).model_dump(exclude={"source"})
    return QueryFormation(strategy, used == P.PromptBook().spec(P.QUERY_FORMATION).model_dump(exclude={"source"}))


class ConversationSearch:
    """Every conversation's query (LLM ones concurrently, through the gateway and its cache), then one batch search
    of the bench's KB index, `depth` distinct articles deep."""

    def __init__(self, bench: KbRetrievalBench[Any], strategy: str, model: str | None, book: P.PromptBook):
        self.bench = bench
        self.strategy = strategy
        self.model = model
        self.spec = book.spec(P.QUERY_FORMATION) if strategy == LLM_QUERY else None
        self.identity = P.fingerprint_of(self.spec, model) if self.spec else strategy

    def fingerprint(self, depth: int) -> str:
        """Changes with anything that changes a ranking: the pipeline spec (a file edited since is not the same
        system), the chunking, the query strategy (its prompt and model) and the depth."""
        spec = self.bench.spec.model_dump_json()
        return P.fingerprint_of(None, spec, describe_chunking(self.bench.chunking), self.identity, depth)

    async def queries(self, samples: Sequence[RagCase], ctx: RunContext) -> dict[str, Record]:
        if self.spec is None:
            return {c.case_id: {"query": conversation_query(c, self.strategy)} for c in samples}
        model, spec = self.model, self.spec
        assert model
        advance = ctx.bars.bar(f"query formation ({model})", total=len(samples))
        out: dict[str, Record] = {}
        async for case, formed in each_as_completed(samples, lambda c: form_query(ctx.require_gateway(), c, model,
                                                                                  spec)):
            out[case.case_id] = formed
            advance(1)
        return out

    async def rank(self, samples: Sequence[RagCase], ctx: RunContext, depth: int) -> dict[str, Record]:
        """case id → {query_strategy, query (query_raw and usage for LLM ones), ranking, chunk_articles}, or with
        `error` when the query could not be formed."""
        formed = await self.queries(samples, ctx)
        ok = [c for c in samples if not formed[c.case_id].get("error")]
        hits = []
        if ok:
            index = self.bench.open_index(ctx)
            try:
                hits = index.search([formed[c.case_id]["query"] for c in ok], depth)
            finally:
                index.close()
        ranked = dict(zip([c.case_id for c in ok], hits, strict=True))
        out: dict[str, Record] = {}
        for case in samples:
            row: Record = {"query_strategy": self.strategy, **formed[case.case_id]}
            if case.case_id in ranked:
                row["ranking"] = ranked[case.case_id].ranking
                if self.bench.chunking is not None:
                    row["chunk_articles"] = ranked[case.case_id].chunk_articles
            out[case.case_id] = row
        return out

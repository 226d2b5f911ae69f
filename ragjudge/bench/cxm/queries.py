"""Conversation → query → KB articles, the one way `cxm-multiturn-retrieval` (Table 8) and
`cxm-answer-classification` (Table 7) retrieve: the same options, query formation (a strategy without an LLM, or
CXMArena's query-formation prompt through the gateway and its cache) and chunked KB search.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import Field, field_validator

from ragjudge.bench.cxm import prompts as P
from ragjudge.bench.cxm.kb_retrieval import RetrievalOptions
from ragjudge.bench.cxm.models import RagCase, render_conversation
from ragjudge.bench.cxm.references import QueryFormation
from ragjudge.bench.cxm.retrieve import describe_chunking
from ragjudge.bench.cxm.solver import complete, usage
from ragjudge.engine.bench import Record
from ragjudge.engine.parallel import each_as_completed
from ragjudge.errors import UsageError
from ragjudge.judges.spec import JudgeSpec
from ragjudge.llm import LLMGateway

if TYPE_CHECKING:
    from ragjudge.bench.cxm.kb_retrieval import KbRetrievalBench
    from ragjudge.engine.context import RunContext

QUERY_STRATEGIES = ("last_turn", "all_user_turns", "full_conversation")


def conversation_query(case: RagCase, strategy: str = "all_user_turns") -> str:
    """The retrieval query for a conversation: the customer's last message, all customer messages, or all
    messages (the pipelines' strategies without an LLM)."""
    customer = [m.text for m in case.messages if m.speaker == "customer" and m.text.strip()]
    if strategy == "last_turn":
        return customer[-1] if customer else case.messages[-1].text
    if strategy == "all_user_turns":
        return "\n".join(customer) if customer else case.messages[-1].text
    if strategy == "full_conversation":
        return "\n".join(m.text for m in case.messages if m.text.strip())
    raise UsageError(f"unknown query strategy {strategy!r} (available: {', '.join(QUERY_STRATEGIES)})")


def read_query(text: str, spec: JudgeSpec) -> tuple[str | None, str | None]:
    """The search query in a query-formation answer: the whole text (as CXMArena's prompt asks for), or with
    `options.output_key` the value of that key of the answer's JSON. (query, error)."""
    key = spec.options.get("output_key")
    if key:
        from ragjudge.judges.json_parse import candidates

        found = [c[key] for c in candidates(text or "") if isinstance(c, dict) and isinstance(c.get(key), str)]
        value = found[0] if found else None
        if not isinstance(value, str) or not value.strip():
            return None, f"unparsable query: no text under {key!r}; raw: {text[:300]}"
        return value.strip(), None
    query = text.strip().strip("`").strip()
    return (query, None) if query else (None, "empty query from the query-formation model")


async def form_query(gateway: LLMGateway, case: RagCase, model: str, spec: JudgeSpec) -> dict[str, Any]:
    """One conversation → one search query written by an LLM (the paper's multi-turn retrieval step)."""
    variables = {"conversation": case.transcript or render_conversation(case.messages, with_ids=False),
                 "messages": [m.model_dump() for m in case.messages]}
    response = await complete(gateway, model, P.messages(spec, variables), spec.params)
    if isinstance(response, str):
        return {"error": response}
    query, error = read_query(response.text, spec)
    out: dict[str, Any] = {"query_raw": response.text, **usage(response)}
    return {**out, "error": error} if error else {**out, "query": query}


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

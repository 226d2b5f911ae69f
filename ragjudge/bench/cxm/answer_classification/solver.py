"""The replier under test: each turn's articles retrieved as multi-turn retrieval does (`queries.ConversationSearch`),
then the model's reply to the last message from the top `-T k`; without a replier, the data's own replies."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ragjudge.bench.cxm import prompts as P
from ragjudge.bench.cxm.conversation import chat_messages
from ragjudge.bench.cxm.models import Article, RagCase
from ragjudge.bench.cxm.queries import ConversationSearch
from ragjudge.bench.cxm.solver import FileRowsSolver, complete, usage
from ragjudge.engine.bench import EachSolver, Record
from ragjudge.judges.spec import JudgeSpec
from ragjudge.llm import LLMGateway

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext


async def generate_response(gateway: LLMGateway, case: RagCase, retrieved: list[str], articles: dict[str, Article],
                            model: str, spec: JudgeSpec) -> dict[str, Any]:
    """The model's reply to the last message, from the retrieved articles."""
    kb = [{"id": i, "text": articles[i].text} for i in retrieved]
    msgs = P.messages(spec, {"articles": kb}, chat=chat_messages(case.messages))
    response = await complete(gateway, model, msgs, spec.params)
    row: dict[str, Any] = {"case_id": case.case_id, "ranking": retrieved, "model": model}
    if isinstance(response, str):
        return {**row, "error": response}
    return {**row, **usage(response), "response": response.text}


class ReplySolver(EachSolver[RagCase]):
    """The retrieval is redone before each run (LLM queries come from the response cache); a reply is reused only
    for the same articles."""

    def __init__(self, search: ConversationSearch, k: int, articles: dict[str, Article], model: str,
                 book: P.PromptBook):
        self.name = model
        self.model = model
        self.search = search
        self.k = k
        self.articles = articles
        self.spec = book.spec(P.AGENT_RESPONSE)
        self.retrieved: dict[str, Record] = {}

    async def prepare(self, samples: Sequence[RagCase], ctx: RunContext) -> None:
        self.retrieved = await self.search.rank(samples, ctx, self.k)

    def fingerprint(self, sample: RagCase) -> str:
        return P.fingerprint_of(self.spec, self.model, self.retrieved[sample.case_id].get("ranking"))

    def key(self, sample: RagCase) -> str:
        return sample.case_id

    async def solve_one(self, sample: RagCase, ctx: RunContext) -> Record:
        found = self.retrieved[sample.case_id]
        query = {key: found[key] for key in ("query_strategy", "query") if key in found}
        if found.get("error"):
            return {"case_id": sample.case_id, **query, "error": f"query formation: {found['error']}"}
        row = await generate_response(ctx.require_gateway(), sample, found["ranking"], self.articles,
                                      self.model, self.spec)
        return {**row, **query}


class GivenRepliesSolver(FileRowsSolver):
    """The replies the data already holds."""

    name = "data replies"

    def given(self, sample: RagCase) -> tuple[str, Record]:
        return sample.case_id, {"case_id": sample.case_id, "response": sample.response, "ranking": sample.retrieved_ids}

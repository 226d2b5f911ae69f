"""The model under test, offered a set of tools through function calling, calls the ones the conversation needs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragjudge.bench.cxm import prompts as P
from ragjudge.bench.cxm.conversation import chat_messages
from ragjudge.bench.cxm.models import Article, ToolCase, parse_arguments
from ragjudge.bench.cxm.solver import complete, usage
from ragjudge.bench.cxm.tool_calls.data import ToolSample
from ragjudge.engine.bench import EachSolver, Record
from ragjudge.judges.spec import JudgeSpec
from ragjudge.llm import LLMGateway, LLMResponse

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext


def _calls(response: LLMResponse) -> list[dict[str, Any]]:
    out = []
    for call in response.tool_calls:
        parsed = parse_arguments(call.get("arguments"))
        out.append({"name": call.get("name"), "arguments": parsed if parsed is not None else call.get("arguments")})
    return out


async def call_tools(gateway: LLMGateway, case: ToolCase, offered: list[str], catalog: dict[str, dict[str, Any]],
                     model: str, spec: JudgeSpec, kb: list[dict[str, str]], *, forced: bool = False) -> dict[str, Any]:
    """One conversation offered `offered` tools: the tool calls the model makes (tool_choice=required if forced)."""
    params = {**spec.params, "tools": [catalog[n] for n in offered]}
    if forced:
        params["tool_choice"] = "required"
    msgs = P.messages(spec, {"articles": kb}, chat=chat_messages(case.messages))
    response = await complete(gateway, model, msgs, params)
    row: dict[str, Any] = {"case_id": case.case_id, "n_tools": len(offered), "mode": "forced" if forced else "auto",
                           "model": model, "offered": offered}
    if isinstance(response, str):
        return {**row, "error": response}
    return {**row, **usage(response), "tool_calls": _calls(response), "text": response.text}


class ToolSolver(EachSolver[ToolSample]):
    def __init__(self, model: str, catalog: dict[str, dict[str, Any]], articles: dict[str, Article],
                 book: P.PromptBook, forced: bool):
        self.name = model
        self.model = model
        self.catalog = catalog
        self.articles = articles
        self.forced = forced
        self.spec = book.spec(P.TOOL_CALL)

    def fingerprint(self, sample: ToolSample) -> str:
        return P.fingerprint_of(self.spec, self.model, "forced" if self.forced else "auto", sample.offered)

    async def solve_one(self, sample: ToolSample, ctx: RunContext) -> Record:
        kb = [{"id": a.id, "text": a.text} for k in sample.case.kb_ids if (a := self.articles.get(k)) is not None]
        return await call_tools(ctx.require_gateway(), sample.case, sample.offered, self.catalog, self.model,
                                self.spec, kb, forced=self.forced)

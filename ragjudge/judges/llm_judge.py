"""Prompt-template LLM judges (IDK, RB_llm...), alone or as a panel whose median is the score."""

from __future__ import annotations

import asyncio
import statistics
from typing import Any

import jinja2

from ragjudge.formats.samples import Score
from ragjudge.judges.base import Judge, JudgeContext, JudgedItem
from ragjudge.judges.parsing import parse_output
from ragjudge.judges.spec import JudgeSpec
from ragjudge.llm import LLMError
from ragjudge.models import history_of

_ENV = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False)


def template_variables(item: JudgedItem) -> dict[str, Any]:
    """What a judge prompt template can refer to."""
    history = history_of(item.messages)
    return {
        "conversation_lines": "\n".join(f"{t.speaker}: {t.text}" for t in item.messages),
        "previous_conversation": "\n".join(f"{t.speaker}: {t.text}" for t in history),
        "question": item.question,
        "history": [t.model_dump() for t in history],
        "conversation": [t.model_dump() for t in item.messages],
        "reference": item.reference or "",
        "response": item.answer,
        "passages": [p.to_record() for p in item.contexts],
        "item": item,
    }


def render(template: str, variables: dict[str, Any]) -> str:
    return _ENV.from_string(template).render(**variables)


class LLMJudge(Judge):
    needs_llm = True
    chunk_size = 16  # journal often: a crash loses little, and the response cache covers the rest

    def __init__(self, spec: JudgeSpec):
        super().__init__(spec)
        assert spec.prompt is not None and spec.parse is not None
        self._system = _ENV.from_string(spec.prompt.system) if spec.prompt.system else None
        self._user = _ENV.from_string(spec.prompt.user)

    def models(self, ctx: JudgeContext) -> list[str]:
        """A panel judge asks every judge model; a single judge asks the first."""
        return list(ctx.judge_models) if self.spec.panel else list(ctx.judge_models[:1])

    def describe_models(self, ctx: JudgeContext) -> list[str]:
        return self.models(ctx)

    def messages(self, item: JudgedItem) -> list[dict[str, str]]:
        variables = template_variables(item)
        messages = []
        if self._system is not None:
            messages.append({"role": "system", "content": self._system.render(**variables)})
        messages.append({"role": "user", "content": self._user.render(**variables)})
        return messages

    async def _ask(self, model: str, messages: list[dict[str, str]], ctx: JudgeContext) -> Score:
        assert ctx.gateway is not None and self.spec.parse is not None
        retried = False
        while True:
            try:
                response = await ctx.gateway.complete(model, messages, fresh=retried, **self.spec.params)
            except LLMError as exc:
                return self.result(error=str(exc), model=model)
            parsed = parse_output(response.text, self.spec.parse)
            if parsed.error is None:
                break
            # An unreadable answer was paid for: it stays cached, so a rerun reads it again with the parser as it is
            # then (a mended parser mends old runs) and sends nothing; the model is asked again only when told to.
            if not ctx.retry_errors or retried:
                break
            retried = True
        return self.result(
            value=parsed.value, label=parsed.label, error=parsed.error, raw=response.text, rationale=response.text,
            model=model, prompt_tokens=response.prompt_tokens, completion_tokens=response.completion_tokens,
            latency=response.latency, details={"cached": response.cached, **({"asked_again": True} if retried else {})},
        )

    async def _judge_one(self, item: JudgedItem, ctx: JudgeContext) -> Score:
        if (reason := self.not_applicable(item)) is not None:
            return self.result(details={"skipped": reason})
        messages = self.messages(item)
        members = await asyncio.gather(*(self._ask(m, messages, ctx) for m in self.models(ctx)))
        return self._combine(members, ctx.min_panel) if self.spec.panel else members[0]

    def _combine(self, members: list[Score], min_panel: int | None = None) -> Score:
        ok = [m.value for m in members if m.ok]
        needed = min(len(members), min_panel) if min_panel else len(members) // 2 + 1  # default: a majority
        common = dict(members=members, model=",".join(m.model or "" for m in members),
                      prompt_tokens=sum(m.prompt_tokens or 0 for m in members),
                      completion_tokens=sum(m.completion_tokens or 0 for m in members),
                      latency=max((m.latency or 0.0) for m in members),
                      details={"members_ok": len(ok), "members_total": len(members)})
        if len(ok) < needed:
            errors = "; ".join(f"{m.model}: {m.error}" for m in members if not m.ok)
            return self.result(error=f"only {len(ok)} of {len(members)} panel members answered ({errors})", **common)
        agg = statistics.median if self.spec.aggregate == "median" else statistics.fmean
        value = float(agg(ok))  # type: ignore[arg-type]
        rationale = "\n\n".join(f"[{m.model}] {m.rationale}" for m in members if m.rationale)
        return self.result(value=value, label=f"{value:g}", rationale=rationale, **common)

    async def judge(self, items: list[JudgedItem], ctx: JudgeContext) -> list[Score]:
        if ctx.gateway is None or not ctx.judge_models:
            raise RuntimeError(f"judge {self.name!r} needs judge models and an LLM gateway")

        async def run(item: JudgedItem) -> Score:
            result = await self._judge_one(item, ctx)
            ctx.on_progress(1)
            return result

        return list(await asyncio.gather(*(run(item) for item in items)))

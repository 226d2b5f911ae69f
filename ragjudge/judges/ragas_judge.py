"""What every RAGAS-backed judge does the same way: run ragas's metric on one item through the gateway adapter,
and turn what happened into a Score.

A subclass says which ragas metric to build (`metric`), what the item lacks for it (`skip_reason`), and how to
explain a score from ragas's parsed outputs (`explain`). This base turns everything else into the house rules:
- a failed call is an error with the stage it failed in; an answer ragas cannot parse is an error with its raw
  text, taken out of the cache (never reused; `--retry-errors` asks once more at once);
- an item that lacks what the metric needs is not applicable (skipped with the reason), never a 0;
- a NaN from ragas (the judge gave nothing to score) is an error, never a number;
- tokens, latency and the raw answers are the sums and the texts of every call ragas made.

ragas is not imported with these modules: a judge's first run imports it in a background thread
(`judges.loading`) and, meanwhile, sends the item's first requests ahead (`first_prompts`, `ragas_prefetch`), which
ragas's own calls then take.
"""

from __future__ import annotations

import asyncio
import math
from typing import TYPE_CHECKING, Any

from ragjudge.errors import InputError, RagjudgeError
from ragjudge.judges import loading, ragas_prefetch
from ragjudge.judges.base import Judge, JudgeContext, JudgedItem
from ragjudge.judges.ragas_logs import recorded_by_ragjudge
from ragjudge.judges.ragas_prefetch import Prefetched
from ragjudge.judges.spec import JudgeSpec
from ragjudge.llm import LLMError, LLMGateway, LLMResponse
from ragjudge.formats.samples import Score
from ragjudge.models import Turn

if TYPE_CHECKING:  # ragas is imported in the background when a judge first runs (judges.loading)
    from ragjudge.judges.ragas_adapter import SingleTurnMetric, SingleTurnSample
    from ragjudge.judges.ragas_llm import GatewayRagasLLM, RagasTrace

USER_INPUT_MODES = ("auto", "conversation")


def user_input(messages: list[Turn], mode: str = "auto") -> str:
    """ragas's `user_input` for a conversation. A conversation is its turns as "speaker: text" lines, as MTRAG's RL_F
    script writes it; with mode `auto` a task that is one user turn is that question alone, as a RAGAS user
    writes it (answer relevancy compares it with questions generated from the answer)."""
    if mode == "auto" and len(messages) == 1 and messages[0].speaker == "user":
        return messages[0].text
    return "\n".join(f"{t.speaker}: {t.text}" for t in messages)


class RagasJudge(Judge):
    """Base of the judges that run a RAGAS metric (ragas's class, prompts and parsing) on the first judge model."""

    needs_llm = True
    uses_response = True
    """The metric reads the answer: an empty answer is not applicable (ragas would ask about "" and give NaN or
    a number about nothing)."""
    record_errors = False
    """See GatewayRagasLLM: for metrics that catch every exception themselves."""

    def __init__(self, spec: JudgeSpec):
        super().__init__(spec)
        self.format_fix_retries = int(spec.options.get("format_fix_retries", 0))
        if self.format_fix_retries < 0:
            raise InputError("must be 0 or more", file=spec.source, field="options.format_fix_retries")
        self.user_input_mode = str(spec.options.get("user_input", "auto"))
        if self.user_input_mode not in USER_INPUT_MODES:
            raise InputError(f"must be one of {', '.join(USER_INPUT_MODES)}", file=spec.source,
                             field="options.user_input")

    # -- what a subclass says -------------------------------------------------------------------------------------

    def ragas_metric(self, llm: GatewayRagasLLM, item: JudgedItem, ctx: JudgeContext) -> SingleTurnMetric:
        """ragas's metric for this item, its LLM `llm` and its prompts `traced()` into `llm.trace`."""
        raise NotImplementedError

    def skip_reason(self, item: JudgedItem) -> str | None:
        """Why this item cannot be judged, or None."""
        if (reason := self.not_applicable(item)) is not None:
            return reason
        if self.uses_response and not item.answer.strip():
            return "empty response"
        return None

    def nan_reason(self, trace: RagasTrace) -> str:
        """Why ragas returned NaN, in words."""
        return "ragas returned NaN"

    def explain(self, item: JudgedItem, trace: RagasTrace, value: float) -> tuple[str | None, dict[str, Any]]:
        """The rationale and the details (the counts behind the value) from ragas's parsed outputs."""
        return None, {}

    def unreadable(self, trace: RagasTrace) -> tuple[str, LLMResponse] | None:
        """For metrics that read answers themselves (not through a PydanticPrompt): an answer they could not
        read, with the error, or None."""
        return None

    def first_prompts(self, item: JudgedItem) -> list[str]:
        """The prompts ragas sends first for this item, whatever the answers (`ragas_prefetch.render`): sent ahead
        while ragas imports. Only requests ragas is sure to send (a prompt ragas may skip would be paid for
        nothing); [] sends none."""
        return []

    def warm_up(self, ctx: JudgeContext) -> None:
        """Start loading what this judge will need after its first answers (a local model), in the background."""

    def sample(self, item: JudgedItem) -> SingleTurnSample:
        from ragjudge.judges.ragas_adapter import SingleTurnSample

        return SingleTurnSample(
            user_input=user_input(item.messages, self.user_input_mode),
            response=item.answer,
            retrieved_contexts=[p.text for p in item.contexts],
            reference=item.reference,
        )

    def embedding_models(self) -> list[str]:
        return []

    # -- the house rules ------------------------------------------------------------------------------------------

    def describe_models(self, ctx: JudgeContext) -> list[str]:
        return list(ctx.judge_models[:1]) + self.embedding_models()

    async def judge(self, items: list[JudgedItem], ctx: JudgeContext) -> list[Score]:
        if ctx.gateway is None or not ctx.judge_models:
            raise RuntimeError(f"judge {self.name!r} needs judge models and an LLM gateway")
        gateway, model = ctx.gateway, ctx.judge_models[0]

        async def run(item: JudgedItem) -> Score:
            try:
                return await self._judge_one(item, gateway, model, ctx)
            finally:
                ctx.on_progress(1)

        return list(await asyncio.gather(*(run(item) for item in items)))

    def prefetch(self, item: JudgedItem, gateway: LLMGateway, model: str) -> Prefetched | None:
        """The item's first requests, sent now (None: prefetching is off, or there is nothing to send)."""
        if not ragas_prefetch.enabled(gateway) or self.skip_reason(item) is not None:
            return None
        prompts = self.first_prompts(item)
        if not prompts:
            return None
        prefetched = Prefetched(gateway, model, self.spec.params)
        prefetched.send(prompts)
        return prefetched

    async def _judge_one(self, item: JudgedItem, gateway: LLMGateway, model: str, ctx: JudgeContext) -> Score:
        prefetched = self.prefetch(item, gateway, model)
        try:
            if prefetched is not None:
                await prefetched.on_their_way()  # then ragas's import, which would slow their sending
            imported = loading.import_ragas()
            if prefetched is None or not prefetched.answered_from_cache:
                self.warm_up(ctx)  # queued behind ragas's import: loads while the first answers are on their way
            await asyncio.wrap_future(imported)
            result = await self._judge_loaded(item, gateway, model, ctx, prefetched)
        except BaseException:
            if prefetched is not None:
                prefetched.cancel()
            raise
        if prefetched is not None:
            await prefetched.settle()
        return result

    async def _judge_loaded(self, item: JudgedItem, gateway: LLMGateway, model: str, ctx: JudgeContext,
                            prefetched: Prefetched | None) -> Score:
        result, unreadable = await self._score_item(item, gateway, model, ctx, prefetched)
        # An answer ragas could not use was paid for: it stays cached (a rerun re-reads it, sending nothing); with
        # retry_errors it alone is taken out of the cache and asked again.
        if unreadable is not None and ctx.retry_errors:
            gateway.forget(unreadable)
            result, _ = await self._score_item(item, gateway, model, ctx)
            result.details["asked_again"] = True
        return result

    async def _score_item(self, item: JudgedItem, gateway: LLMGateway, model: str, ctx: JudgeContext,
                          prefetched: Prefetched | None = None) -> tuple[Score, LLMResponse | None]:
        """The result, and the answer that could not be read when that is why it failed."""
        from ragjudge.judges.ragas_llm import GatewayRagasLLM, RagasTrace
        from ragjudge.retrieval.encoders import EncodingError

        if (reason := self.skip_reason(item)) is not None:
            return self.result(model=model, details={"skipped": reason}), None

        trace = RagasTrace()
        llm = GatewayRagasLLM(gateway, model, self.spec.params, trace, record_errors=self.record_errors,
                              prefetched=prefetched)
        error: str | None = None
        score: Any = None
        unreadable: LLMResponse | None = None
        try:
            metric = self.ragas_metric(llm, item, ctx)
            with recorded_by_ragjudge():  # its failures are this result's error: not ragas's log lines too
                score = await metric.single_turn_ascore(self.sample(item))
        except LLMError as exc:
            error = f"{trace.stage}: {exc}"
        except EncodingError as exc:  # an embeddings API that failed for good: this item's error
            error = f"embeddings: {exc}"
        except RagjudgeError:  # a provider that cannot be reached, a refused key: the run stops, as for every judge
            raise
        except Exception as exc:  # ragas's parser errors (RagasOutputParserException, OutputParserException...)
            error = f"{trace.stage}: ragas could not use the judge's output ({type(exc).__name__}: {exc})"
            unreadable = trace.calls[-1] if trace.calls else None

        if trace.error is not None:  # recorded, not raised (record_errors): ragas made a NaN or a score of it
            if isinstance(trace.error, RagjudgeError) and not isinstance(trace.error, LLMError):
                raise trace.error  # the run stops (a provider that cannot be reached); a failed call is this item's
            error = f"{trace.stage}: {trace.error}"
        elif error is None and (found := self.unreadable(trace)) is not None:
            error, unreadable = f"{trace.stage}: {found[0]}", found[1]
        common = self._accounting(trace, model)
        if error is None and (not isinstance(score, (int, float)) or math.isnan(score)):
            error = self.nan_reason(trace)
        if error is not None:
            raw = unreadable.text if unreadable is not None else (trace.calls[-1].text if trace.calls else None)
            return self.result(error=error, raw=raw, **common), unreadable

        value = float(score)
        rationale, extra = self.explain(item, trace, value)
        details = {**common.pop("details"), **extra}
        raw = "\n\n".join(call.text for call in trace.calls) or None
        return self.result(value=value, label=f"{value:.4f}", rationale=rationale, raw=raw, details=details,
                           **common), None

    @staticmethod
    def _accounting(trace: RagasTrace, model: str) -> dict[str, Any]:
        calls = trace.calls
        return {
            "model": model,
            "prompt_tokens": sum(c.prompt_tokens for c in calls),
            "completion_tokens": sum(c.completion_tokens for c in calls),
            "latency": sum(c.latency for c in calls),
            "details": {"cached": bool(calls) and all(c.cached for c in calls), "llm_calls": len(calls)},
        }

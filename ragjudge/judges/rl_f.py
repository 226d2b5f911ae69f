"""RL_F: RAGAS faithfulness of the response to the passages, computed by the ragas library itself.

MTRAG's RL_F is `ragas.metrics.faithfulness` (the single-turn metric that `ragas.evaluate` runs):
an LLM breaks the response into statements, a second LLM call judges each statement against the
joined passages (NLI), and the score is supported statements / statements. We run exactly that
metric (`ragas.metrics._faithfulness.Faithfulness`, the class behind `ragas.metrics.Faithfulness`)
with its own prompts and its own output parsing; the only thing we supply is the LLM: a small
`BaseRagasLLM` adapter that sends ragas's prompt text to `LLMGateway` (cache, retries, accounting,
temperature 0) instead of a LangChain model.

Why the legacy metric and not `ragas.metrics.collections.Faithfulness`: the collections metric only
accepts an instructor-style LLM that must return already-parsed pydantic objects, i.e. we would
parse the judge's JSON ourselves; its prompts also differ slightly from the ones MTRAG scored with
(ragas 0.3's, which the legacy metric still carries word for word).

ragas quirks this module neutralises (see also judges/rl_f.yaml):
- `BaseRagasLLM.generate` wraps every call in tenacity retries (10 attempts on *any* exception by
  default). Retrying is the gateway's job, so the adapter runs with one attempt and no retryable
  exception types: an `LLMError` reaches us after the gateway's own retries, once.
- On unparsable output ragas's `PydanticPrompt.generate` silently asks the LLM to "fix the output
  string" (a hidden extra call, up to 3 levels deep). Option `format_fix_retries` (default 0) sets
  how many such repair calls ragas may make; with 0 an unparsable answer is one call and an error.
  Any repair calls that do happen go through the gateway too and are counted in the item's tokens.
- ragas asks for temperature 0.01; we ignore it and let the gateway use its default (0) or the
  spec's `params`.
- ragas sends usage telemetry unless RAGAS_DO_NOT_TRACK=true; we default it to true before ragas
  is imported (an explicit user setting wins). ragas still writes an anonymous user id file under
  the user data dir when it builds its (unsent) usage events.
"""

from __future__ import annotations

import asyncio
import math
import os
from dataclasses import dataclass, field
from typing import Any

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")  # before ragas is imported: no telemetry

from langchain_core.outputs import Generation, LLMResult  # noqa: E402
from langchain_core.prompt_values import PromptValue, StringPromptValue  # noqa: E402
from ragas.dataset_schema import SingleTurnSample  # noqa: E402
from ragas.llms.base import BaseRagasLLM  # noqa: E402
from ragas.metrics._faithfulness import (  # noqa: E402
    Faithfulness,
    NLIStatementOutput,
    NLIStatementPrompt,
    StatementGeneratorOutput,
    StatementGeneratorPrompt,
)
from ragas.run_config import RunConfig  # noqa: E402
from ragas.utils import camel_to_snake  # noqa: E402

from ragjudge.errors import InputError, RagjudgeError  # noqa: E402
from ragjudge.judges.base import Judge, JudgeContext, JudgeItem  # noqa: E402
from ragjudge.judges.spec import JudgeSpec  # noqa: E402
from ragjudge.llm import LLMError, LLMGateway, LLMResponse  # noqa: E402
from ragjudge.models import JudgeResult  # noqa: E402

_ROLES = {"human": "user", "ai": "assistant", "system": "system"}


@dataclass
class _Trace:
    """What happened while ragas scored one item: every gateway call, the stage, the parsed outputs."""

    calls: list[LLMResponse] = field(default_factory=list)
    stage: str = ""
    outputs: dict[str, Any] = field(default_factory=dict)


def _no_retry(run_config: RunConfig | None = None) -> RunConfig:
    """ragas's RunConfig with its tenacity retries off: one attempt, no exception type retried."""
    timeout = run_config.timeout if run_config is not None else RunConfig().timeout
    return RunConfig(timeout=timeout, max_retries=1, exception_types=())


class GatewayRagasLLM(BaseRagasLLM):
    """ragas's LLM interface over `LLMGateway`: each ragas prompt becomes one chat completion."""

    def __init__(self, gateway: LLMGateway, model: str, params: dict[str, Any] | None = None,
                 trace: _Trace | None = None):
        super().__init__(run_config=_no_retry())
        self.gateway = gateway
        self.model = model
        self.params = dict(params or {})
        self.trace = trace if trace is not None else _Trace()

    def set_run_config(self, run_config: RunConfig) -> None:
        # ragas.evaluate() calls this with its own RunConfig (10 retries on any exception): keep ours.
        self.run_config = _no_retry(run_config)

    @staticmethod
    def messages(prompt: PromptValue) -> list[dict[str, str]]:
        if isinstance(prompt, StringPromptValue):  # what every ragas PydanticPrompt sends
            return [{"role": "user", "content": prompt.to_string()}]
        return [{"role": _ROLES.get(m.type, "user"), "content": m.text()} for m in prompt.to_messages()]

    def generate_text(self, prompt: PromptValue, n: int = 1, temperature: float | None = 0.01,
                      stop: list[str] | None = None, callbacks: Any = None) -> LLMResult:
        raise NotImplementedError("GatewayRagasLLM is async only: use ragas's async scoring API")

    async def agenerate_text(self, prompt: PromptValue, n: int = 1, temperature: float | None = 0.01,
                             stop: list[str] | None = None, callbacks: Any = None) -> LLMResult:
        # `temperature` is deliberately ignored: the gateway's default (0) or the spec's params apply.
        params = {**self.params, **({"stop": stop} if stop else {})}
        messages = self.messages(prompt)
        generations = []
        for _ in range(n):  # faithfulness always asks for n=1
            response = await self.gateway.complete(self.model, messages, **params)
            self.trace.calls.append(response)
            generations.append(Generation(text=response.text))
        return LLMResult(generations=[generations])

    def is_finished(self, response: LLMResult) -> bool:
        return True  # the gateway does not report finish reasons; a truncated JSON fails to parse instead


class _TracedPrompt:
    """Mixin for ragas's own prompt classes: same text, records the parsed output and caps repairs."""

    stage: str
    base: type

    def __init__(self, trace: _Trace, format_fix_retries: int):
        super().__init__()  # type: ignore[call-arg]
        self.name = camel_to_snake(self.base.__name__)  # ragas's prompt name, not this subclass's
        self.trace = trace
        self.format_fix_retries = format_fix_retries

    async def generate(self, llm: Any, data: Any, temperature: float | None = None, stop: list[str] | None = None,
                       callbacks: Any = None, retries_left: int = 3) -> Any:
        self.trace.stage = self.stage
        output = await super().generate(  # type: ignore[misc]
            llm=llm, data=data, temperature=temperature, stop=stop, callbacks=callbacks,
            retries_left=self.format_fix_retries,
        )
        self.trace.outputs[self.stage] = output
        return output


class _StatementPrompt(_TracedPrompt, StatementGeneratorPrompt):
    stage = "statements"
    base = StatementGeneratorPrompt


class _NLIPrompt(_TracedPrompt, NLIStatementPrompt):
    stage = "verdicts"
    base = NLIStatementPrompt


class RLFJudge(Judge):
    """RAGAS faithfulness (MTRAG's RL_F) by ragas's Faithfulness metric, every LLM call via the gateway."""

    needs_llm = True

    def __init__(self, spec: JudgeSpec):
        super().__init__(spec)
        self.format_fix_retries = int(spec.options.get("format_fix_retries", 0))
        if self.format_fix_retries < 0:
            raise InputError("must be 0 or more", file=spec.source, field="options.format_fix_retries")

    def describe_models(self, ctx: JudgeContext) -> list[str]:
        return list(ctx.judge_models[:1])

    def metric_for(self, llm: GatewayRagasLLM) -> Faithfulness:
        """ragas's metric with ragas's prompts; one per item so each item's calls are traced apart."""
        return Faithfulness(
            llm=llm,
            statement_generator_prompt=_StatementPrompt(llm.trace, self.format_fix_retries),
            nli_statements_prompt=_NLIPrompt(llm.trace, self.format_fix_retries),
        )

    async def judge(self, items: list[JudgeItem], ctx: JudgeContext) -> list[JudgeResult]:
        if ctx.gateway is None or not ctx.judge_models:
            raise RuntimeError(f"judge {self.name!r} needs judge models and an LLM gateway")
        gateway, model = ctx.gateway, ctx.judge_models[0]

        async def run(item: JudgeItem) -> JudgeResult:
            try:
                return await self._judge_one(item, gateway, model, ctx.retry_errors)
            finally:
                ctx.on_progress(1)

        return list(await asyncio.gather(*(run(item) for item in items)))

    async def _judge_one(self, item: JudgeItem, gateway: LLMGateway, model: str,
                         retry_errors: bool = False) -> JudgeResult:
        result, unreadable = await self._score_item(item, gateway, model)
        if unreadable is not None:
            gateway.forget(unreadable)  # an answer ragas could not use is never reused from the cache
            if retry_errors:
                result, unreadable = await self._score_item(item, gateway, model)
                if unreadable is not None:
                    gateway.forget(unreadable)
                result.details["asked_again"] = True
        return result

    async def _score_item(self, item: JudgeItem, gateway: LLMGateway, model: str
                          ) -> tuple[JudgeResult, LLMResponse | None]:
        """The result, and the answer ragas could not parse when that is why it failed."""
        if (reason := self.not_applicable(item)) is not None:  # no passages: nothing to be faithful to
            return self.result(model=model, details={"skipped": reason}), None
        if not item.prediction.text.strip():
            # ragas would still ask the LLM to extract statements from "", get none and return NaN,
            # which pandas-based aggregation (MTRAG's) then leaves out. Faithfulness of no answer is
            # undefined rather than a judge failure, so we skip it — without paying for the call.
            return self.result(model=model, details={"skipped": "empty response"}), None

        trace = _Trace()
        llm = GatewayRagasLLM(gateway, model, self.spec.params, trace)
        sample = SingleTurnSample(
            # As the benchmark's script: the question is the whole conversation as "speaker: text" lines.
            user_input="\n".join(f"{t.speaker}: {t.text}" for t in item.task.input),
            response=item.prediction.text,
            retrieved_contexts=[p.text for p in item.passages],
        )
        error: str | None = None
        score: float | None = None
        unreadable: LLMResponse | None = None
        try:
            score = await self.metric_for(llm).single_turn_ascore(sample)
        except LLMError as exc:
            error = f"{trace.stage}: {exc}"
        except RagjudgeError:  # a provider that cannot be reached, a refused key: the run stops, as for every judge
            raise
        except Exception as exc:  # ragas's parser errors (RagasOutputParserException, OutputParserException...)
            error = f"{trace.stage}: ragas could not use the judge's output ({type(exc).__name__}: {exc})"
            unreadable = trace.calls[-1] if trace.calls else None

        common = self._accounting(trace, model)
        if error is None and (score is None or not isinstance(score, (int, float)) or math.isnan(score)):
            # ragas returns NaN when no statement could be extracted from a non-empty response (or the
            # NLI answer judged none): the judge gave us nothing to average, which is an error, not a 0.
            error = "ragas returned NaN: no statements were extracted from the response"
        if error is not None:
            raw = trace.calls[-1].text if trace.calls else None  # the answer that failed, if any
            return self.result(error=error, raw=raw, **common), unreadable

        assert score is not None
        value = float(score)
        verdicts = trace.outputs.get("verdicts")
        statements = trace.outputs.get("statements")
        details = dict(common.pop("details"))
        rationale = None
        if isinstance(verdicts, NLIStatementOutput):
            details["statements"] = len(verdicts.statements)
            details["supported"] = sum(1 for v in verdicts.statements if v.verdict)
            rationale = "\n".join(f"[{v.verdict}] {v.statement} — {v.reason}" for v in verdicts.statements)
        if isinstance(statements, StatementGeneratorOutput):
            details["extracted_statements"] = len(statements.statements)
        raw = "\n\n".join(call.text for call in trace.calls)
        return self.result(value=value, label=f"{value:.4f}", rationale=rationale, raw=raw, details=details,
                           **common), None

    @staticmethod
    def _accounting(trace: _Trace, model: str) -> dict[str, Any]:
        calls = trace.calls
        return {
            "model": model,
            "prompt_tokens": sum(c.prompt_tokens for c in calls),
            "completion_tokens": sum(c.completion_tokens for c in calls),
            "latency": sum(c.latency for c in calls),
            "details": {"cached": bool(calls) and all(c.cached for c in calls), "llm_calls": len(calls)},
        }

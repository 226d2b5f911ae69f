"""ragas's LLM interface over ragjudge's `LLMGateway`, for every judge that runs a RAGAS metric.

RAGAS-backed judges run ragas's own metric classes with ragas's own prompts and output parsing; the only thing
ragjudge supplies is the LLM: `GatewayRagasLLM` sends each ragas prompt to the gateway (cache, pacing, retries,
accounting, temperature 0) instead of a LangChain model, and records every call in a `RagasTrace` so a judge can
report tokens, latency, the raw answers and what ragas parsed from them.

ragas quirks neutralised here (each judge's module and docs/judges.md say which apply to it):
- `BaseRagasLLM.generate` wraps every call in tenacity retries (10 attempts on *any* exception by default).
  Retrying is the gateway's job, so the adapter runs with one attempt and no retryable exception types (also
  after `ragas.evaluate`-style `set_run_config`): an `LLMError` reaches the judge after the gateway's own retries.
- On unparsable output ragas's `PydanticPrompt` silently asks the LLM to "fix the output string" (a hidden extra
  call, up to 3 levels deep). `traced()` prompts allow `format_fix_retries` such repair calls (the judges' option,
  default 0: an unparsable answer is one call and an error); any that happen go through the gateway and are counted.
- ragas asks for temperature 0.01 (0.3 when it wants several samples); the adapter ignores it: the gateway's
  default (0) or the spec's `params` apply.
- ragas asks for `n` completions of one prompt where it wants several samples (ResponseRelevancy's `strictness`).
  At temperature 0 they would be one answer, so judges ask for one sample; the adapter answers `n` with one
  generation per gateway call, which at temperature 0 the cache answers after the first.
- ragas sends usage telemetry unless RAGAS_DO_NOT_TRACK=true: `ragas_adapter` defaults it to true.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

from langchain_core.outputs import Generation, LLMResult  # noqa: E402
from langchain_core.prompt_values import PromptValue, StringPromptValue  # noqa: E402
from ragjudge.judges.ragas_adapter import BaseRagasLLM, camel_to_snake, PydanticPrompt, RunConfig  # noqa: E402

from ragjudge.llm import LLMGateway, LLMResponse  # noqa: E402

if TYPE_CHECKING:
    from ragjudge.judges.ragas_prefetch import Prefetched

_ROLES = {"human": "user", "ai": "assistant", "system": "system"}


@dataclass
class RagasTrace:
    """What happened while ragas scored one item: every gateway call, the current stage, the parsed outputs."""

    calls: list[LLMResponse] = field(default_factory=list)
    stage: str = ""
    outputs: dict[str, list[Any]] = field(default_factory=dict)
    """Per stage, every output ragas parsed, in call order (a stage asked once per context has one per context)."""
    error: BaseException | None = None
    """With `record_errors`: the first failed call, which ragas's own error handling must not turn into a score."""

    def output(self, stage: str) -> Any:
        """The last output of `stage`, or None."""
        found = self.outputs.get(stage)
        return found[-1] if found else None


def no_retry(run_config: RunConfig | None = None) -> RunConfig:
    """ragas's RunConfig with its tenacity retries off: one attempt, no exception type retried."""
    timeout = run_config.timeout if run_config is not None else RunConfig().timeout
    return RunConfig(timeout=timeout, max_retries=1, exception_types=())


class GatewayRagasLLM(BaseRagasLLM):
    """ragas's LLM interface over `LLMGateway`: each ragas prompt becomes one chat completion.

    `record_errors`: a failed call is recorded in the trace and answered with an empty text instead of raised, for
    ragas metrics that catch every exception themselves and print it (ContextRelevance): the judge then reports the
    recorded error rather than the NaN ragas makes of it. `prefetched`: requests sent ahead for this item
    (`ragas_prefetch`): a call for the same messages takes its answer instead of asking again."""

    def __init__(self, gateway: LLMGateway, model: str, params: dict[str, Any] | None = None,
                 trace: RagasTrace | None = None, *, record_errors: bool = False,
                 prefetched: Prefetched | None = None):
        super().__init__(run_config=no_retry())
        self.gateway = gateway
        self.model = model
        self.params = dict(params or {})
        self.trace = trace if trace is not None else RagasTrace()
        self.record_errors = record_errors
        self.prefetched = prefetched

    def set_run_config(self, run_config: RunConfig) -> None:
        # ragas.evaluate() and metric.init() call this with their own RunConfig (10 retries on any exception).
        self.run_config = no_retry(run_config)

    @staticmethod
    def messages(prompt: PromptValue) -> list[dict[str, str]]:
        if isinstance(prompt, StringPromptValue):  # what every ragas prompt sends
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
        for _ in range(n):  # judges ask for n=1; at temperature 0 more would be cache hits of the first
            if self.trace.error is not None:  # recorded already: the item is an error, ask nothing more
                generations.append(Generation(text=""))
                continue
            try:
                sent = self.prefetched.take(self.model, messages, params) if self.prefetched is not None else None
                response = await (sent if sent is not None else self.gateway.complete(self.model, messages, **params))
            except Exception as exc:
                if not self.record_errors:
                    raise
                if self.trace.error is None:
                    self.trace.error = exc
                generations.append(Generation(text=""))
                continue
            self.trace.calls.append(response)
            generations.append(Generation(text=response.text))
        return LLMResult(generations=[generations])

    def is_finished(self, response: LLMResult) -> bool:
        return True  # the gateway does not report finish reasons; a truncated JSON fails to parse instead


_SIGNATURES: dict[tuple[type, type, int], str] = {}
"""ragas's output-format text by (prompt class, output model, indent): a pure function of them, kept per process."""


class _TracedPrompt:
    """Mixin for ragas's own prompt classes: the same text and parsing; records the stage and the parsed outputs,
    and caps ragas's hidden "fix the output" repair calls."""

    base: type[PydanticPrompt]

    def __init__(self, stage: str, trace: RagasTrace, format_fix_retries: int):
        super().__init__()  # type: ignore[call-arg]
        self.name = camel_to_snake(self.base.__name__)  # ragas's prompt name, not this subclass's
        self.stage = stage
        self.trace = trace
        self.format_fix_retries = format_fix_retries

    def _generate_output_signature(self, indent: int = 4) -> str:
        """ragas's text, made once per output model: ragas builds the model's JSON schema anew for every request
        (a fifth of a judge run's CPU in the event loop)."""
        key = (self.base, self.output_model, indent)  # type: ignore[attr-defined]
        if key not in _SIGNATURES:
            _SIGNATURES[key] = super()._generate_output_signature(indent)  # type: ignore[misc]
        return _SIGNATURES[key]

    async def generate_multiple(self, llm: Any, data: Any, n: int = 1, temperature: float | None = None,
                                stop: list[str] | None = None, callbacks: Any = None, retries_left: int = 3
                                ) -> list[Any]:
        self.trace.stage = self.stage
        outputs = await super().generate_multiple(  # type: ignore[misc]
            llm=llm, data=data, n=n, temperature=temperature, stop=stop, callbacks=callbacks,
            retries_left=self.format_fix_retries,
        )
        self.trace.outputs.setdefault(self.stage, []).extend(outputs)
        return outputs


@cache
def _traced_class(base: type[PydanticPrompt]) -> type:
    return type(f"Traced{base.__name__}", (_TracedPrompt, base), {"base": base})


def traced(base: type[PydanticPrompt], stage: str, trace: RagasTrace, format_fix_retries: int) -> Any:
    """An instance of ragas's prompt class `base` (same instruction, examples, parsing) that records its outputs
    under `stage` in `trace` and makes at most `format_fix_retries` repair calls."""
    return _traced_class(base)(stage, trace, format_fix_retries)

"""Async LLM calls with a concurrency limit, retries, a persistent cache and usage accounting.

Retries are ours (litellm's are turned off) so that we can honour Retry-After, add jitter, and
count retries per model. A response is cached only once it arrived whole; a cached response is
returned without touching the network, which is what makes reruns and resumes free.
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass, field
from typing import Any

from ragjudge.errors import UsageError
from ragjudge.llm._litellm import litellm
from ragjudge.llm.cache import ResponseCache, cache_key
from ragjudge.llm.redact import redact
from ragjudge.llm.usage import UsageTracker

DEFAULT_TEMPERATURE = 0.0


class LLMError(Exception):
    """A call that failed for good (after retries, or at once for errors retrying cannot fix)."""


@dataclass
class LLMResponse:
    text: str
    model: str
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    latency: float = 0.0
    cached: bool = False


def _status(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def _retry_after(exc: BaseException) -> float | None:
    headers: Any = getattr(exc, "litellm_response_headers", None) or getattr(exc, "headers", None)
    response = getattr(exc, "response", None)
    if not headers and response is not None:
        headers = getattr(response, "headers", None)
    if not headers:
        return None
    try:
        value = headers.get("retry-after") or headers.get("Retry-After")
        return float(value) if value is not None else None
    except (TypeError, ValueError, AttributeError):
        return None


def is_retryable(exc: BaseException) -> bool:
    """429, 5xx, timeouts, dropped connections and garbled bodies are worth another try; 4xx are not."""
    ll = litellm()
    if isinstance(exc, (ll.AuthenticationError, ll.PermissionDeniedError, ll.NotFoundError,
                        ll.ContextWindowExceededError, ll.ContentPolicyViolationError, ll.UnsupportedParamsError)):
        return False
    if isinstance(exc, (ll.RateLimitError, ll.Timeout, ll.APIConnectionError, ll.InternalServerError,
                        ll.ServiceUnavailableError, ll.BadGatewayError, asyncio.TimeoutError)):
        return True
    status = _status(exc)
    if status is not None:
        return status == 429 or status >= 500
    # Garbled bodies surface as APIError/APIResponseValidationError or plain decode errors.
    return isinstance(exc, (ll.APIError, ll.APIResponseValidationError, ValueError))


def validate_model(model: str, api_base: str | None = None) -> None:
    """Fail before any work if litellm cannot tell which provider serves `model`."""
    try:
        litellm().get_llm_provider(model=model, api_base=api_base)
    except Exception as exc:  # litellm raises BadRequestError with a long message
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UsageError(f"unknown model {model!r}: litellm cannot tell its provider "
                         f"(use a provider prefix such as openai/, anthropic/, watsonx/, hosted_vllm/, ollama/). "
                         f"{redact(first)[:200]}") from None


class LLMGateway:
    """The single door to LLM providers. Create one per run and share it between generator and judges."""

    def __init__(
        self,
        *,
        cache: ResponseCache | None = None,
        concurrency: int = 8,
        max_retries: int = 6,
        timeout: float = 120.0,
        backoff_base: float = 1.0,
        backoff_max: float = 60.0,
        api_base: str | None = None,
        api_key: str | None = None,
        default_params: dict[str, Any] | None = None,
    ):
        self.cache = cache
        self.concurrency = concurrency
        self.max_retries = max_retries
        self.timeout = timeout
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.api_base = api_base
        self._api_key = api_key
        self.default_params = {"temperature": DEFAULT_TEMPERATURE, **(default_params or {})}
        self.usage = UsageTracker()
        self.requests_sent = 0
        self._semaphore: asyncio.Semaphore | None = None
        self._sem_loop: asyncio.AbstractEventLoop | None = None

    def _sem(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if self._semaphore is None or self._sem_loop is not loop:
            self._semaphore, self._sem_loop = asyncio.Semaphore(self.concurrency), loop
        return self._semaphore

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None and retry_after >= 0:
            return min(retry_after, self.backoff_max) + random.uniform(0, 0.1 * self.backoff_base)
        delay = min(self.backoff_max, self.backoff_base * (2**attempt))
        return delay / 2 + random.uniform(0, delay / 2)  # "equal jitter": never zero, never in lockstep

    async def complete(self, model: str, messages: list[dict[str, Any]], **params: Any) -> LLMResponse:
        """Chat completion with cache, retries and accounting. Raises LLMError when it finally fails."""
        call_params = {**self.default_params, **params}
        if self.api_base and "api_base" not in call_params:
            call_params["api_base"] = self.api_base
        key = cache_key(model, messages, call_params)
        usage = self.usage.model(model)
        if self.cache is not None and (hit := self.cache.get(key)) is not None:
            usage.cached += 1
            return LLMResponse(**{**hit, "cached": True, "latency": 0.0})

        ll = litellm()
        secret_args = {"api_key": self._api_key} if self._api_key else {}
        last_error: BaseException | None = None
        for attempt in range(self.max_retries + 1):
            started = time.perf_counter()
            try:
                async with self._sem():
                    self.requests_sent += 1
                    raw = await ll.acompletion(model=model, messages=messages, timeout=self.timeout,
                                               num_retries=0, **call_params, **secret_args)
                response = self._parse(raw, model, time.perf_counter() - started)
            except Exception as exc:  # classified below; anything unexpected is not retried
                last_error = exc
                if attempt < self.max_retries and is_retryable(exc):
                    usage.retries += 1
                    await asyncio.sleep(self._backoff(attempt, _retry_after(exc)))
                    continue
                usage.failures += 1
                raise LLMError(self._describe(exc, model, attempt)) from None
            usage.calls += 1
            usage.prompt_tokens += response.prompt_tokens
            usage.completion_tokens += response.completion_tokens
            usage.cost += response.cost
            if self.cache is not None:
                payload = {k: v for k, v in vars(response).items() if k not in ("cached", "latency")}
                self.cache.put(key, model, payload)
            return response
        raise LLMError(self._describe(last_error, model, self.max_retries))  # pragma: no cover - loop always returns

    def _parse(self, raw: Any, model: str, latency: float) -> LLMResponse:
        choice = raw.choices[0]
        message = choice.message
        text = message.content or ""
        tool_calls = []
        for call in getattr(message, "tool_calls", None) or []:
            tool_calls.append({"name": call.function.name, "arguments": call.function.arguments})
        if not isinstance(text, str):
            raise ValueError(f"response content is not text: {type(text).__name__}")
        usage = getattr(raw, "usage", None)
        try:
            cost = float(litellm().completion_cost(completion_response=raw) or 0.0)
        except Exception:  # unknown price (local and test models): cost is not known, count 0
            cost = 0.0
        return LLMResponse(
            text=text,
            model=model,
            tool_calls=tool_calls,
            prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
            cost=cost,
            latency=latency,
        )

    def _describe(self, exc: BaseException | None, model: str, attempt: int) -> str:
        status = _status(exc) if exc else None
        message = str(exc).strip().splitlines()[0] if exc and str(exc).strip() else type(exc).__name__
        tries = f" after {attempt + 1} attempts" if attempt else ""
        code = f" (HTTP {status})" if status else ""
        return redact(f"{model}: {type(exc).__name__}{code}{tries}: {message}"[:500], (self._api_key or "",))

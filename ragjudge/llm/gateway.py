"""Async LLM calls with a concurrency limit, retries, a persistent cache and usage accounting.

Retries are ours (litellm's are turned off) so that we can honour Retry-After, add jitter, and
count retries per model. A response is cached only once it arrived whole; a cached response is
returned without touching the network, which is what makes reruns and resumes free. Chat completions
and embeddings share one retry loop (`LLMGateway._call`).
"""

from __future__ import annotations

import asyncio
import base64
import random
import struct
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ragjudge.errors import UsageError
from ragjudge.llm._litellm import litellm
from ragjudge.llm.cache import ResponseCache, cache_key
from ragjudge.llm.redact import redact
from ragjudge.llm.usage import UsageTracker

DEFAULT_TEMPERATURE = 0.0

T = TypeVar("T")


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


@dataclass
class EmbeddingResponse:
    vectors: list[list[float]]
    """One vector per input text, in input order."""
    model: str
    prompt_tokens: int = 0
    """Tokens billed by this call (cached texts cost nothing)."""
    cost: float = 0.0
    latency: float = 0.0
    cached: int = 0
    """How many of the texts were answered from the cache."""


class _TruthyZero(int):
    """0 that is truthy. litellm's OpenAI/Azure embedding route does `max_retries or DEFAULT_MAX_RETRIES`
    (BerriAI/litellm#7003), so a plain 0 would leave the SDK retrying twice more inside each of our attempts."""

    def __bool__(self) -> bool:
        return True


_SDK_NO_RETRIES = _TruthyZero(0)


def _pack(vector: list[float]) -> str:
    """float64 little-endian, base64: exact round trip at about half the size of JSON numbers."""
    return base64.b64encode(struct.pack(f"<{len(vector)}d", *vector)).decode("ascii")


def _unpack(blob: str) -> list[float]:
    raw = base64.b64decode(blob)
    return list(struct.unpack(f"<{len(raw) // 8}d", raw))


def _cost(raw: Any) -> float:
    try:
        return float(litellm().completion_cost(completion_response=raw) or 0.0)
    except Exception:  # unknown price (local and test models): cost is not known, count 0
        return 0.0


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
        response = await self._call(
            model,
            lambda: ll.acompletion(model=model, messages=messages, timeout=self.timeout, num_retries=0,
                                   **call_params, **secret_args),
            lambda raw, latency: self._parse(raw, model, latency),
        )
        usage.prompt_tokens += response.prompt_tokens
        usage.completion_tokens += response.completion_tokens
        usage.cost += response.cost
        if self.cache is not None:
            payload = {k: v for k, v in vars(response).items() if k not in ("cached", "latency")}
            self.cache.put(key, model, payload)
        return response

    async def embed(self, model: str, texts: list[str], **params: Any) -> EmbeddingResponse:
        """Embeddings of `texts`, in order. Raises LLMError when it finally fails.

        Each text is cached on its own under (model, text, params), so re-embedding known texts is free
        and only the texts missing from the cache are sent, deduplicated, in ONE request (callers batch).
        `api_key` in `params` overrides the gateway's key for this call; like it, it is never cached or shown.
        """
        call_params = dict(params)
        api_key = call_params.pop("api_key", None) or self._api_key
        if self.api_base and "api_base" not in call_params:
            call_params["api_base"] = self.api_base
        key_params = {**call_params, "endpoint": "embeddings"}  # never equal to a chat key
        keys = [cache_key(model, [{"input": text}], key_params) for text in texts]
        found: dict[str, list[float]] = {}
        if self.cache is not None:
            for key in dict.fromkeys(keys):
                if (hit := self.cache.get(key)) is not None:
                    found[key] = _unpack(hit["vector"])
        missing = {key: text for key, text in zip(keys, texts, strict=True) if key not in found}
        usage = self.usage.model(model)
        result = EmbeddingResponse(vectors=[], model=model, cached=sum(key in found for key in keys))
        usage.cached += result.cached
        if missing:
            ll = litellm()
            inputs = list(missing.values())
            secret_args = {"api_key": api_key} if api_key else {}
            fresh = await self._call(
                model,
                lambda: ll.aembedding(model=model, input=inputs, timeout=self.timeout, num_retries=0,
                                      max_retries=_SDK_NO_RETRIES, **call_params, **secret_args),
                lambda raw, latency: self._parse_embeddings(raw, model, len(inputs), latency),
                secret=api_key,
            )
            usage.prompt_tokens += fresh.prompt_tokens
            usage.cost += fresh.cost
            result.prompt_tokens, result.cost, result.latency = fresh.prompt_tokens, fresh.cost, fresh.latency
            for key, vector in zip(missing, fresh.vectors, strict=True):
                found[key] = vector
                if self.cache is not None:
                    self.cache.put(key, model, {"vector": _pack(vector)})
        result.vectors = [found[key] for key in keys]
        return result

    async def _call(self, model: str, send: Callable[[], Awaitable[Any]], parse: Callable[[Any, float], T], *,
                    secret: str | None = None) -> T:
        """The one retry loop: `send()` under the concurrency limit, then `parse(raw, latency)`; retryable
        failures (a parse error included) wait with backoff and try again. Counts calls, retries, failures."""
        usage = self.usage.model(model)
        last_error: BaseException | None = None
        for attempt in range(self.max_retries + 1):
            started = time.perf_counter()
            try:
                async with self._sem():
                    self.requests_sent += 1
                    raw = await send()
                result = parse(raw, time.perf_counter() - started)
            except Exception as exc:  # classified below; anything unexpected is not retried
                last_error = exc
                if attempt < self.max_retries and is_retryable(exc):
                    usage.retries += 1
                    await asyncio.sleep(self._backoff(attempt, _retry_after(exc)))
                    continue
                usage.failures += 1
                raise LLMError(self._describe(exc, model, attempt, secret)) from None
            usage.calls += 1
            return result
        raise LLMError(self._describe(last_error, model, self.max_retries, secret))  # pragma: no cover

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
        return LLMResponse(
            text=text,
            model=model,
            tool_calls=tool_calls,
            prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
            cost=_cost(raw),
            latency=latency,
        )

    @staticmethod
    def _parse_embeddings(raw: Any, model: str, expected: int, latency: float) -> EmbeddingResponse:
        data = sorted(raw.data, key=lambda d: d["index"] if isinstance(d, dict) else d.index)
        vectors = [list(map(float, d["embedding"] if isinstance(d, dict) else d.embedding)) for d in data]
        if len(vectors) != expected:
            raise ValueError(f"asked for {expected} embeddings, got {len(vectors)}")
        usage = getattr(raw, "usage", None)
        return EmbeddingResponse(vectors=vectors, model=model, cost=_cost(raw), latency=latency,
                                 prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0))

    def _describe(self, exc: BaseException | None, model: str, attempt: int, secret: str | None = None) -> str:
        status = _status(exc) if exc else None
        message = str(exc).strip().splitlines()[0] if exc and str(exc).strip() else type(exc).__name__
        tries = f" after {attempt + 1} attempts" if attempt else ""
        code = f" (HTTP {status})" if status else ""
        return redact(f"{model}: {type(exc).__name__}{code}{tries}: {message}"[:500],
                      (self._api_key or "", secret or ""))

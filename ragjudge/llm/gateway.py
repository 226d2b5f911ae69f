"""Async LLM calls: routed per model, paced per endpoint, retried by time, cached, accounted.

Retries are ours (litellm's are turned off) so that we can honour Retry-After, pace every caller of an
endpoint together, count retries per model, stop a run whose provider cannot be reached, and give up on a
provider that answers 5xx to everything after RAGAS's 3 attempts per call. A response
is cached only once it arrived whole; a cached response is returned without touching the network, which
is what makes reruns and resumes free. Chat completions and embeddings share one retry loop (`_call`).
On Ctrl-C the run `hold()`s the gateway: requests on their way finish (and are cached), no new one is sent.
A call litellm would send unchanged to an OpenAI endpoint is sent by `openai_client` instead (the same request,
without litellm's import and per-call cost); its failures are named as litellm's, so this loop treats both alike.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

from ragjudge.errors import UsageError
from ragjudge.llm._litellm import litellm
from ragjudge.llm.cache import ResponseCache, cache_key
from ragjudge.defaults import (
    CONCURRENCY_CAP,
    DEFAULT_CONCURRENCY,
    DEFAULT_MAX_RETRIES,
    DEFAULT_RETRY_SECONDS,
    DEFAULT_TIMEOUT,
)
from ragjudge.llm.faults import (
    FAILING_ATTEMPTS,
    Breaker,
    CredentialsRejected,
    LLMError,
    ProviderUnreachable,
    ServerErrorStreak,
    describe,
    first_line,
    is_auth_error,
    is_connection_error,
    is_rate_limited,
    is_retryable,
    retry_after,
    status_of,
)
from ragjudge.llm.limiter import RateLimiter
from ragjudge.llm.openai_client import (
    OpenAIClient,
    chat_request,
    embedding_request,
    fast_name,
    parse_chat,
    parse_embeddings,
)
from ragjudge.llm.wire import (
    SDK_NO_RETRIES,
    EmbeddingResponse,
    LLMResponse,
    cost_of,
    estimate_tokens,
    exception_headers,
    pack_vector,
    response_headers,
    top_logprobs_of,
    unpack_vector,
)
from ragjudge.llm.redact import redact
from ragjudge.llm.routes import ModelRoute, ModelRoutes
from ragjudge.llm.usage import UsageTracker


class Batcher(Protocol):
    """What the gateway hands a request that missed the cache to with `--batch` (`ragjudge.llm.batch`'s
    BatchCollector): it answers later, through a provider's batch interface."""

    async def complete(self, route: ModelRoute, key: str, messages: list[dict[str, Any]],
                       params: dict[str, Any]) -> LLMResponse: ...

DEFAULT_TEMPERATURE = 0.0

T = TypeVar("T")

__all__ = ["EmbeddingResponse", "LLMError", "LLMGateway", "LLMResponse", "ProviderUnreachable", "validate_model"]


def validate_model(model: str, api_base: str | None = None) -> None:
    """Fail before any work if litellm cannot tell which provider serves `model` (an `openai/` model of the fast
    path is served by the OpenAI client, without litellm)."""
    if fast_name(model) is not None:
        return
    try:
        litellm().get_llm_provider(model=model, api_base=api_base)
    except Exception as exc:  # litellm raises BadRequestError with a long message
        raise UsageError(f"unknown model {model!r}: litellm cannot tell its provider "
                         f"(use a provider prefix such as openai/, anthropic/, watsonx/, hosted_vllm/, ollama/). "
                         f"{redact(first_line(exc))[:200]}") from None


class LLMGateway:
    """The single door to LLM providers. Create one per run and share it between generator and judges."""

    def __init__(
        self,
        *,
        cache: ResponseCache | None = None,
        concurrency: int = DEFAULT_CONCURRENCY,
        fixed_concurrency: bool = False,
        max_retries: int = DEFAULT_MAX_RETRIES,
        retry_seconds: float = DEFAULT_RETRY_SECONDS,
        timeout: float = DEFAULT_TIMEOUT,
        backoff_base: float = 1.0,
        backoff_max: float = 60.0,
        api_base: str | None = None,
        api_key: str | None = None,
        routes: ModelRoutes | None = None,
        breaker_threshold: int = 5,
        usage: UsageTracker | None = None,
        default_params: dict[str, Any] | None = None,
    ):
        self.cache = cache
        self.concurrency = concurrency
        """Requests in flight per endpoint at the start; each endpoint's limiter adapts from there, unless
        `fixed_concurrency` makes it a hard cap (shared by every endpoint, as before adaptation)."""
        self.fixed_concurrency = fixed_concurrency
        self.max_retries = max_retries
        self.retry_seconds = retry_seconds
        self.timeout = timeout
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.routes = routes or ModelRoutes(api_base=api_base)
        self.api_base = self.routes.api_base
        self._api_key = api_key
        self.breaker_threshold = breaker_threshold
        self.default_params = {"temperature": DEFAULT_TEMPERATURE, **(default_params or {})}
        self.usage = usage or UsageTracker()
        self.requests_sent = 0
        self.limiters: dict[str, RateLimiter] = {}
        self.breakers: dict[str, Breaker] = {}
        self.key_breakers: dict[str, Breaker] = {}
        """Per model: its key refused (401) this many times in a row, with no success, stops the run."""
        self.streaks: dict[str, ServerErrorStreak] = {}
        """Per model (its route: one endpoint and model): 5xx answers in a row; while failing, a call makes at most
        3 attempts."""
        self.sending = 0
        """Requests on their way to a provider now (sent, not yet answered)."""
        self._held = False
        self._drained: asyncio.Future[None] | None = None
        self.batcher: Batcher | None = None
        """With `--batch`: chat requests that miss the cache go through the provider's batch interface."""
        self._semaphore: asyncio.Semaphore | None = None
        self._sem_loop: asyncio.AbstractEventLoop | None = None
        self._in_flight: dict[str, asyncio.Future[LLMResponse]] = {}
        """Cache key → the request on its way: an identical request waits for it instead of paying twice."""
        self._client: OpenAIClient | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None

    # -- plumbing -------------------------------------------------------------------------------------

    def _sem(self) -> asyncio.Semaphore:
        """Requests in flight across every endpoint: `concurrency` when fixed, else the adaptive limits' cap (each
        endpoint's own limit is its limiter's)."""
        loop = asyncio.get_running_loop()
        if self._semaphore is None or self._sem_loop is not loop:
            most = self.concurrency if self.fixed_concurrency else max(self.concurrency, CONCURRENCY_CAP)
            self._semaphore, self._sem_loop = asyncio.Semaphore(most), loop
        return self._semaphore

    def _http(self) -> OpenAIClient:
        """The fast path's client of this event loop (a client's connections belong to the loop they opened on)."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            self._client, self._client_loop = OpenAIClient(timeout=self.timeout), loop
        return self._client

    async def aclose(self) -> None:
        """Close the fast path's connections (those of the running loop's client)."""
        if self._client is not None and self._client_loop is asyncio.get_running_loop():
            client, self._client = self._client, None
            await client.aclose()

    def limiter(self, route: ModelRoute) -> RateLimiter:
        """One per endpoint; the slowest pace any model on it asks for wins."""
        limiter = self.limiters.get(route.endpoint)
        if limiter is None:
            limiter = self.limiters[route.endpoint] = RateLimiter(route.rpm, route.tpm, name=route.endpoint,
                                                                  max_in_flight=self.concurrency,
                                                                  adaptive=not self.fixed_concurrency)
        else:
            if route.rpm and (limiter.target_rpm is None or route.rpm < limiter.target_rpm):
                limiter.target_rpm = limiter.rpm = route.rpm
            if route.tpm and (limiter.target_tpm is None or route.tpm < limiter.target_tpm):
                limiter.target_tpm = limiter.tpm = route.tpm
        return limiter

    def _breaker(self, route: ModelRoute) -> Breaker:
        return self.breakers.setdefault(route.endpoint, Breaker(self.breaker_threshold))

    # -- Ctrl-C ---------------------------------------------------------------------------------------

    def hold(self) -> int:
        """Send no new request (Ctrl-C): those on their way finish and are cached, every other call waits until
        it is cancelled. Returns how many are on their way; `drained()` waits for them."""
        self._held = True
        return self.sending

    async def drained(self) -> None:
        """Return once no request is on its way (after `hold()`, none starts again)."""
        if self.sending:
            if self._drained is None or self._drained.done():
                self._drained = asyncio.get_running_loop().create_future()
            await asyncio.shield(self._drained)

    @staticmethod
    async def _wait_forever() -> None:
        await asyncio.get_running_loop().create_future()  # never answered: the run cancels it as it stops

    def _sent(self, change: int) -> None:
        self.sending += change
        if not self.sending and self._drained is not None and not self._drained.done():
            self._drained.set_result(None)

    def api_key_for(self, route: ModelRoute) -> str | None:
        """The key a call to `route` would use (for the preflight check; never logged)."""
        return route.api_key() or self._api_key

    def _backoff(self, attempt: int) -> float:
        delay = min(self.backoff_max, self.backoff_base * (2**attempt))
        return delay / 2 + random.uniform(0, delay / 2)  # "equal jitter": never zero, never in lockstep

    def forget(self, response: LLMResponse) -> None:
        """Take an answer the caller could not use (unparsable) out of the cache: the next ask is a new call."""
        if self.cache is not None and response.cache_key is not None:
            self.cache.delete(response.cache_key)

    # -- chat -----------------------------------------------------------------------------------------

    async def complete(self, model: str, messages: list[dict[str, Any]], *, fresh: bool = False,
                       **params: Any) -> LLMResponse:
        """Chat completion with cache, pacing, retries and accounting. Raises LLMError when it finally fails.

        `fresh=True` skips the cache lookup (the answer is still cached): re-asking after an unusable answer."""
        route = self.routes.route(model)
        call_params = {**self.default_params, **route.call_params(), **params}
        key = cache_key(route.model, messages, call_params)
        if self.cache is not None and not fresh and (hit := self.cache.get(key)) is not None:
            self.usage.record(model, cached=1)
            hit = {k: v for k, v in hit.items() if k in LLMResponse.__dataclass_fields__}
            return LLMResponse(**{**hit, "model": model, "cached": True, "latency": 0.0, "cache_key": key})
        if self.cache is not None and not fresh:  # an identical request already in flight: share its answer
            leader = self._in_flight.get(key)
            if leader is not None and leader.get_loop() is asyncio.get_running_loop():
                shared = await asyncio.shield(leader)
                self.usage.record(model, cached=1)
                return dataclasses.replace(shared, model=model, cached=True, latency=0.0)
            future: asyncio.Future[LLMResponse] = asyncio.get_running_loop().create_future()
            self._in_flight[key] = future
            try:
                response = await self._complete_uncached(model, route, key, messages, call_params)
            except asyncio.CancelledError:
                future.cancel()
                raise
            except BaseException as exc:
                if not future.done():
                    future.set_exception(exc)
                    future.exception()  # retrieved: no "exception was never retrieved" when nobody waited
                raise
            finally:
                if self._in_flight.get(key) is future:
                    del self._in_flight[key]
            if not future.done():
                future.set_result(response)
            return response
        return await self._complete_uncached(model, route, key, messages, call_params)

    async def _complete_uncached(self, model: str, route: ModelRoute, key: str, messages: list[dict[str, Any]],
                                 call_params: dict[str, Any]) -> LLMResponse:
        if self.batcher is not None:  # cached, accounted and journaled by the collector
            response = await self.batcher.complete(route, key, messages, call_params)
            response.model = model
            return response
        secret = self.api_key_for(route)
        tokens = estimate_tokens(messages, call_params)
        fast = chat_request(route.model, messages, call_params, secret)
        if fast is not None:
            client = self._http()
            response = await self._call(route, lambda: client.post(fast),
                                        lambda raw, latency: parse_chat(raw, model, latency), tokens=tokens)
        else:
            ll = litellm()
            secret_args = {"api_key": secret} if secret else {}
            response = await self._call(
                route,
                lambda: ll.acompletion(model=route.model, messages=messages, timeout=self.timeout, num_retries=0,
                                       **call_params, **secret_args),
                lambda raw, latency: self._parse(raw, model, latency),
                tokens=tokens,
            )
        self.usage.record(model, prompt_tokens=response.prompt_tokens, completion_tokens=response.completion_tokens,
                          cost=response.cost)
        return self.keep(key, route, response)

    def keep(self, key: str, route: ModelRoute, response: LLMResponse) -> LLMResponse:
        """Cache a chat answer under `key` (direct or batched: the same record) and tag it with its key."""
        if self.cache is not None:
            payload = {k: v for k, v in vars(response).items() if k not in ("cached", "latency", "cache_key")}
            self.cache.put(key, route.model, payload)
        response.cache_key = key
        return response

    # -- embeddings -----------------------------------------------------------------------------------

    async def embed(self, model: str, texts: list[str], **params: Any) -> EmbeddingResponse:
        """Embeddings of `texts`, in order. Raises LLMError when it finally fails.

        Each text is cached on its own under (model, text, params), so re-embedding known texts is free
        and only the texts missing from the cache are sent, deduplicated, in ONE request (callers batch).
        `api_key` in `params` overrides the gateway's key for this call; like it, it is never cached or shown.
        """
        route = self.routes.route(model)
        call_params = {**route.call_params(), **params}
        api_key = call_params.pop("api_key", None) or self.api_key_for(route)
        key_params = {**call_params, "endpoint": "embeddings"}  # never equal to a chat key
        keys = [cache_key(route.model, [{"input": text}], key_params) for text in texts]
        found: dict[str, list[float]] = {}
        if self.cache is not None:
            for key in dict.fromkeys(keys):
                if (hit := self.cache.get(key)) is not None:
                    found[key] = unpack_vector(hit["vector"])
        missing = {key: text for key, text in zip(keys, texts, strict=True) if key not in found}
        result = EmbeddingResponse(vectors=[], model=model, cached=sum(key in found for key in keys))
        self.usage.record(model, cached=result.cached)
        if missing:
            inputs = list(missing.values())
            tokens = sum(len(t) for t in inputs) // 4
            fast = embedding_request(route.model, inputs, call_params, api_key)
            if fast is not None:
                client = self._http()
                fresh = await self._call(route, lambda: client.post(fast),
                                         lambda raw, latency: parse_embeddings(raw, model, len(inputs), latency),
                                         tokens=tokens, secret=api_key)
            else:
                ll = litellm()
                secret_args = {"api_key": api_key} if api_key else {}
                fresh = await self._call(
                    route,
                    lambda: ll.aembedding(model=route.model, input=inputs, timeout=self.timeout, num_retries=0,
                                          max_retries=SDK_NO_RETRIES, **call_params, **secret_args),
                    lambda raw, latency: self._parse_embeddings(raw, model, len(inputs), latency),
                    tokens=tokens, secret=api_key,
                )
            self.usage.record(model, prompt_tokens=fresh.prompt_tokens, cost=fresh.cost)
            result.prompt_tokens, result.cost, result.latency = fresh.prompt_tokens, fresh.cost, fresh.latency
            for key, vector in zip(missing, fresh.vectors, strict=True):
                found[key] = vector
                if self.cache is not None:
                    self.cache.put(key, route.model, {"vector": pack_vector(vector)})
        result.vectors = [found[key] for key in keys]
        return result

    # -- the one retry loop ---------------------------------------------------------------------------

    async def _call(self, route: ModelRoute, send: Callable[[], Awaitable[Any]], parse: Callable[[Any, float], T], *,
                    tokens: int = 0, secret: str | None = None) -> T:
        """`send()` when the endpoint's limiter says so, under the concurrency limit, then `parse(raw, latency)`.

        429s wait (the whole endpoint pauses) and retry until `retry_seconds` have passed; other retryable
        failures back off, at most `max_retries` times, and at most 3 attempts in all while the model's endpoint
        answers 5xx to everything (`ServerErrorStreak`); connection failures open the endpoint's breaker and
        stop the run. Every attempt is counted as a request. After `hold()` nothing more is sent."""
        model = route.name
        limiter, breaker = self.limiter(route), self._breaker(route)
        key_breaker = self.key_breakers.setdefault(route.name, Breaker(3))
        streak = self.streaks.setdefault(route.name, ServerErrorStreak())
        born = time.monotonic()
        deadline = born + self.retry_seconds
        failures = 0
        attempts = 0
        while True:
            _stop_if_open(breaker, key_breaker)
            if self._held:
                await self._wait_forever()
            await limiter.acquire(born, tokens)
            started = time.perf_counter()
            attempts += 1
            try:
                try:
                    async with self._sem():
                        _stop_if_open(breaker, key_breaker)  # again: they may have opened while this waited
                        if self._held:  # and Ctrl-C may have come
                            await self._wait_forever()
                        self.requests_sent += 1
                        self.usage.record(model, requests=1)
                        self._sent(+1)
                        try:
                            raw = await send()
                        finally:
                            self._sent(-1)
                finally:
                    limiter.release()
                result = parse(raw, time.perf_counter() - started)
            except (ProviderUnreachable, CredentialsRejected):
                raise
            except Exception as exc:  # classified below; anything unexpected is not retried
                secrets = (self._api_key or "", secret or route.api_key() or "")
                streak.answered(status_of(exc))
                if is_connection_error(exc):
                    reason = redact(f"cannot reach {route.endpoint} (model {model}): connection refused or host "
                                    "unreachable; finished work is saved, rerun to resume once it is up", secrets)
                    if breaker.failure(reason):
                        self.usage.record(model, failures=1)
                        raise ProviderUnreachable(reason) from None
                if is_auth_error(exc) and key_breaker.failure(redact(
                        f"{route.endpoint} rejected the credentials (HTTP 401) for model {model} "
                        f"{key_breaker.threshold} times in a row: check its key; finished work is saved, rerun "
                        "to resume", secrets)):
                    self.usage.record(model, failures=1)
                    raise CredentialsRejected(str(key_breaker.open_reason)) from None
                if is_rate_limited(exc) and time.monotonic() < deadline:
                    wait = retry_after(exc)
                    limiter.on_rate_limited(wait, exception_headers(exc))
                    self.usage.record(model, retries=1)
                    base = wait if wait is not None else 1.0
                    await asyncio.sleep(base + random.uniform(0, 0.25 * base))  # spread, proportional to the wait
                    continue
                failures += 1
                retry = failures <= self.max_retries and time.monotonic() < deadline and is_retryable(exc)
                outage = streak.failing and attempts >= FAILING_ATTEMPTS  # RAGAS's budget is spent: give up
                if retry and not outage:
                    self.usage.record(model, retries=1)
                    await asyncio.sleep(min(self._backoff(failures - 1), max(0.0, deadline - time.monotonic())))
                    continue
                self.usage.record(model, failures=1)
                note = (f" ({route.endpoint} answered HTTP 5xx to the last {streak.count} requests for this model)"
                        if retry and outage else "")
                raise LLMError(redact(describe(exc, model, attempts, route.endpoint, note), secrets)) from None
            streak.answered(200)
            breaker.success()
            key_breaker.success()
            limiter.on_success(response_headers(raw), latency=time.perf_counter() - started)
            self.usage.record(model, calls=1)
            return result

    def _parse(self, raw: Any, model: str, latency: float) -> LLMResponse:
        choice = raw.choices[0]
        message = choice.message
        text = message.content or ""
        tool_calls = [{"name": c.function.name, "arguments": c.function.arguments}
                      for c in getattr(message, "tool_calls", None) or []]
        if not isinstance(text, str):
            raise ValueError(f"response content is not text: {type(text).__name__}")
        usage = getattr(raw, "usage", None)
        return LLMResponse(text=text, model=model, tool_calls=tool_calls,
                           prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
                           completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
                           cost=cost_of(raw), latency=latency, top_logprobs=top_logprobs_of(choice))

    @staticmethod
    def _parse_embeddings(raw: Any, model: str, expected: int, latency: float) -> EmbeddingResponse:
        data = sorted(raw.data, key=lambda d: d["index"] if isinstance(d, dict) else d.index)
        vectors = [list(map(float, d["embedding"] if isinstance(d, dict) else d.embedding)) for d in data]
        if len(vectors) != expected:
            raise ValueError(f"asked for {expected} embeddings, got {len(vectors)}")
        usage = getattr(raw, "usage", None)
        return EmbeddingResponse(vectors=vectors, model=model, cost=cost_of(raw), latency=latency,
                                 prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0))


def _stop_if_open(endpoint: Breaker, key: Breaker) -> None:
    """Stop the run once the endpoint cannot be reached (exit 3) or the model's key is refused (exit 2)."""
    if endpoint.open_reason is not None:
        raise ProviderUnreachable(endpoint.open_reason)
    if key.open_reason is not None:
        raise CredentialsRejected(key.open_reason)

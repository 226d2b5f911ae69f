"""A provider's batch interface as litellm exposes it: upload a JSONL of requests, create, poll, list, read results.

OpenAI's format (Azure's is the same): each input line is `{"custom_id", "method": "POST", "url", "body"}`, the
output file has `{"custom_id", "response": {"status_code", "body"}}` per answered line and the error file the same
for failed lines. Management calls (files, batches) are retried here on 429/5xx/timeouts; a refused connection
counts towards the endpoint's breaker like any other call, so a provider that is down stops the run (exit 3).

litellm 1.106 can create batches for openai and azure (and a litellm proxy in front of anything); it can read
Anthropic's message batches but not create them, so Anthropic models are refused with `--batch`.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from ragjudge.llm._litellm import litellm
from ragjudge.llm.faults import (
    Breaker,
    LLMError,
    ProviderUnreachable,
    describe,
    is_connection_error,
    is_rate_limited,
    is_retryable,
    retry_after,
    status_of,
)
from ragjudge.llm.redact import redact
from ragjudge.llm.routes import ModelRoute

BATCH_PROVIDERS = ("openai", "azure", "litellm_proxy")
"""Providers for which litellm creates batches (files + batches, OpenAI format)."""
FINAL_STATUSES = frozenset({"completed", "failed", "expired", "cancelled"})
MAX_LINES = 50_000
"""OpenAI's limit of requests per batch."""
MAX_BYTES = 190 * 1024 * 1024
"""OpenAI's limit is 200 MB per input file; stay under it."""

_NOT_BODY = {"model", "custom_llm_provider", "messages", "max_retries", "api_version", "drop_params", "kwargs",
             "base_model", "extra_headers", "stream", "stream_options", "additional_drop_params"}


def batch_provider(route: ModelRoute) -> str | None:
    """The litellm provider that would serve `route`'s batches, or None when litellm cannot create them."""
    provider = route.provider
    return provider if provider in BATCH_PROVIDERS else None


@cache
def _body_params() -> frozenset[str]:
    """The chat parameters litellm maps for a provider (temperature, max_tokens, seed, tools...)."""
    from litellm.utils import get_optional_params

    return frozenset(inspect.signature(get_optional_params).parameters) - _NOT_BODY


def request_body(route: ModelRoute, messages: list[dict[str, Any]], params: dict[str, Any]) -> dict[str, Any]:
    """The body a direct call would send, built by litellm's own parameter mapping (max_tokens becomes
    max_completion_tokens for reasoning models, unsupported parameters are dropped, as with drop_params)."""
    from litellm.utils import get_optional_params

    wire_model, provider, _, _ = litellm().get_llm_provider(model=route.model, api_base=route.api_base)
    known = {k: v for k, v in params.items() if k in _body_params() and v is not None}
    optional = get_optional_params(model=wire_model, custom_llm_provider=provider, drop_params=True, **known)
    extra = optional.pop("extra_body", None) or {}
    optional = {k: v for k, v in optional.items() if k not in ("stream", "stream_options") and v is not None}
    return {"model": wire_model, "messages": messages, **optional, **extra}


@dataclass
class BatchState:
    """What a poll says about one batch."""

    status: str
    total: int = 0
    done: int = 0
    output_file_id: str | None = None
    error_file_id: str | None = None
    errors: list[str] = field(default_factory=list)
    metadata: dict[str, str] = field(default_factory=dict)
    input_file_id: str | None = None
    id: str = ""

    @property
    def final(self) -> bool:
        return self.status in FINAL_STATUSES


def _state(raw: Any) -> BatchState:
    counts = getattr(raw, "request_counts", None)
    errors_obj = getattr(raw, "errors", None)
    errors = []
    for err in getattr(errors_obj, "data", None) or []:
        message = getattr(err, "message", None) or (err.get("message") if isinstance(err, dict) else None)
        if message:
            errors.append(str(message))
    return BatchState(status=str(raw.status), total=int(getattr(counts, "total", 0) or 0),
                      done=int(getattr(counts, "completed", 0) or 0) + int(getattr(counts, "failed", 0) or 0),
                      output_file_id=raw.output_file_id, error_file_id=raw.error_file_id, errors=errors,
                      metadata=dict(raw.metadata or {}), input_file_id=raw.input_file_id, id=str(raw.id))


class BatchGone(LLMError):
    """The provider does not know the batch or file (HTTP 404): its requests may be submitted anew."""


class BatchAPI:
    """One endpoint's files and batches, with the gateway's credentials, retries and breaker."""

    def __init__(self, route: ModelRoute, provider: str, api_key: str | None, breaker: Breaker, *,
                 max_retries: int = 6, timeout: float = 600.0, backoff_base: float = 1.0):
        self.route = route
        self.provider = provider
        self._api_key = api_key
        self.breaker = breaker
        self.max_retries = max_retries
        self.timeout = timeout
        self.backoff_base = backoff_base

    @property
    def url(self) -> str:
        """The path each line is sent to (Azure's batch lines name it without the /v1 prefix)."""
        return "/chat/completions" if self.provider == "azure" else "/v1/chat/completions"

    async def submit(self, lines: list[dict[str, Any]], metadata: dict[str, str]) -> tuple[str, str]:
        """Upload the requests and create their batch: (batch id, input file id)."""
        data = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode("utf-8")
        uploaded = await self._api("acreate_file", file=("ragjudge-batch.jsonl", data, "application/jsonl"),
                                   purpose="batch")

        async def created_anyway() -> BatchState | None:
            """A create that failed in transit (a timeout, a 5xx) may have created the batch all the same:
            look before creating it again, which would pay for every request twice."""
            return next((b for b in await self.listed(100) if b.input_file_id == uploaded.id), None)

        batch = await self._api("acreate_batch", completion_window="24h", endpoint=self.url,
                                input_file_id=uploaded.id, metadata=metadata, recover=created_anyway)
        return str(batch.id), str(uploaded.id)

    async def state(self, batch_id: str) -> BatchState:
        # litellm would otherwise download a finished batch's whole output to price it, before we read it again
        quiet = {"litellm_metadata": {"batch_ignore_default_logging": True}}
        return _state(await self._api("aretrieve_batch", batch_id=batch_id, **quiet))

    async def read(self, file_id: str) -> list[dict[str, Any]]:
        """A JSONL file's rows (a torn or non-JSON line is skipped: its request counts as unanswered)."""
        content = await self._api("afile_content", file_id=file_id)
        rows = []
        for line in bytes(content.content).decode("utf-8", errors="replace").splitlines():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(row, dict):
                rows.append(row)
        return rows

    async def listed(self, limit: int = 500) -> list[BatchState]:
        """The provider's most recent batches (newest first), up to `limit`."""
        found: list[BatchState] = []
        after: str | None = None
        while len(found) < limit:
            page = await self._api("alist_batches", limit=min(100, limit - len(found)),
                                   **({"after": after} if after else {}))
            data = list(getattr(page, "data", None) or [])
            found.extend(_state(b) for b in data)
            if not data or not getattr(page, "has_more", False):
                break
            after = str(data[-1].id)
        return found

    async def _api(self, name: str, *, recover: Callable[[], Awaitable[Any]] | None = None, **kwargs: Any) -> Any:
        """One management call, retried like a chat call: 429s wait, 5xx back off, refusals open the breaker.
        `recover()`, before each retry, may return the call's result found another way (then no retry)."""
        call = getattr(litellm(), name)
        # max_retries=0: the openai SDK would otherwise retry inside each attempt, creating a batch twice
        given = {"api_base": self.route.api_base, "api_version": self.route.params.get("api_version"),
                 "api_key": self._api_key}
        args = {"custom_llm_provider": self.provider, "timeout": self.timeout, "max_retries": 0,
                **{k: v for k, v in given.items() if v}}
        failures = 0
        while True:
            if self.breaker.open_reason is not None:
                raise ProviderUnreachable(self.breaker.open_reason)
            try:
                result = await call(**kwargs, **args)
            except Exception as exc:  # classified as in the gateway's retry loop
                secrets = (self._api_key or "",)
                if is_connection_error(exc):
                    reason = redact(f"cannot reach {self.route.endpoint} (model {self.route.name}): connection "
                                    "refused or host unreachable; submitted batches are journaled, rerun to resume "
                                    "once it is up", secrets)
                    if self.breaker.failure(reason):
                        raise ProviderUnreachable(reason) from None
                failures += 1
                if failures <= self.max_retries and (is_rate_limited(exc) or is_retryable(exc)):
                    wait = retry_after(exc) if is_rate_limited(exc) else None
                    base = wait if wait is not None else min(60.0, self.backoff_base * 2 ** (failures - 1))
                    await asyncio.sleep(base / 2 + random.uniform(0, base / 2))
                    if recover is not None and (found := await recover()) is not None:
                        return found
                    continue
                what = f"{self.route.name} ({name.removeprefix('a')})"
                kind = BatchGone if status_of(exc) == 404 else LLMError
                raise kind(redact(describe(exc, what, failures, self.route.endpoint), secrets)) from None
            self.breaker.success()
            return result


def batch_cost(api: BatchAPI, body: dict[str, Any]) -> float:
    """litellm's batch price: its `*_batches` rates where its price map has them, else half the normal price
    (litellm's own rule); 0 for models it has no price for."""
    from litellm.cost_calculator import batch_cost_calculator
    from litellm.types.utils import Usage

    try:
        wire_model = str(body.get("model") or api.route.model.split("/", 1)[-1])
        prompt, completion = batch_cost_calculator(usage=Usage(**(body.get("usage") or {})), model=wire_model,
                                                   custom_llm_provider=api.provider)
        return float(prompt + completion)
    except Exception:  # unknown price: not known, count 0 (as direct calls do)
        return 0.0


def chunks(bodies: list[dict[str, Any]]) -> list[list[int]]:
    """Line indices per batch, within the provider's limits (lines and bytes per input file)."""
    out: list[list[int]] = [[]]
    size = 0
    for index, body in enumerate(bodies):
        weight = len(json.dumps(body, ensure_ascii=False).encode("utf-8")) + 200
        if out[-1] and (len(out[-1]) >= MAX_LINES or size + weight > MAX_BYTES):
            out.append([])
            size = 0
        out[-1].append(index)
        size += weight
    return [c for c in out if c]

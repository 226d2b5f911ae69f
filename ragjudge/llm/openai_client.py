"""The OpenAI fast path: chat completions and embeddings of `openai/...` models straight over HTTP (aiohttp).

Why: litellm costs seconds of CPU to import and tens of milliseconds per call (logging objects, callbacks, cost
bookkeeping, its own transport), more than the rest of a judge run's client work together (issue 44). For a route
litellm would send through its plain OpenAI chat config unchanged, this module sends the very request litellm
sends (`tests/test_openai_fast_path.py` captures both and compares them) and reads the answer into the gateway's
shapes; the gateway keeps its cache, pacing, retries, usage and cost records around it, so nothing else changes.

A call takes the fast path only when all of this holds, else it goes through litellm as before:
- `RAGJUDGE_LLM_CLIENT` is not `litellm` (the opt-out);
- the model is `openai/<name>` and `<name>` is not one litellm rewrites requests for (o-series `o1`, `o3`...,
  whose `max_tokens` it renames and `temperature` it drops; `gpt-5`/`gpt-6` names; the `responses/` API);
  bare names (`gpt-4o-mini`) and other providers (`hosted_vllm/` translates content lists and drops params) stay
  on litellm, which decides their provider from its model list;
- the route sets nothing but `api_base` (a models file's `api_version`, `extra_headers`... need litellm);
- every parameter is one litellm passes through unchanged for these models (`CHAT_PARAMS`, `EMBEDDING_PARAMS`,
  as JSON values: a pydantic `response_format` is converted by litellm);
- every message is a plain `{"role", "content": str}` (litellm rewrites content parts and tool messages);
- a key is known: the route's, the gateway's or `OPENAI_API_KEY` (without one litellm's error is the one to show).
Where to: the route's `api_base`, else `OPENAI_BASE_URL`, `OPENAI_API_BASE`, else https://api.openai.com/v1, as
litellm resolves it (`routes.resolve_target` answers from here for these models, so limiter, breaker and preflight
name the same server). Failures raise `http_errors`' exceptions, named and worded as litellm's.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from dataclasses import dataclass
from typing import Any

from ragjudge.errors import UsageError
from ragjudge.llm import http_errors, prices
from ragjudge.llm.wire import EmbeddingResponse, LLMResponse, RawAnswer, top_logprobs_of

CLIENT_ENV = "RAGJUDGE_LLM_CLIENT"
"""`litellm`: every call through litellm (the opt-out); `auto` or unset: the fast path where it applies."""
DEFAULT_BASE = "https://api.openai.com/v1"
CHAT_PARAMS = frozenset({"temperature", "top_p", "n", "stop", "max_tokens", "max_completion_tokens",
                         "presence_penalty", "frequency_penalty", "logit_bias", "user", "seed", "logprobs",
                         "top_logprobs", "tools", "tool_choice", "response_format", "parallel_tool_calls"})
"""In litellm's `OpenAIGPTConfig.get_supported_openai_params` and copied into the body as given."""
EMBEDDING_PARAMS = frozenset({"dimensions", "user"})
"""(`encoding_format` stays with litellm: the SDK decodes base64 vectors.)"""
ROUTING = frozenset({"api_base"})
"""Call parameters that say where to send, not what: never in the body."""
_ROLES = frozenset({"system", "user", "assistant"})
_MESSAGE_KEYS = frozenset({"role", "content"})


CLIENTS = ("auto", "litellm")


def enabled() -> bool:
    """False when `RAGJUDGE_LLM_CLIENT=litellm`; any value but those of `CLIENTS` (or none) is a usage error."""
    value = os.environ.get(CLIENT_ENV, "").strip().lower() or "auto"
    if value not in CLIENTS:
        raise UsageError(f"${CLIENT_ENV} must be one of {', '.join(CLIENTS)}, got {value!r}")
    return value == "auto"


def fast_name(model: str) -> str | None:
    """The name sent to the server when `model` takes the fast path (no `openai/` prefix), else None."""
    if not model.startswith("openai/") or not enabled():
        return None
    name = model[len("openai/"):]
    if (not name or name.startswith("responses/") or (len(name) > 1 and name[0] == "o" and name[1].isdigit())
            or "gpt-5" in name or "gpt-6" in name):
        return None
    return name


def base_url(api_base: str | None) -> str:
    """Where litellm sends an `openai/` model (`OpenAIGPTConfig.get_api_base`)."""
    return api_base or os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_BASE") or DEFAULT_BASE


def api_key(key: str | None) -> str | None:
    """The key litellm sends for an `openai/` model (`OpenAIGPTConfig.get_api_key`)."""
    return key or os.environ.get("OPENAI_API_KEY") or None


@dataclass(frozen=True)
class FastRequest:
    url: str
    body: dict[str, Any]
    key: str
    model: str
    """The name priced (without `openai/`)."""
    chat: bool = True
    """Chat completions are sent once more after a 422 (as litellm does), embeddings are not."""


def _plain(value: Any) -> bool:
    """A JSON value (what litellm passes on as is); a class or a pydantic model it would convert."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return True
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    return False


def _target(model: str, params: dict[str, Any], key: str | None,
            allowed: frozenset[str]) -> tuple[str, str, str, dict[str, Any]] | None:
    """(name sent, base URL, key, body parameters) of a call the fast path takes, else None."""
    name = fast_name(model)
    secret = api_key(key) if name is not None else None
    if name is None or secret is None:
        return None
    body = {}
    for param, value in params.items():
        if param in ROUTING or value is None:  # litellm leaves unset (None) parameters out
            continue
        if param not in allowed or not _plain(value):
            return None
        body[param] = value
    return name, base_url(params.get("api_base")).rstrip("/"), secret, body


def chat_request(model: str, messages: list[dict[str, Any]], params: dict[str, Any],
                 key: str | None) -> FastRequest | None:
    """The request litellm would send for this chat call, or None when it must go through litellm."""
    target = _target(model, params, key, CHAT_PARAMS)
    if target is None:
        return None
    for message in messages:
        if (not isinstance(message, dict) or message.keys() - _MESSAGE_KEYS or message.get("role") not in _ROLES
                or not isinstance(message.get("content"), str)):
            return None
    name, base, secret, body = target
    if not body.get("tools"):  # litellm's transform_request drops a tool_choice without tools
        body.pop("tool_choice", None)
    return FastRequest(f"{base}/chat/completions", {"model": name, "messages": messages, **body}, secret, name)


def embedding_request(model: str, inputs: list[str], params: dict[str, Any], key: str | None) -> FastRequest | None:
    """The request litellm would send for these embeddings, or None when it must go through litellm."""
    if (target := _target(model, params, key, EMBEDDING_PARAMS)) is None:
        return None
    name, base, secret, body = target
    return FastRequest(f"{base}/embeddings", {"model": name, "input": inputs, **body}, secret, name, chat=False)


class OpenAIClient:
    """One keep-alive connection pool per gateway and event loop, on aiohttp.

    aiohttp rather than httpx: httpcore's pool checks every idle connection for expiry (a poll and a getpeername
    through anyio) each time it hands out a connection, which was a fifth of a judge run's CPU at 16 connections;
    aiohttp's connector takes a released connection off a list (and is what litellm itself sends with). The pool
    has no cap of its own: the gateway's concurrency bounds the requests in flight, so a request never waits for a
    connection inside its timeout. The session is closed when the loop's tasks are cancelled at its end (what
    `asyncio.run` does), or by `aclose()`."""

    def __init__(self, *, timeout: float):
        import aiohttp

        self.timeout = timeout
        self._aiohttp = aiohttp
        # trust_env=False: with it aiohttp reads the environment's proxies and ~/.netrc in a worker thread for every
        # request (two thread hops and a scan of os.environ each, a tenth of a judge run's CPU); the proxy the
        # environment names (HTTPS_PROXY, NO_PROXY...) is looked up once per endpoint instead (`_proxy`)
        self._session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=0, limit_per_host=0), timeout=aiohttp.ClientTimeout(total=timeout))
        self._proxies: dict[str, tuple[Any, Any]] = {}
        self._keeper = asyncio.get_running_loop().create_task(self._close_when_cancelled())

    async def _close_when_cancelled(self) -> None:
        try:
            await asyncio.get_running_loop().create_future()  # never answered: cancelled as the loop ends
        finally:
            await self._session.close()

    async def post(self, request: FastRequest) -> RawAnswer:
        """POST the request; the parsed JSON answer and its headers, or an `http_errors` exception."""
        started = time.perf_counter()
        body = request.body
        headers = {"Authorization": f"Bearer {request.key}", "Content-Type": "application/json"}
        proxy, proxy_auth = self._proxy(request.url)
        for resend in (False, True):
            try:
                async with self._session.post(request.url, data=json.dumps(body).encode(), headers=headers,
                                              proxy=proxy, proxy_auth=proxy_auth) as answer:
                    status, content, said = answer.status, await answer.read(), dict(answer.headers)
            except asyncio.TimeoutError:  # aiohttp's ServerTimeoutError is one too
                raise http_errors.timed_out(self.timeout, time.perf_counter() - started) from None
            except (self._aiohttp.ClientError, OSError) as exc:
                raise http_errors.connection_failed() from exc
            if status != 422 or resend or not request.chat:
                break
            # litellm (drop_params=True) answers a 422 by sending the request once more without the parameters the
            # error names (`drop_params_from_unprocessable_entity_error`, litellm/llms/openai/common_utils.py)
            invalid = _invalid_params(content)
            body = {k: v for k, v in body.items() if k not in invalid}
        said = {k.lower(): v for k, v in said.items()}
        if status >= 400:
            raise http_errors.status_error(status, content, said)
        try:
            parsed = json.loads(content)
        except ValueError as exc:
            raise http_errors.garbled(exc) from None
        return RawAnswer(parsed, said, request.model)

    def _proxy(self, url: str) -> tuple[Any, Any]:
        """(proxy URL, its credentials) the environment names for `url`'s scheme and host, as httpx (the openai
        SDK's client) reads them; (None, None) for none. Read once per endpoint: a run's environment is fixed."""
        scheme, _, rest = url.partition("://")
        origin = f"{scheme}://{rest.split('/', 1)[0]}"
        if origin not in self._proxies:
            from aiohttp.helpers import get_env_proxy_for_url
            from yarl import URL

            try:
                self._proxies[origin] = get_env_proxy_for_url(URL(url))
            except LookupError:
                self._proxies[origin] = (None, None)
        return self._proxies[origin]

    async def aclose(self) -> None:
        self._keeper.cancel()
        await asyncio.gather(self._keeper, return_exceptions=True)


def _invalid_params(content: bytes) -> set[str]:
    """The parameters a 422 answer names (FastAPI's `{"detail": [{"loc": ["body", NAME]...}]}` in the error's
    message), as litellm reads them."""
    try:
        error = json.loads(content).get("error", {})
        message = error.get("message") if isinstance(error, dict) else None
        if isinstance(message, str):
            try:
                message = json.loads(message)
            except ValueError:
                message = {"detail": message}
        detail = message.get("detail") if isinstance(message, dict) else None
    except (ValueError, AttributeError):
        return set()
    if not isinstance(detail, list) or not detail or not isinstance(detail[0], dict):
        return set()
    return {str(d["loc"][1]) for d in detail
            if isinstance(d, dict) and isinstance(d.get("loc"), list) and len(d["loc"]) == 2}


def parse_chat(raw: RawAnswer, model: str, latency: float) -> LLMResponse:
    """The gateway's answer from an OpenAI chat completion body (as `LLMGateway._parse` reads litellm's)."""
    try:
        choice = raw.body["choices"][0]
        message = choice["message"]
        text = message.get("content") or ""
        tool_calls = [{"name": call["function"]["name"], "arguments": call["function"]["arguments"]}
                      for call in message.get("tool_calls") or []]
    except (KeyError, IndexError, TypeError, AttributeError) as exc:
        raise ValueError(f"not a chat completion: {type(exc).__name__} {exc}") from None
    if not isinstance(text, str):
        raise ValueError(f"response content is not text: {type(text).__name__}")
    usage = raw.body.get("usage") or {}
    return LLMResponse(text=text, model=model, tool_calls=tool_calls,
                       prompt_tokens=int(usage.get("prompt_tokens") or 0),
                       completion_tokens=int(usage.get("completion_tokens") or 0),
                       cost=prices.cost(raw.model, usage), latency=latency,
                       top_logprobs=top_logprobs_of(choice))


def parse_embeddings(raw: RawAnswer, model: str, expected: int, latency: float) -> EmbeddingResponse:
    """The gateway's answer from an OpenAI embeddings body (as `LLMGateway._parse_embeddings` reads litellm's)."""
    try:
        data = sorted(raw.body["data"], key=lambda d: d["index"])
        vectors = [list(map(float, d["embedding"])) for d in data]
    except (KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"not an embeddings answer: {type(exc).__name__} {exc}") from None
    if len(vectors) != expected:
        raise ValueError(f"asked for {expected} embeddings, got {len(vectors)}")
    usage = raw.body.get("usage") or {}
    return EmbeddingResponse(vectors=vectors, model=model, cost=prices.cost(raw.model, usage), latency=latency,
                             prompt_tokens=int(usage.get("prompt_tokens") or 0))

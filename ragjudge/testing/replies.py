"""What the test server answers: scripted replies, the recorded requests, deterministic embeddings (stdlib only)."""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Union

EMBEDDING_DIM = 32
"""Default embedding size: small enough to be cheap, large enough that unrelated texts differ."""


@dataclass
class Reply:
    """What the server should answer to one request. ``status != 200`` gives an OpenAI-style error (``content`` its
    message) and wins over ``garbage``; token counts default to word counts: plausible and deterministic."""

    content: str | None = None
    tool_calls: list[dict[str, Any]] | None = None  # [{"name": ..., "arguments": {...} or "json"}]
    status: int = 200
    retry_after: float | None = None
    delay: float = 0.0
    garbage: bool = False
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    top_logprobs: list[dict[str, float]] | None = None
    """Per generated token, the likeliest tokens and their log-probabilities, returned as OpenAI's `logprobs` when the
    request asks for them (`logprobs: true`); the first of each position is the token generated."""


@dataclass
class Request:
    """One received HTTP request, as responders see it; ``headers`` never holds credentials (Authorization etc.)."""

    path: str
    method: str = "POST"
    body: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    in_flight_at_arrival: int | None = None
    """Chat/embedding requests the server was still answering when this one arrived (None for others)."""

    @property
    def model(self) -> str | None:
        model = self.body.get("model")
        return model if isinstance(model, str) else None

    @property
    def messages(self) -> list[dict[str, Any]]:
        messages = self.body.get("messages")
        return messages if isinstance(messages, list) else []

    @property
    def last_user(self) -> str:
        """Text of the last user message ('' if none): what most rules want to match."""
        for message in reversed(self.messages):
            if isinstance(message, dict) and message.get("role") == "user":
                return _content_text(message.get("content"))
        return ""

    @property
    def prompt(self) -> str:
        """All message texts joined by newlines (system prompt, context, question...)."""
        return "\n".join(_content_text(m.get("content")) for m in self.messages if isinstance(m, dict))


Responder = Callable[[Request], Union[str, Reply]]
ReplySpec = Union[str, Reply, Responder]


def _content_text(content: Any) -> str:
    """Flatten OpenAI message content (a string or a list of typed parts) to plain text."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict)
                         and part.get("type") == "text")
    return ""


def _to_reply(spec: ReplySpec, request: Request) -> Reply:
    """Normalise a str / Reply / Responder into a Reply for ``request``."""
    if callable(spec) and not isinstance(spec, Reply):
        spec = spec(request)
    if isinstance(spec, str):
        return Reply(content=spec)
    if isinstance(spec, Reply):
        return spec
    raise TypeError(f"responder returned {type(spec).__name__}, expected str or Reply")


def _default_responder(request: Request) -> str:
    """Answer 'OK' so a bare server is usable for smoke and plumbing tests."""
    return "OK"


def scripted(rules: list[tuple[str, ReplySpec]], default: ReplySpec = "OK") -> Responder:
    """A responder from ``(regex, reply)`` rules, the first match winning: a regex (``re.DOTALL``) found in the last
    user message or the whole prompt, so rules can key on the question or on injected context."""
    compiled = [(re.compile(pattern, re.DOTALL), reply) for pattern, reply in rules]

    def respond(request: Request) -> str | Reply:
        last_user, prompt = request.last_user, request.prompt
        for pattern, reply in compiled:
            if pattern.search(last_user) or pattern.search(prompt):
                return _to_reply(reply, request)
        return _to_reply(default, request)

    return respond


def by_model(mapping: Mapping[str, ReplySpec], default: ReplySpec | None = None) -> Responder:
    """Dispatch on the request's ``model`` so one server plays several judges/generators. Keys match with or without
    a provider prefix (litellm strips it on the wire); unknown models get ``default``, else a 404 like the real API."""
    table = {key.split("/", 1)[1] if key.startswith("openai/") else key: value for key, value in mapping.items()}

    def respond(request: Request) -> str | Reply:
        model = request.model or ""
        spec = table.get(model, table.get(model.split("/", 1)[-1], default))
        if spec is None:
            return Reply(status=404, content=f"The model `{model}` does not exist")
        return _to_reply(spec, request)

    return respond


def embed_text(text: str, dim: int = EMBEDDING_DIM) -> list[float]:
    """Deterministic bag-of-words unit vector of hashed lowercase words: texts sharing words get a positive cosine,
    so retrieval behaves sensibly; the same text gives the same vector in every process."""
    vector = [0.0] * dim
    for word in re.findall(r"\w+", text.lower()):
        digest = hashlib.sha256(word.encode()).digest()
        for i in range(0, 8, 2):  # 4 signed buckets per word keeps collisions rare
            vector[digest[i] % dim] += 1.0 if digest[i + 1] & 1 else -1.0
    norm = math.sqrt(sum(v * v for v in vector))
    if norm == 0.0:  # empty text: a fixed unit vector avoids NaN cosine downstream
        return [1.0] + [0.0] * (dim - 1)
    return [v / norm for v in vector]


def tool_calls_of(reply: Reply, next_id: Callable[[], str]) -> list[dict[str, Any]] | None:
    """The reply's tool calls in OpenAI's wire shape (arguments as a JSON string)."""
    if not reply.tool_calls:
        return None
    calls = []
    for call in reply.tool_calls:
        arguments = call.get("arguments", {})
        calls.append({"id": call.get("id") or f"call_{next_id()}", "type": "function",
                      "function": {"name": call["name"],
                                   "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments)}})
    return calls


def usage_of(request: Request, reply: Reply, tool_calls: list[dict[str, Any]] | None) -> dict[str, int]:
    """Token counts: the reply's own, or word counts of the prompt and the answer."""
    prompt = reply.prompt_tokens if reply.prompt_tokens is not None else _word_count(request.prompt)
    completion = reply.completion_tokens if reply.completion_tokens is not None else _word_count(
        reply.content or "") + sum(_word_count(c["function"]["arguments"]) + 1 for c in tool_calls or [])
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def completion_body(request: Request, reply: Reply, next_id: Callable[[], str]) -> dict[str, Any]:
    """An OpenAI chat.completion object answering `request` with `reply` (direct calls and batch lines alike)."""
    tool_calls = tool_calls_of(reply, next_id)
    message: dict[str, Any] = {"role": "assistant", "content": reply.content, "tool_calls": tool_calls}
    return {
        "id": f"chatcmpl-{next_id()}", "object": "chat.completion", "created": int(time.time()),
        "model": request.model, "system_fingerprint": None,
        "choices": [{"index": 0, "message": message, "logprobs": logprobs_of(request, reply),
                     "finish_reason": "tool_calls" if tool_calls else "stop"}],
        "usage": usage_of(request, reply, tool_calls),
    }


def logprobs_of(request: Request, reply: Reply) -> dict[str, Any] | None:
    """OpenAI's `logprobs` object for a reply that scripts them, when the request asked (`logprobs: true`, the
    alternatives cut to `top_logprobs`)."""
    if not reply.top_logprobs or not request.body.get("logprobs"):
        return None
    keep = int(request.body.get("top_logprobs") or 0)
    content = []
    for position in reply.top_logprobs:
        ranked = sorted(position.items(), key=lambda kv: -kv[1])
        token, logprob = ranked[0]
        content.append({"token": token, "logprob": logprob, "bytes": list(token.encode()),
                        "top_logprobs": [{"token": t, "logprob": lp, "bytes": list(t.encode())}
                                         for t, lp in ranked[:keep]]})
    return {"content": content, "refusal": None}


def _word_count(text: str) -> int:
    return len(text.split())


def error_body(status: int, message: str | None) -> dict[str, Any]:
    """OpenAI's error object, with the (type, code) pair of the HTTP status, so SDK error mapping is realistic."""
    err_type, code = {400: ("invalid_request_error", None), 401: ("invalid_request_error", "invalid_api_key"),
                      403: ("invalid_request_error", None), 404: ("invalid_request_error", "model_not_found"),
                      429: ("requests", "rate_limit_exceeded")}.get(status, ("server_error", None))
    return {"error": {"message": message or f"Simulated error {status}", "type": err_type, "param": None, "code": code}}

"""What crosses the wire to and from a provider: response shapes, vectors packed for the cache, costs, headers.

Kept apart from the gateway's control flow (routing, pacing, retries) so each reads on its own.
"""

from __future__ import annotations

import base64
import struct
from dataclasses import dataclass, field
from typing import Any

from ragjudge.llm._litellm import litellm


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
    cache_key: str | None = None
    """Lets a caller that cannot read the answer take it out of the cache (`LLMGateway.forget`)."""
    top_logprobs: list[dict[str, float]] | None = None
    """With `logprobs=True, top_logprobs=N` asked and given: per generated token, the N likeliest tokens and their
    log-probabilities (what G-Eval weighs a score with); None when the provider gave none."""


def _field(obj: Any, name: str) -> Any:
    """A field of an answer as JSON (the fast path's dicts) or as litellm's objects."""
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def top_logprobs_of(choice: Any) -> list[dict[str, float]] | None:
    """The per-token alternatives of a chat choice (OpenAI's `logprobs.content[i].top_logprobs`), or None."""
    content = _field(_field(choice, "logprobs"), "content")
    if not content:
        return None
    out = []
    for position in content:
        entry: dict[str, float] = {}
        for alt in [*(_field(position, "top_logprobs") or []), position]:  # the alternatives, then the token chosen
            token, value = _field(alt, "token"), _field(alt, "logprob")
            if isinstance(token, str) and isinstance(value, (int, float)):
                entry.setdefault(token, float(value))
        out.append(entry)
    return out


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


SDK_NO_RETRIES = _TruthyZero(0)


def pack_vector(vector: list[float]) -> str:
    """float64 little-endian, base64: exact round trip at about half the size of JSON numbers."""
    return base64.b64encode(struct.pack(f"<{len(vector)}d", *vector)).decode("ascii")


def unpack_vector(blob: str) -> list[float]:
    raw = base64.b64decode(blob)
    return list(struct.unpack(f"<{len(raw) // 8}d", raw))


def cost_of(raw: Any) -> float:
    """The response's cost at litellm's prices: the one litellm already computed for the call (its hidden
    `response_cost`, None for a model it has no price for) rather than a second computation of it, which cost
    as much CPU as the rest of our own per-request work (issue 44)."""
    hidden = getattr(raw, "_hidden_params", None) or {}
    if "response_cost" in hidden:
        return float(hidden["response_cost"] or 0.0)
    try:
        return float(litellm().completion_cost(completion_response=raw) or 0.0)
    except Exception:  # unknown price (local and test models): cost is not known, count 0
        return 0.0


@dataclass
class RawAnswer:
    """A provider's answer as the OpenAI fast path received it (litellm's is its own response object)."""

    body: dict[str, Any]
    headers: dict[str, str]
    model: str
    """The model name it was asked of (what it is priced by)."""


def response_headers(raw: Any) -> dict[str, str] | None:
    if isinstance(raw, RawAnswer):
        return raw.headers or None
    hidden = getattr(raw, "_hidden_params", None) or {}
    headers = hidden.get("additional_headers") or getattr(raw, "_response_headers", None)
    return dict(headers) if headers else None


def exception_headers(exc: BaseException) -> dict[str, str] | None:
    from ragjudge.llm.faults import headers_of

    try:
        headers = headers_of(exc)
        return dict(headers) if headers else None
    except Exception:
        return None


def estimate_tokens(messages: list[dict[str, Any]], params: dict[str, Any]) -> int:
    """Rough request size for a tokens-per-minute budget: 4 characters a token, plus the answer's cap."""
    chars = sum(len(str(m.get("content") or "")) for m in messages)
    return chars // 4 + int(params.get("max_tokens") or 256)

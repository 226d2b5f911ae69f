"""The OpenAI fast path's failures, named and worded as litellm names and words them for its `openai` provider.

`faults.py` classifies a failure by its class, HTTP status and headers; the user reads `describe()`'s line, which
shows the class name and message. So that a run behaves and reads the same on either path (retries, 429 waits,
breakers, messages), the fast path raises these instead of litellm's exceptions, chosen by the rules of litellm
1.110's `exception_type` for `custom_llm_provider == "openai"` (litellm/litellm_core_utils/
exception_mapping_utils.py): the same checks in the same order, the same `litellm.<Class>: ...` message. Kept apart
from the client so `faults.py` can check them without importing httpx.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ragjudge.errors import RagjudgeError

PROVIDER = "OpenAIException"


class ProviderError(RagjudgeError):
    """A failed request of the fast path: HTTP status (None: no answer), response headers, whether to retry. The
    gateway turns it into an `LLMError` (or stops the run); a RagjudgeError like every error the package raises."""

    retryable: bool | None = None
    """True/False: what litellm's class of the same name means to `faults.is_retryable`; None: by status."""

    def __init__(self, message: str, status_code: int | None = None, headers: Mapping[str, str] | None = None):
        self.message = f"litellm.{type(self).__name__}: {message}"
        super().__init__(self.message)
        self.status_code = status_code
        self.headers = dict(headers) if headers else {}


class BadRequestError(ProviderError):
    pass


class AuthenticationError(ProviderError):
    retryable = False


class NotFoundError(ProviderError):
    retryable = False


class ContextWindowExceededError(ProviderError):
    retryable = False


class RateLimitError(ProviderError):
    retryable = True


class Timeout(ProviderError):
    retryable = True


class InternalServerError(ProviderError):
    retryable = True


class BadGatewayError(ProviderError):
    retryable = True


class ServiceUnavailableError(ProviderError):
    retryable = True


class APIError(ProviderError):
    pass


class APIConnectionError(ProviderError):
    retryable = True


_CONTEXT_WINDOW = ("exceed context limit", "this model's maximum context length is",
                   "requested token count exceeds the model's maximum context length",
                   "string too long. expected a string with maximum length", "model's maximum context limit",
                   "is longer than the model's context length", "input tokens exceed the configured limit",
                   "`inputs` tokens + `max_new_tokens` must be", "exceeds the available context size",
                   "exceeds the maximum number of tokens allowed", '"code": "context_length_exceeded"',
                   "prompt is too long")


def _rate_limit_words(error: str, status: int) -> bool:
    """litellm's `ExceptionCheckers.is_error_str_rate_limit`."""
    if re.search(r"\b429\b", error) and status == 429:
        return True
    lower = error.lower()
    return bool(re.search(r"rate[\s_\-]*limit", lower)) or "service tier capacity exceeded" in lower


def _context_window_words(error: str) -> bool:
    """litellm's `ExceptionCheckers.is_error_str_context_window_exceeded`."""
    lower = error.lower()
    if "string_above_max_length" in lower or ("invalid 'user'" in lower and "string too long" in lower):
        return False
    return any(words in lower for words in _CONTEXT_WINDOW)


def status_error(status: int, body: bytes, headers: Mapping[str, str]) -> ProviderError:
    """The exception litellm raises for an HTTP error answer of an OpenAI endpoint."""
    text = body.decode("utf-8", "replace")
    try:
        parsed: Any = json.loads(text)
    except ValueError:
        parsed = None
    error = parsed.get("error") if isinstance(parsed, dict) else None
    # the openai SDK's message (what litellm's checks read) and the provider's own words (what it shows)
    error_str = f"Error code: {status} - {parsed if parsed is not None else text}"
    message = error.get("message") if isinstance(error, dict) and isinstance(error.get("message"), str) else None
    if message is None:
        message = error if isinstance(error, str) else (text or error_str)
    said = f"{PROVIDER} - {message}"
    if _rate_limit_words(error_str, status):
        return RateLimitError(f"RateLimitError: {said}", status, headers)
    if _context_window_words(error_str):
        return ContextWindowExceededError(f"ContextWindowExceededError: {said}", status, headers)
    if "invalid_request_error" in error_str and "model_not_found" in error_str:
        return NotFoundError(said, status, headers)
    if "invalid_request_error" in error_str and "Incorrect API key provided" not in error_str:
        kind = {401: AuthenticationError, 404: NotFoundError}.get(status, BadRequestError)
        return kind(said, status, headers)
    if status in (400, 422):
        return BadRequestError(said, status, headers)
    named: dict[int, tuple[type[ProviderError], str]] = {
        401: (AuthenticationError, "AuthenticationError: "), 404: (NotFoundError, "NotFoundError: "),
        408: (Timeout, "Timeout Error: "), 429: (RateLimitError, "RateLimitError: "),
        500: (InternalServerError, "InternalServerError: "), 502: (BadGatewayError, "BadGatewayError: "),
        503: (ServiceUnavailableError, "ServiceUnavailableError: "), 504: (Timeout, "Timeout Error: ")}
    kind, prefix = named.get(status, (APIError, "APIError: "))
    return kind(prefix + said, status, headers)


def garbled(exc: ValueError) -> InternalServerError:
    """A 200 whose body is not a chat/embedding answer: litellm says InternalServerError (HTTP 500)."""
    return InternalServerError(f"InternalServerError: {PROVIDER} - {exc}", 500)


def timed_out(timeout: float, elapsed: float) -> Timeout:
    return Timeout(f"APITimeoutError - Request timed out. Error_str: Request timed out. - timeout value={timeout}, "
                   f"time taken={elapsed:.2f} seconds", 408)


def connection_failed() -> APIConnectionError:
    """The request got no answer (refused, reset, DNS): raised `from` the transport's error, which
    `faults.is_connection_error` reads."""
    return APIConnectionError(f"APIConnectionError: {PROVIDER} - Connection error.")

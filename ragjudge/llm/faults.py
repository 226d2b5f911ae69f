"""What a failed LLM call means: retry it, wait for the rate limit, give up, or stop the run.

- 429: wait for Retry-After (the endpoint's limiter pauses everyone) and try again until the request's time
  budget runs out, never after a small fixed number of attempts;
- 5xx, timeouts, garbled bodies: back off and retry, at most `max_retries` times; once an endpoint/model has
  answered 5xx to its last few requests in a row (`ServerErrorStreak`), at most RAGAS's 3 attempts per call, so a
  provider that is down costs seconds, not minutes of backoff per sample;
- connection refused / DNS / unreachable host: a few in a row open the endpoint's breaker and the run stops
  with "cannot reach ..." (the finished work is journaled), instead of minutes of retries producing nothing;
- 4xx (auth, bad request, context window): fail at once; a key refused a few times in a row (401) with no
  success stops the run, since every later request would be refused too.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from ragjudge.errors import RagjudgeError
from ragjudge.llm import http_errors
from ragjudge.llm._litellm import litellm


class LLMError(RagjudgeError):
    """A call that failed for good (after retries, or at once for errors retrying cannot fix)."""


class ProviderUnreachable(RagjudgeError):
    """The endpoint cannot be reached at all: the run stops (exit 3), its finished work kept."""

    exit_code = 3


class CredentialsRejected(RagjudgeError):
    """The provider refuses the key request after request (a key the preflight could not check): the run stops
    (exit 2, like a missing key), its finished work kept."""


def status_of(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def headers_of(exc: BaseException) -> Any:
    return (getattr(exc, "litellm_response_headers", None) or getattr(exc, "headers", None)
            or getattr(getattr(exc, "response", None), "headers", None))


def retry_after(exc: BaseException) -> float | None:
    headers = headers_of(exc)
    if not headers:
        return None
    try:
        value = headers.get("retry-after") or headers.get("Retry-After")
        return float(value) if value is not None else None
    except (TypeError, ValueError, AttributeError):
        return None


def first_line(exc: BaseException) -> str:
    """An error's first line as messages show it (a provider's error text can run to many lines)."""
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _retry_status(status: int) -> bool:
    return status == 429 or status >= 500


def _loaded_litellm() -> Any:
    """litellm when it is imported, else None: an exception cannot be litellm's before litellm is loaded, and
    classifying the fast path's failures must not import it."""
    return litellm() if "litellm" in sys.modules else None


def is_rate_limited(exc: BaseException) -> bool:
    ll = _loaded_litellm()
    return (isinstance(exc, http_errors.RateLimitError) or (ll is not None and isinstance(exc, ll.RateLimitError))
            or status_of(exc) == 429)


def is_auth_error(exc: BaseException) -> bool:
    ll = _loaded_litellm()
    return (isinstance(exc, http_errors.AuthenticationError)
            or (ll is not None and isinstance(exc, ll.AuthenticationError)) or status_of(exc) == 401)


_CONNECTION_WORDS = ("connection refused", "name or service not known", "nodename nor servname",
                     "no route to host", "network is unreachable", "temporary failure in name resolution",
                     "failed to establish a new connection", "all connection attempts failed")


def is_connection_error(exc: BaseException) -> bool:
    """The request never reached a server (refused, DNS, no route): unlike a timeout, retrying is futile."""
    import socket

    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, (ConnectionRefusedError, socket.gaierror)):
            return True
        text = str(current).lower()
        if any(word in text for word in _CONNECTION_WORDS):
            return True
        current = current.__cause__ or current.__context__
    return False


def is_retryable(exc: BaseException) -> bool:
    """429, 5xx, timeouts, dropped connections and garbled bodies are worth another try; 4xx are not."""
    if isinstance(exc, http_errors.ProviderError):  # the fast path's, named after litellm's: the same answers
        if exc.retryable is not None:
            return exc.retryable
        status = status_of(exc)
        return status is not None and _retry_status(status)
    if isinstance(exc, asyncio.TimeoutError):
        return True
    ll = _loaded_litellm()
    if ll is None:
        status = status_of(exc)
        return _retry_status(status) if status is not None else isinstance(exc, ValueError)
    if isinstance(exc, (ll.AuthenticationError, ll.PermissionDeniedError, ll.NotFoundError,
                        ll.ContextWindowExceededError, ll.ContentPolicyViolationError, ll.UnsupportedParamsError)):
        return False
    if isinstance(exc, (ll.RateLimitError, ll.Timeout, ll.APIConnectionError, ll.InternalServerError,
                        ll.ServiceUnavailableError, ll.BadGatewayError, asyncio.TimeoutError)):
        return True
    if (status := status_of(exc)) is not None:
        return _retry_status(status)
    # Garbled bodies surface as APIError/APIResponseValidationError or plain decode errors.
    return isinstance(exc, (ll.APIError, ll.APIResponseValidationError, ValueError))


def describe(exc: BaseException | None, model: str, attempts: int, endpoint: str | None = None,
             note: str = "") -> str:
    """One line: what failed and why; a refused connection is said as such, never as 'HTTP 500'. `note`: why the
    gateway stopped retrying, when it is not the usual budget (said before the provider's message, which may be
    long)."""
    if exc is None:
        return f"{model}: failed"
    if is_connection_error(exc):
        where = f" {endpoint}" if endpoint else ""
        return f"{model}: cannot connect to{where} (connection refused or host unreachable)"
    status = status_of(exc)
    message = first_line(exc)
    tries = f" after {attempts} attempts" if attempts > 1 else ""
    code = f" (HTTP {status})" if status else ""
    return f"{model}: {type(exc).__name__}{code}{tries}{note}: {message}"[:500]


class Breaker:
    """Opens after `threshold` failures of one kind in a row (connections to an endpoint, a model's refused
    key); any success resets the count. Once open it stays open: the run stops."""

    def __init__(self, threshold: int = 5):
        self.threshold = threshold
        self.failures = 0
        self.open_reason: str | None = None

    def success(self) -> None:
        self.failures = 0

    def failure(self, reason: str) -> bool:
        """Count a failure; True when the breaker is (now) open."""
        self.failures += 1
        if self.failures >= self.threshold:
            self.open_reason = reason
        return self.open_reason is not None


FAILING_ATTEMPTS = 3
"""Attempts per call while an endpoint/model answers 5xx to everything: RAGAS's number."""


class ServerErrorStreak:
    """5xx answers in a row from one endpoint/model. At `threshold` the endpoint is failing: a call stops at
    `FAILING_ATTEMPTS` attempts instead of the full retry budget. Any other answer (a success, a 429, a 4xx) ends
    the streak, so a flaky endpoint that still answers keeps its retries; requests that got no answer (timeouts,
    dropped connections) say nothing either way."""

    def __init__(self, threshold: int = FAILING_ATTEMPTS):
        self.threshold = threshold
        self.count = 0

    def answered(self, status: int | None) -> None:
        """Count an answer's HTTP status (None: the request got none)."""
        if status is None:
            return
        self.count = self.count + 1 if status >= 500 else 0

    @property
    def failing(self) -> bool:
        return self.count >= self.threshold

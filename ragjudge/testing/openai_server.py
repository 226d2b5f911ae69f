"""A local, scriptable OpenAI-compatible HTTP server, so tests exercise the real client stack (litellm -> openai
SDK -> HTTP) instead of patching internals. It speaks enough of the wire protocol (chat with SSE streaming and tool
calls, embeddings, models, files, batches; at OpenAI's and Azure's `/openai/deployments/<name>/...` paths) for
litellm to take it for a provider, with scripted replies and deterministic faults. Standard library only.
Use: docs/testing-offline.md.
"""

from __future__ import annotations

import itertools
import threading
import time

from ragjudge.testing.batches import BatchDesk
from ragjudge.testing.openai_wire import _Handler, _HTTPServer
from ragjudge.testing.replies import (EMBEDDING_DIM, Reply, Request, Responder, _default_responder, _to_reply, by_model,
                                     embed_text, scripted)

__all__ = ["Reply", "Request", "Responder", "OpenAIServer", "scripted", "by_model", "embed_text", "EMBEDDING_DIM"]


class OpenAIServer:
    """OpenAI-compatible server on 127.0.0.1 (free port) in a daemon thread; chat replies default to "OK".

    ``latency`` is added to every chat/embedding request. ``fail_next``/``garbage_next`` hit chat completions only,
    so an interleaved embedding call cannot consume a fault meant for a judge; ``hang_next`` hits either. Faulted
    requests are still recorded. ``judge_mode="lexical"``: a stand-in judge answering every built-in judge's prompt
    by word overlap (`ragjudge.testing.lexical_judge`); a ``responder`` given with it answers first, the judge what
    it passes on (returning None).
    """

    JUDGE_MODES = ("lexical",)

    def __init__(self, responder: Responder | None = None, *, latency: float = 0.0,
                 rate_limit: tuple[int, float] | None = None, max_in_flight: int | None = None,
                 batch_delay: float = 0.5, port: int = 0, judge_mode: str | None = None) -> None:
        self.port = port
        """The port to listen on (0: a free one; the address is always 127.0.0.1)."""
        if judge_mode is not None and judge_mode not in self.JUDGE_MODES:
            raise ValueError(f"judge_mode must be one of {', '.join(self.JUDGE_MODES)}, got {judge_mode!r}")
        self.judge_mode = judge_mode
        self.responder: Responder = responder or _default_responder
        if judge_mode == "lexical":  # imported here: the judge reads ragas's prompts, the server needs only stdlib
            from ragjudge.testing.lexical_judge import lexical_judge

            self.responder = lexical_judge(responder)
        self.batches = BatchDesk(self, batch_delay)
        """Files and batches (OpenAI's batch API): a batch stays in progress for `batch_delay` seconds."""
        self.latency = latency
        self.rate_limit = rate_limit
        """(n, seconds): at most n chat/embedding requests in any window of that many seconds; beyond it a 429
        with Retry-After (the time until the oldest request leaves the window), like a provider's RPM limit."""
        self.max_in_flight = max_in_flight
        """At most this many chat/embedding requests answered at once; one more is refused at once with a 429 (a
        provider's concurrency limit)."""
        self.rate_limited = 0
        """Requests answered 429 by the rate limit or the concurrency limit."""
        self.arrivals: list[float] = []
        """time.monotonic() of every chat/embedding request, to check a client's pacing."""
        self.refused_at: list[float] = []
        """The arrivals answered 429 by the rate limit or the concurrency limit."""
        self.in_flight = 0
        """Chat/embedding requests being answered now (latency and hangs included)."""
        self.peak_in_flight = 0
        """The most requests answered at once: how much a client overlapped its calls, whatever the machine's
        speed (a wall-clock window is not: a loaded machine sends slower, and looks serialised). Each request's
        `in_flight_at_arrival` says how many others were being answered when it came."""
        self.announce_limits = True
        """Send x-ratelimit-* headers (as OpenAI does); False makes a provider that keeps its limit to itself."""
        self._window: list[float] = []
        self.requests: list[Request] = []
        """POST API calls (chat completions, embeddings), in arrival order."""
        self.listings: list[Request] = []
        """GET requests (model listings: ragjudge's preflight), kept apart from the API calls."""
        self.valid_key: str | None = None
        """When set, requests with another bearer key (or Azure `api-key` header) get 401 (model listings: the
        preflight's credential check; API calls: a key refused mid-run). Refused API calls are still recorded in
        `requests`."""
        self.errors: list[BaseException] = []  # exceptions raised by the responder, for debugging
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._faults: list[Reply] = []  # queued chat faults, consumed in order
        self._hangs: list[float] = []
        self._chat_count = 0
        self._httpd: _HTTPServer | None = None
        self.base_url = ""

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> OpenAIServer:
        if self._httpd is None:
            httpd = _HTTPServer(("127.0.0.1", self.port), _Handler)
            httpd.owner = self
            self._httpd = httpd
            self.base_url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
            threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="openai-test-server",
                             daemon=True).start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- fault injection ---------------------------------------------------------------------
    def fail_next(self, n: int, status: int = 500, retry_after: float | None = None) -> None:
        """Make the next ``n`` chat requests fail with ``status`` (and optional Retry-After)."""
        with self._lock:
            self._faults += [Reply(status=status, retry_after=retry_after) for _ in range(n)]

    def hang_next(self, n: int, seconds: float) -> None:
        """Delay the next ``n`` chat/embedding requests by ``seconds``, then answer normally."""
        with self._lock:
            self._hangs += [seconds] * n

    def garbage_next(self, n: int) -> None:
        """Answer the next ``n`` chat requests with HTTP 200 and a non-JSON body."""
        with self._lock:
            self._faults += [Reply(garbage=True) for _ in range(n)]

    # -- inspection --------------------------------------------------------------------------
    def chat_count(self) -> int:
        """Number of chat-completion requests received (including faulted ones)."""
        with self._lock:
            return self._chat_count

    def seen_models(self) -> list[str]:
        """Distinct model names requested so far (served by GET /v1/models)."""
        with self._lock:
            models = dict.fromkeys(r.model for r in self.requests if r.model)
        return list(models) or ["test-model"]

    # -- internal, called from handler threads -----------------------------------------------
    def _record(self, request: Request, *, is_chat: bool) -> None:
        with self._lock:
            if request.method == "GET":  # model listings (ragjudge's preflight check) are not API calls
                self.listings.append(request)
            else:
                self.requests.append(request)
                self._chat_count += is_chat

    def _enter(self, request: Request) -> None:
        with self._lock:
            request.in_flight_at_arrival = self.in_flight
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)

    def _leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _limit_headers(self) -> dict[str, str]:
        """OpenAI's x-ratelimit-* headers, so clients can learn the limit without being told."""
        if self.rate_limit is None or not self.announce_limits:
            return {}
        n, seconds = self.rate_limit
        with self._lock:
            remaining = max(0, n - len(self._window))
        return {"x-ratelimit-limit-requests": f"{n * 60 / seconds:g}", "x-ratelimit-remaining-requests": str(remaining)}

    def _over_limit(self, request: Request) -> float | None:
        """Seconds to wait when this request exceeds the concurrency or the rate limit (it is then not counted in
        the window), else None."""
        now = time.monotonic()
        wait = None
        with self._lock:
            self.arrivals.append(now)
            if self.max_in_flight is not None and (request.in_flight_at_arrival or 0) >= self.max_in_flight:
                wait = 0.05
            elif self.rate_limit is not None:
                n, seconds = self.rate_limit
                self._window = [t for t in self._window if t > now - seconds]
                if len(self._window) >= n:
                    wait = max(0.05, self._window[0] + seconds - now)
                else:
                    self._window.append(now)
            if wait is not None:
                self.rate_limited += 1
                self.refused_at.append(now)
        return wait

    def _answer(self, request: Request) -> tuple[Reply, float]:
        """The next queued chat fault, else the responder's reply (its bug: a 500 naming it), and any hang."""
        fault, hang = self._take_faults(chat=True)
        try:
            return fault or _to_reply(self.responder, request), hang
        except Exception as exc:  # surface responder bugs to the client, not as a dead socket
            self.errors.append(exc)
            return Reply(status=500, content=f"responder error: {exc!r}"), hang

    def _take_faults(self, *, chat: bool) -> tuple[Reply | None, float]:
        with self._lock:
            fault = self._faults.pop(0) if chat and self._faults else None
            hang = self._hangs.pop(0) if self._hangs else 0.0
        return fault, hang

    def _next_id(self) -> str:
        with self._lock:
            return f"{next(self._ids):08x}"


if __name__ == "__main__":  # `python -m ragjudge.testing.openai_server`: the server as a tool of your own CI
    from ragjudge.testing.serve import main

    main(OpenAIServer)

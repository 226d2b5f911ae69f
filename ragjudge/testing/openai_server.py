"""A local, scriptable OpenAI-compatible HTTP server for tests.

Why: every LLM call in ragjudge goes through litellm, so tests should exercise the
real client stack (litellm -> openai SDK -> HTTP) instead of patching internals.
This server speaks enough of the OpenAI wire protocol (chat completions, incl. SSE
streaming and tool calls, embeddings, model listing, files and batches; at OpenAI's paths and at
Azure OpenAI's, `/openai/deployments/<name>/...`) for litellm to treat it as a real provider,
while letting tests script replies and inject faults (rate limits, server errors, hangs,
malformed bodies) deterministically.

Standard library only, so it can be imported anywhere without extra dependencies.

Typical use::

    with OpenAIServer(scripted([(r"faithful", "YES")], default="NO")) as server:
        litellm.completion(model="openai/judge-a", api_base=server.base_url,
                           api_key="sk-test", messages=[...])
"""

from __future__ import annotations

import base64
import itertools
import json
import re
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Mapping

from ragjudge.testing.batches import BatchDesk
from ragjudge.testing.replies import (
    EMBEDDING_DIM,
    Reply,
    Request,
    Responder,
    _default_responder,
    _error_type,
    _to_reply,
    _word_count,
    by_model,
    completion_body,
    embed_text,
    scripted,
    tool_calls_of,
    usage_of,
)

__all__ = ["Reply", "Request", "Responder", "OpenAIServer", "scripted", "by_model", "embed_text", "EMBEDDING_DIM"]

# Headers that carry credentials; they are never stored so API keys cannot leak via test logs.
_SECRET_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "api-key", "x-api-key", "cookie", "openai-organization"}
)


class _Handler(BaseHTTPRequestHandler):
    """Per-connection handler; all state lives on the owning OpenAIServer."""

    protocol_version = "HTTP/1.1"  # keep-alive: realistic client pooling and fast benchmarks
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        """Stay quiet: test output should not be flooded with access logs."""

    # -- routing -----------------------------------------------------------------------------
    def do_GET(self) -> None:
        if self._batch_call(b""):
            return
        request = self._record({})
        if not self._authorized():
            self._send_error(401, "Incorrect API key provided")
        elif self._route() == "/models":
            data = [
                {"id": model, "object": "model", "created": 0, "owned_by": "ragjudge-test"}
                for model in self.server.owner.seen_models()
            ]
            self._send_json(200, {"object": "list", "data": data})
        else:
            self._send_error(404, f"Unknown path {request.path}")

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self._batch_call(raw):
            return
        try:
            body = json.loads(raw or b"{}")
            if not isinstance(body, dict):
                raise ValueError("body must be a JSON object")
        except ValueError as exc:
            self._record({})
            self._send_error(400, f"Invalid JSON body: {exc}")
            return
        request = self._record(body)
        route = self._route()
        if not self._authorized():
            self._send_error(401, "Incorrect API key provided")
        elif route in ("/chat/completions", "/embeddings"):
            owner = self.server.owner
            owner._enter(request)
            try:
                self._chat(request) if route == "/chat/completions" else self._embeddings(request)
            finally:
                owner._leave()
        else:
            self._send_error(404, f"Unknown path {request.path}")

    def _batch_call(self, raw: bytes) -> bool:
        """Files and batches are answered by the server's BatchDesk (testing/batches.py)."""
        route = self._route()
        if not route.startswith(("/files", "/batches")):
            return False
        status, payload = self.server.owner.batches.handle(self.command, route, self.path.partition("?")[2],
                                                           self.headers.get("Content-Type", ""), raw)
        if isinstance(payload, bytes):
            self._send_raw(status, payload, "application/octet-stream")
        else:
            self._send_json(status, payload)
        return True

    def _route(self) -> str:
        """Path without query string and optional /v1 prefix (tolerates api_base with or without /v1). Azure
        OpenAI's paths are answered too: `/openai/deployments/<deployment>/chat/completions?api-version=...`
        (the deployment is also the body's `model`, as the Azure SDK sends it) and `/openai/models`,
        `/openai/files`, `/openai/batches`."""
        path = self.path.split("?", 1)[0].rstrip("/")
        if path.startswith("/openai/"):
            path = re.sub(r"^/openai/deployments/[^/]+/", "/", path).removeprefix("/openai")
        return path[3:] if path.startswith("/v1/") else path

    def _authorized(self) -> bool:
        """No `valid_key`, or the request carries it: as OpenAI's bearer token, or as Azure's `api-key` header."""
        key = self.server.owner.valid_key
        return key is None or self.headers.get("Authorization", "") == f"Bearer {key}" or \
            self.headers.get("api-key", "") == key

    def _record(self, body: dict[str, Any]) -> Request:
        headers = {k.lower(): v for k, v in self.headers.items() if k.lower() not in _SECRET_HEADERS}
        request = Request(path=self.path, method=self.command, body=body, headers=headers)
        if self.command == "GET":  # model listings (ragjudge's preflight check) are not API calls
            self.server.owner._record_listing(request)
        else:
            self.server.owner._record(request, is_chat=self._route() == "/chat/completions")
        return request

    # -- endpoints ---------------------------------------------------------------------------
    def _chat(self, request: Request) -> None:
        owner = self.server.owner
        if (wait := owner._over_limit()) is not None:
            self._send_error(429, "Rate limit reached for requests", round(wait, 2))
            return
        fault, hang = owner._take_faults(chat=True)
        try:
            reply = fault or _to_reply(owner.responder, request)
        except Exception as exc:  # surface responder bugs to the client, not as a dead socket
            owner.errors.append(exc)
            reply = Reply(status=500, content=f"responder error: {exc!r}")
        time.sleep(owner.latency + hang + reply.delay)
        if reply.status != 200:
            self._send_error(reply.status, reply.content, reply.retry_after)
        elif reply.garbage:
            self._send_raw(200, b"<html>502 Bad Gateway: this is not JSON", "application/json")
        elif request.body.get("stream"):
            self._stream(request, reply)
        else:
            self._send_json(200, self._completion(request, reply))

    def _embeddings(self, request: Request) -> None:
        owner = self.server.owner
        if (wait := owner._over_limit()) is not None:
            self._send_error(429, "Rate limit reached for requests", round(wait, 2))
            return
        _, hang = owner._take_faults(chat=False)
        time.sleep(owner.latency + hang)
        raw_input = request.body.get("input", "")
        if isinstance(raw_input, str) or (raw_input and isinstance(raw_input[0], int)):
            raw_input = [raw_input]  # a single string, or a single token array
        dim = int(request.body.get("dimensions") or EMBEDDING_DIM)
        as_base64 = request.body.get("encoding_format") == "base64"  # openai SDK's default
        data = []
        for index, item in enumerate(raw_input):
            text = item if isinstance(item, str) else " ".join(map(str, item))
            vector = embed_text(text, dim)
            encoded: Any = (
                base64.b64encode(struct.pack(f"<{dim}f", *vector)).decode() if as_base64 else vector
            )
            data.append({"object": "embedding", "index": index, "embedding": encoded})
        tokens = sum(_word_count(item) if isinstance(item, str) else len(item) for item in raw_input)
        self._send_json(
            200,
            {
                "object": "list",
                "data": data,
                "model": request.model,
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            },
        )

    # -- response shapes ---------------------------------------------------------------------
    def _completion(self, request: Request, reply: Reply) -> dict[str, Any]:
        return completion_body(request, reply, self.server.owner._next_id)

    def _stream(self, request: Request, reply: Reply) -> None:
        """Send the reply as OpenAI SSE chunks over chunked transfer encoding, then [DONE]."""
        tool_calls = tool_calls_of(reply, self.server.owner._next_id)
        base = {
            "id": f"chatcmpl-{self.server.owner._next_id()}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": request.model,
        }

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}

        events: list[dict[str, Any]] = [chunk({"role": "assistant", "content": ""})]
        events += [chunk({"content": piece}) for piece in re.findall(r"\s*\S+\s*", reply.content or "")]
        for index, call in enumerate(tool_calls or []):
            events.append(chunk({"tool_calls": [{"index": index, **call}]}))
        events.append(chunk({}, "tool_calls" if tool_calls else "stop"))
        if (request.body.get("stream_options") or {}).get("include_usage"):
            events.append({**base, "choices": [], "usage": usage_of(request, reply, tool_calls)})

        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            for payload in [f"data: {json.dumps(e)}\n\n" for e in events] + ["data: [DONE]\n\n"]:
                data = payload.encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    # -- low-level writers -------------------------------------------------------------------
    def _send_error(self, status: int, message: str | None, retry_after: float | None = None) -> None:
        err_type, code = _error_type(status)
        body = {"error": {"message": message or f"Simulated error {status}", "type": err_type, "param": None, "code": code}}
        headers: dict[str, str] = dict(self.server.owner._limit_headers()) if status == 429 else {}
        if retry_after is not None:
            headers["Retry-After"] = f"{retry_after:g}"
        self._send_raw(status, json.dumps(body).encode(), "application/json", headers)

    def _send_json(self, status: int, payload: dict[str, Any]) -> None:
        self._send_raw(status, json.dumps(payload).encode(), "application/json", self.server.owner._limit_headers())

    def _send_raw(self, status: int, data: bytes, content_type: str, headers: Mapping[str, str] | None = None) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):  # client gave up (e.g. its timeout fired)
            self.close_connection = True


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True  # hung handlers must never block interpreter exit or stop()
    request_queue_size = 512  # listen backlog: bursts of concurrent clients must not get SYN drops
    owner: OpenAIServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Ignore clients that disconnect early (timeouts); they are expected in fault tests."""
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


class OpenAIServer:
    """OpenAI-compatible server on 127.0.0.1 (free port) in a daemon thread.

    ``responder`` decides replies for chat completions (default: "OK"); ``latency`` is added to
    every chat/embedding request to model provider round-trips in concurrency benchmarks.
    Fault injection (``fail_next``/``garbage_next``) affects chat completions only, so
    interleaved embedding calls cannot consume a fault meant for a judge call;
    ``hang_next`` affects any chat or embedding request. Faulted requests are still recorded.
    """

    def __init__(self, responder: Responder | None = None, *, latency: float = 0.0,
                 rate_limit: tuple[int, float] | None = None, batch_delay: float = 0.5, port: int = 0) -> None:
        self.port = port
        """The port to listen on (0: a free one; the address is always 127.0.0.1)."""
        self.responder: Responder = responder or _default_responder
        self.batches = BatchDesk(self, batch_delay)
        """Files and batches (OpenAI's batch API): a batch stays in progress for `batch_delay` seconds."""
        self.latency = latency
        self.rate_limit = rate_limit
        """(n, seconds): at most n chat/embedding requests in any window of that many seconds; beyond it a 429
        with Retry-After (the time until the oldest request leaves the window), like a provider's RPM limit."""
        self.rate_limited = 0
        """Requests answered 429 by the rate limit."""
        self.arrivals: list[float] = []
        """time.monotonic() of every chat/embedding request, to check a client's pacing."""
        self.refused_at: list[float] = []
        """The arrivals answered 429 by the rate limit."""
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
        self._thread: threading.Thread | None = None
        self.base_url = ""

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> OpenAIServer:
        if self._httpd is None:
            httpd = _HTTPServer(("127.0.0.1", self.port), _Handler)
            httpd.owner = self
            self._httpd = httpd
            self.base_url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
            self._thread = threading.Thread(
                target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="openai-test-server", daemon=True
            )
            self._thread.start()
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

    def _record_listing(self, request: Request) -> None:
        with self._lock:
            self.listings.append(request)

    def _limit_headers(self) -> dict[str, str]:
        """OpenAI's x-ratelimit-* headers, so clients can learn the limit without being told."""
        if self.rate_limit is None or not self.announce_limits:
            return {}
        n, seconds = self.rate_limit
        with self._lock:
            remaining = max(0, n - len(self._window))
        return {"x-ratelimit-limit-requests": f"{n * 60 / seconds:g}", "x-ratelimit-remaining-requests": str(remaining)}

    def _over_limit(self) -> float | None:
        """Seconds to wait when this request exceeds the rate limit (it is then not counted), else None."""
        now = time.monotonic()
        with self._lock:
            self.arrivals.append(now)
        if self.rate_limit is None:
            return None
        n, seconds = self.rate_limit
        with self._lock:
            self._window = [t for t in self._window if t > now - seconds]
            if len(self._window) >= n:
                self.rate_limited += 1
                self.refused_at.append(now)
                return max(0.05, self._window[0] + seconds - now)
            self._window.append(now)
        return None

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

    main()

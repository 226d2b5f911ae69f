"""A local, scriptable OpenAI-compatible HTTP server for tests.

Why: every LLM call in ragjudge goes through litellm, so tests should exercise the
real client stack (litellm -> openai SDK -> HTTP) instead of patching internals.
This server speaks enough of the OpenAI wire protocol (chat completions, incl. SSE
streaming and tool calls, embeddings, model listing) for litellm to treat it as a
real provider, while letting tests script replies and inject faults (rate limits,
server errors, hangs, malformed bodies) deterministically.

Standard library only, so it can be imported anywhere without extra dependencies.

Typical use::

    with OpenAIServer(scripted([(r"faithful", "YES")], default="NO")) as server:
        litellm.completion(model="openai/judge-a", api_base=server.base_url,
                           api_key="sk-test", messages=[...])
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import math
import re
import struct
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Mapping, Union

__all__ = ["Reply", "Request", "Responder", "OpenAIServer", "scripted", "by_model", "embed_text"]

EMBEDDING_DIM = 32
"""Default embedding size: small enough to be cheap, large enough that unrelated texts differ."""

# Headers that carry credentials; they are never stored so API keys cannot leak via test logs.
_SECRET_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "api-key", "x-api-key", "cookie", "openai-organization"}
)


@dataclass
class Reply:
    """What the server should answer to one request.

    ``status != 200`` produces an OpenAI-style error body (``content`` becomes the error
    message) and takes precedence over ``garbage``. Token counts default to rough word
    counts so usage accounting code sees plausible, deterministic numbers.
    """

    content: str | None = None
    tool_calls: list[dict[str, Any]] | None = None  # [{"name": ..., "arguments": {...} or "json"}]
    status: int = 200
    retry_after: float | None = None
    delay: float = 0.0
    garbage: bool = False
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


@dataclass
class Request:
    """One received HTTP request, as seen by responders and recorded in ``OpenAIServer.requests``.

    ``headers`` never contains credential headers (Authorization etc.).
    """

    path: str
    method: str = "POST"
    body: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)

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
        return "\n".join(
            str(part.get("text", "")) for part in content if isinstance(part, dict) and part.get("type") == "text"
        )
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
    """Build a responder from ``(regex, reply)`` rules; the first match wins.

    A rule matches if its regex (``re.DOTALL``) is found in the last user message or in the
    whole concatenated prompt, so rules can key on the question or on injected context.
    Replies may be str, Reply, or a Responder for dynamic answers.
    """
    compiled = [(re.compile(pattern, re.DOTALL), reply) for pattern, reply in rules]

    def respond(request: Request) -> str | Reply:
        last_user, prompt = request.last_user, request.prompt
        for pattern, reply in compiled:
            if pattern.search(last_user) or pattern.search(prompt):
                return _to_reply(reply, request)
        return _to_reply(default, request)

    return respond


def by_model(mapping: Mapping[str, ReplySpec], default: ReplySpec | None = None) -> Responder:
    """Dispatch on the request's ``model`` so one server can play several judges/generators.

    Keys may be given with or without a litellm provider prefix (``openai/judge-a`` and
    ``judge-a`` both match, since litellm strips the prefix on the wire). Unknown models get
    ``default``, or a 404 ``model_not_found`` error like the real API.
    """
    table = {key.split("/", 1)[1] if key.startswith("openai/") else key: value for key, value in mapping.items()}

    def respond(request: Request) -> str | Reply:
        model = request.model or ""
        spec = table.get(model, table.get(model.split("/", 1)[-1]))
        if spec is None:
            spec = default
        if spec is None:
            return Reply(status=404, content=f"The model `{model}` does not exist")
        return _to_reply(spec, request)

    return respond


def embed_text(text: str, dim: int = EMBEDDING_DIM) -> list[float]:
    """Deterministic bag-of-words embedding: unit vector built from hashed lowercase words.

    Texts sharing words get positive cosine similarity, so retrieval code behaves
    sensibly; identical texts give identical vectors across runs and processes.
    """
    vector = [0.0] * dim
    for word in re.findall(r"\w+", text.lower()):
        digest = hashlib.sha256(word.encode()).digest()
        for i in range(0, 8, 2):  # 4 signed buckets per word keeps collisions rare
            vector[digest[i] % dim] += 1.0 if digest[i + 1] & 1 else -1.0
    norm = math.sqrt(sum(v * v for v in vector))
    if norm == 0.0:  # empty text: a fixed unit vector avoids NaN cosine downstream
        return [1.0] + [0.0] * (dim - 1)
    return [v / norm for v in vector]


def _word_count(text: str) -> int:
    return len(text.split())


def _error_type(status: int) -> tuple[str, str | None]:
    """OpenAI's (type, code) pair for an HTTP status, so SDK error mapping is realistic."""
    return {
        400: ("invalid_request_error", None),
        401: ("invalid_request_error", "invalid_api_key"),
        403: ("invalid_request_error", None),
        404: ("invalid_request_error", "model_not_found"),
        429: ("requests", "rate_limit_exceeded"),
    }.get(status, ("server_error", None))


class _Handler(BaseHTTPRequestHandler):
    """Per-connection handler; all state lives on the owning OpenAIServer."""

    protocol_version = "HTTP/1.1"  # keep-alive: realistic client pooling and fast benchmarks
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        """Stay quiet: test output should not be flooded with access logs."""

    # -- routing -----------------------------------------------------------------------------
    def do_GET(self) -> None:
        request = self._record({})
        if self._route() == "/models":
            data = [
                {"id": model, "object": "model", "created": 0, "owned_by": "ragjudge-test"}
                for model in self.server.owner.seen_models()
            ]
            self._send_json(200, {"object": "list", "data": data})
        else:
            self._send_error(404, f"Unknown path {request.path}")

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
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
        if route == "/chat/completions":
            self._chat(request)
        elif route == "/embeddings":
            self._embeddings(request)
        else:
            self._send_error(404, f"Unknown path {request.path}")

    def _route(self) -> str:
        """Path without query string and optional /v1 prefix (tolerates api_base with or without /v1)."""
        path = self.path.split("?", 1)[0].rstrip("/")
        return path[3:] if path.startswith("/v1/") else path

    def _record(self, body: dict[str, Any]) -> Request:
        headers = {k.lower(): v for k, v in self.headers.items() if k.lower() not in _SECRET_HEADERS}
        request = Request(path=self.path, method=self.command, body=body, headers=headers)
        self.server.owner._record(request, is_chat=self._route() == "/chat/completions")
        return request

    # -- endpoints ---------------------------------------------------------------------------
    def _chat(self, request: Request) -> None:
        owner = self.server.owner
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
    def _tool_calls(self, reply: Reply) -> list[dict[str, Any]] | None:
        if not reply.tool_calls:
            return None
        calls = []
        for call in reply.tool_calls:
            arguments = call.get("arguments", {})
            calls.append(
                {
                    "id": call.get("id") or f"call_{self.server.owner._next_id()}",
                    "type": "function",
                    "function": {
                        "name": call["name"],
                        "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
                    },
                }
            )
        return calls

    def _usage(self, request: Request, reply: Reply, tool_calls: list[dict[str, Any]] | None) -> dict[str, int]:
        prompt = reply.prompt_tokens if reply.prompt_tokens is not None else _word_count(request.prompt)
        if reply.completion_tokens is not None:
            completion = reply.completion_tokens
        else:
            completion = _word_count(reply.content or "") + sum(
                _word_count(c["function"]["arguments"]) + 1 for c in tool_calls or []
            )
        return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}

    def _completion(self, request: Request, reply: Reply) -> dict[str, Any]:
        tool_calls = self._tool_calls(reply)
        message: dict[str, Any] = {"role": "assistant", "content": reply.content, "tool_calls": tool_calls}
        return {
            "id": f"chatcmpl-{self.server.owner._next_id()}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.model,
            "system_fingerprint": None,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": "tool_calls" if tool_calls else "stop",
                }
            ],
            "usage": self._usage(request, reply, tool_calls),
        }

    def _stream(self, request: Request, reply: Reply) -> None:
        """Send the reply as OpenAI SSE chunks over chunked transfer encoding, then [DONE]."""
        tool_calls = self._tool_calls(reply)
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
            events.append({**base, "choices": [], "usage": self._usage(request, reply, tool_calls)})

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
        headers: dict[str, str] = {}
        if retry_after is not None:
            headers["Retry-After"] = f"{retry_after:g}"
        self._send_raw(status, json.dumps(body).encode(), "application/json", headers)

    def _send_json(self, status: int, payload: dict[str, Any]) -> None:
        self._send_raw(status, json.dumps(payload).encode(), "application/json")

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

    def __init__(self, responder: Responder | None = None, *, latency: float = 0.0) -> None:
        self.responder: Responder = responder or _default_responder
        self.latency = latency
        self.requests: list[Request] = []
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
            httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
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

    def _take_faults(self, *, chat: bool) -> tuple[Reply | None, float]:
        with self._lock:
            fault = self._faults.pop(0) if chat and self._faults else None
            hang = self._hangs.pop(0) if self._hangs else 0.0
        return fault, hang

    def _next_id(self) -> str:
        with self._lock:
            return f"{next(self._ids):08x}"

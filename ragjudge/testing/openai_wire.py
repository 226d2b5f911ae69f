"""The HTTP side of the local OpenAI-compatible test server: routes, request records and response bodies at
OpenAI's and Azure OpenAI's paths. What to answer and which faults to inject are the owning `OpenAIServer`'s
(`openai_server.py`); this module only speaks the protocol."""

from __future__ import annotations

import base64
import json
import re
import struct
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Mapping

from ragjudge.testing.replies import (EMBEDDING_DIM, Reply, Request, _word_count, completion_body, embed_text,
                                     error_body, tool_calls_of, usage_of)

# Headers that carry credentials; they are never stored so API keys cannot leak via test logs.
_SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "api-key", "x-api-key", "cookie",
                             "openai-organization"})


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
            models = self.server.owner.seen_models()
            self._send_json(200, {"object": "list", "data": [
                {"id": m, "object": "model", "created": 0, "owned_by": "ragjudge-test"} for m in models]})
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
        """Path without query string and optional /v1 prefix; Azure's `/openai/deployments/<deployment>/...` (the
        deployment taken as the body's `model`, as the Azure SDK sends it) and `/openai/<endpoint>` map to ours."""
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
        self.server.owner._record(request, is_chat=self._route() == "/chat/completions")
        return request

    # -- endpoints ---------------------------------------------------------------------------
    def _chat(self, request: Request) -> None:
        owner = self.server.owner
        if (wait := owner._over_limit(request)) is not None:
            self._send_error(429, "Rate limit reached for requests", round(wait, 2))
            return
        reply, hang = owner._answer(request)
        time.sleep(owner.latency + hang + reply.delay)
        if reply.status != 200:
            self._send_error(reply.status, reply.content, reply.retry_after)
        elif reply.garbage:
            self._send_raw(200, b"<html>502 Bad Gateway: this is not JSON", "application/json")
        elif request.body.get("stream"):
            self._stream(request, reply)
        else:
            self._send_json(200, completion_body(request, reply, owner._next_id))

    def _embeddings(self, request: Request) -> None:
        owner = self.server.owner
        if (wait := owner._over_limit(request)) is not None:
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
            encoded = base64.b64encode(struct.pack(f"<{dim}f", *vector)).decode() if as_base64 else vector
            data.append({"object": "embedding", "index": index, "embedding": encoded})
        tokens = sum(_word_count(item) if isinstance(item, str) else len(item) for item in raw_input)
        self._send_json(200, {"object": "list", "data": data, "model": request.model,
                              "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})

    # -- response shapes ---------------------------------------------------------------------
    def _stream(self, request: Request, reply: Reply) -> None:
        """Send the reply as OpenAI SSE chunks over chunked transfer encoding, then [DONE]."""
        tool_calls = tool_calls_of(reply, self.server.owner._next_id)
        base = {"id": f"chatcmpl-{self.server.owner._next_id()}", "object": "chat.completion.chunk",
                "created": int(time.time()), "model": request.model}

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
        headers: dict[str, str] = dict(self.server.owner._limit_headers()) if status == 429 else {}
        if retry_after is not None:
            headers["Retry-After"] = f"{retry_after:g}"
        self._send_raw(status, json.dumps(error_body(status, message)).encode(), "application/json", headers)

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
    owner: Any
    """The OpenAIServer that answers (not imported: it imports this module)."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Ignore clients that disconnect early (timeouts); they are expected in fault tests."""
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)

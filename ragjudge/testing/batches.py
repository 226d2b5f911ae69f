"""The files and batches endpoints of the test server: OpenAI's batch API, emulated (stdlib only), so `--batch`
tests drive litellm's real files + batches calls: a batch stays `in_progress` a while (counts growing), then has an
output and an error file; batches list newest first; cancellation works. The chat fault queue applies to batch lines
too (one item of a batch can fail); `submitted` keeps every custom id, to prove nothing is submitted twice.
"""

from __future__ import annotations

import email.parser
import email.policy
import json
import threading
import time
from typing import Any, Protocol
from urllib.parse import parse_qs

from ragjudge.testing.replies import Reply, Request, completion_body, error_body


class BatchOwner(Protocol):
    """What the batch desk needs of the server it serves (`OpenAIServer`): ids, and the answer (or fault) to a line."""

    def _next_id(self) -> str: ...

    def _answer(self, request: Request) -> tuple[Reply, float]: ...


FINAL = ("completed", "failed", "expired", "cancelled")


class BatchDesk:
    """State of the emulated files and batches; `delay` is how long a batch stays in progress."""

    def __init__(self, owner: BatchOwner, delay: float = 0.5):
        self.owner = owner
        self.delay = delay
        self.files: dict[str, dict[str, Any]] = {}
        self.contents: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.submitted: list[str] = []
        """Custom ids of every line of every batch created, in order (a resubmitted request appears twice)."""
        self.lines: list[Request] = []
        """Every batch line answered, as the request the responder saw."""
        self.calls: list[tuple[str, str]] = []
        """(method, path) of every files/batches call."""
        self.fail_creates = 0
        """Answer the next N batch creations with HTTP 500 (no batch created)."""
        self.lose_creates = 0
        """Create the next N batches but answer HTTP 500, as when the answer is lost in transit."""
        self._inputs: dict[str, list[dict[str, Any]]] = {}
        self._lock = threading.Lock()

    # -- routing --------------------------------------------------------------------------------

    def handle(self, method: str, route: str, query: str, content_type: str, raw: bytes) -> tuple[int, Any]:
        """(status, JSON object or bytes) for one files/batches call."""
        with self._lock:
            self.calls.append((method, route))
        parts = route.strip("/").split("/")
        try:
            if parts == ["files"] and method == "POST":
                return self._upload(content_type, raw)
            if parts[0] == "files" and len(parts) == 3 and parts[2] == "content" and method == "GET":
                return (200, self.contents[parts[1]]) if parts[1] in self.contents else _not_found("file", parts[1])
            if parts[0] == "files" and len(parts) == 2 and method == "GET":
                return (200, self.files[parts[1]]) if parts[1] in self.files else _not_found("file", parts[1])
            if parts == ["batches"] and method == "POST":
                return self._create(json.loads(raw or b"{}"))
            if parts == ["batches"] and method == "GET":
                return self._list(parse_qs(query))
            if parts[0] == "batches" and len(parts) == 2 and method == "GET":
                return self._retrieve(parts[1])
            if parts[0] == "batches" and len(parts) == 3 and parts[2] == "cancel" and method == "POST":
                return self._cancel(parts[1])
        except (ValueError, KeyError) as exc:
            return _error(400, f"bad request: {exc}")
        return _error(404, f"Unknown path {route}")

    # -- files ----------------------------------------------------------------------------------

    def _upload(self, content_type: str, raw: bytes) -> tuple[int, Any]:
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            f"Content-Type: {content_type}\r\n\r\n".encode() + raw)
        fields: dict[str, tuple[str | None, bytes]] = {}
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            fields[str(name)] = (part.get_filename(), part.get_payload(decode=True) or b"")
        if "file" not in fields or "purpose" not in fields:
            return _error(400, "a file upload needs the fields 'file' and 'purpose'")
        filename, data = fields["file"]
        return 200, self._store(data, fields["purpose"][1].decode(), filename or "upload.jsonl")

    def _store(self, data: bytes, purpose: str, filename: str) -> dict[str, Any]:
        file_id = f"file-{self.owner._next_id()}"
        meta = {"id": file_id, "object": "file", "bytes": len(data), "created_at": int(time.time()),
                "filename": filename, "purpose": purpose, "status": "processed"}
        with self._lock:
            self.files[file_id], self.contents[file_id] = meta, data
        return meta

    # -- batches --------------------------------------------------------------------------------

    def _create(self, body: dict[str, Any]) -> tuple[int, Any]:
        file_id = body.get("input_file_id")
        if file_id not in self.contents:
            return _not_found("file", str(file_id))
        with self._lock:
            if self.fail_creates > 0:
                self.fail_creates -= 1
                return _error(500, "The server had an error while creating the batch")
        lines = [json.loads(line) for line in self.contents[file_id].decode().splitlines() if line.strip()]
        ids = [str(line["custom_id"]) for line in lines]
        if len(set(ids)) != len(ids):
            return _error(400, "custom_id values must be unique within a batch")
        now = int(time.time())
        batch = {"id": f"batch_{self.owner._next_id()}", "object": "batch", "endpoint": body.get("endpoint"),
                 "errors": None, "input_file_id": file_id, "completion_window": body.get("completion_window", "24h"),
                 "status": "in_progress", "output_file_id": None, "error_file_id": None, "created_at": now,
                 "in_progress_at": now, "expires_at": now + 86400, "finalizing_at": None, "completed_at": None,
                 "failed_at": None, "expired_at": None, "cancelling_at": None, "cancelled_at": None,
                 "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
                 "metadata": body.get("metadata"), "_started": time.monotonic()}
        with self._lock:
            self.batches[batch["id"]] = batch
            self._inputs[batch["id"]] = lines
            self.submitted.extend(ids)
            if self.lose_creates > 0:
                self.lose_creates -= 1
                return _error(500, "The server had an error while processing your request")
        return 200, _public(batch)

    def _retrieve(self, batch_id: str) -> tuple[int, Any]:
        if batch_id not in self.batches:
            return _not_found("batch", batch_id)
        return 200, _public(self._advance(self.batches[batch_id]))

    def _list(self, query: dict[str, list[str]]) -> tuple[int, Any]:
        limit = int(query.get("limit", ["20"])[0])
        after = query.get("after", [None])[0]
        with self._lock:
            newest_first = list(reversed(self.batches.values()))
        if after is not None:
            ids = [b["id"] for b in newest_first]
            newest_first = newest_first[ids.index(after) + 1:] if after in ids else []
        page = [_public(self._advance(b)) for b in newest_first[:limit]]
        return 200, {"object": "list", "data": page, "first_id": page[0]["id"] if page else None,
                     "last_id": page[-1]["id"] if page else None, "has_more": len(newest_first) > limit}

    def _cancel(self, batch_id: str) -> tuple[int, Any]:
        if batch_id not in self.batches:
            return _not_found("batch", batch_id)
        batch = self._advance(self.batches[batch_id])
        if batch["status"] not in FINAL:
            batch.update(status="cancelled", cancelling_at=int(time.time()), cancelled_at=int(time.time()))
        return 200, _public(batch)

    def _advance(self, batch: dict[str, Any]) -> dict[str, Any]:
        """In progress until `delay` has passed (counts growing meanwhile), then every line answered at once."""
        with self._lock:
            if batch["status"] != "in_progress":
                return batch
            elapsed = time.monotonic() - batch["_started"]
            total = batch["request_counts"]["total"]
            if elapsed < self.delay:
                batch["request_counts"]["completed"] = int(total * elapsed / self.delay) if self.delay else 0
                return batch
            batch["status"] = "finalizing"
        output, errors = [], []
        for line in self._inputs[batch["id"]]:
            answered = self._answer(line)
            (output if answered["response"]["status_code"] == 200 else errors).append(answered)
        now = int(time.time())
        output_file = self._jsonl(output, batch["id"]) if output else None
        error_file = self._jsonl(errors, batch["id"] + "_errors") if errors else None
        with self._lock:
            batch["output_file_id"], batch["error_file_id"] = output_file, error_file
            batch["request_counts"] = {"total": len(output) + len(errors), "completed": len(output),
                                       "failed": len(errors)}
            batch.update(status="completed", finalizing_at=now, completed_at=now)
        return batch

    def _jsonl(self, rows: list[dict[str, Any]], name: str) -> str:
        return self._store("".join(json.dumps(row) + "\n" for row in rows).encode(), "batch_output",
                           f"{name}.jsonl")["id"]

    def _answer(self, line: dict[str, Any]) -> dict[str, Any]:
        """One output line: the responder's answer (or the next queued chat fault) to the line's body."""
        request = Request(path=str(line.get("url", "/v1/chat/completions")), body=dict(line.get("body") or {}))
        with self._lock:
            self.lines.append(request)
        reply, _ = self.owner._answer(request)  # a responder bug becomes a failed line, as a 500 on a direct call
        if reply.garbage:
            reply = Reply(status=502, content="Bad gateway")
        request_id = f"req_{self.owner._next_id()}"
        body = error_body(reply.status, reply.content) if reply.status != 200 else \
            completion_body(request, reply, self.owner._next_id)
        return {"id": f"batch_req_{self.owner._next_id()}", "custom_id": line.get("custom_id"),
                "response": {"status_code": reply.status, "request_id": request_id, "body": body}, "error": None}


def _public(batch: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in batch.items() if not k.startswith("_")}


def _error(status: int, message: str) -> tuple[int, Any]:
    return status, error_body(status, message)


def _not_found(kind: str, ident: str) -> tuple[int, Any]:
    return _error(404, f"No such {kind}: {ident}")

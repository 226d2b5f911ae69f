"""Persistent on-disk cache of LLM responses, so a rerun never pays for the same call twice.

SQLite in WAL mode: each write is durable on commit, so a run killed mid-way keeps every response
it had received. The key covers model, messages and every parameter that changes the answer, but
never credentials.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from pathlib import Path
from typing import Any

# Parameters that do not change what the model answers, or are secrets: never part of the key.
_NOT_IN_KEY = {"api_key", "timeout", "num_retries", "max_retries", "metadata", "stream"}


def default_cache_dir() -> Path:
    env = os.environ.get("RAGJUDGE_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ragjudge"


def cache_key(model: str, messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
    kept = {k: v for k, v in sorted(params.items()) if k not in _NOT_IN_KEY and v is not None}
    blob = json.dumps({"model": model, "messages": messages, "params": kept}, sort_keys=True, ensure_ascii=False,
                      default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    """Key → response payload (a JSON object) in one SQLite file."""

    def __init__(self, directory: str | Path | None = None):
        self.directory = Path(directory) if directory is not None else default_cache_dir()
        self.directory.mkdir(parents=True, exist_ok=True)
        self.path = self.directory / "llm-responses.sqlite"
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, model TEXT, payload TEXT)")

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute("SELECT payload FROM responses WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, model: str, payload: dict[str, Any]) -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO responses VALUES (?, ?, ?)", (key, model, json.dumps(payload)))

    def delete(self, key: str) -> None:
        with self._lock:
            self._db.execute("DELETE FROM responses WHERE key = ?", (key,))

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()

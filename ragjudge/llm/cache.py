"""Persistent on-disk cache of LLM responses, so a rerun never pays for the same call twice.

SQLite in WAL mode: each write is durable on commit, so a run killed mid-way keeps every response
it had received. The key covers model, messages and every parameter that changes the answer, but
never credentials.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ragjudge.llm.faults import first_line

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


def _warn_stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class ResponseCache:
    """Key → response payload (a JSON object) in one SQLite file.

    A cache is a help, never a reason to stop a run: when it cannot be opened or written (full disk, read-only
    folder, a broken file) it turns itself off (or only its writes) with one warning and the run goes on;
    reads that fail count as misses. `open_cache` returns None instead of a cache that is off."""

    def __init__(self, directory: str | Path | None = None, *, warn: Callable[[str], None] = _warn_stderr):
        self.directory = Path(directory) if directory is not None else default_cache_dir()
        self.path = self.directory / "llm-responses.sqlite"
        self._warn = warn
        self._lock = threading.Lock()
        self.writable = True
        self.readable = True
        self.problem: str | None = None
        """Why the cache degraded (None while it works): shown once as a warning."""
        self._db: sqlite3.Connection | None = None
        try:
            self._db = self._connect()
        except (OSError, sqlite3.Error) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else first_line(exc)
            self._db = self._connect_read_only()
            if self._db is None:
                self._degrade(f"cannot be opened ({reason})", reads_too=True)
            else:  # e.g. a read-only folder: keep answering from what is there
                self._degrade(f"cannot be written ({reason})", reads_too=False)

    def _connect(self) -> sqlite3.Connection:
        self.directory.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, model TEXT, payload TEXT)")
        except sqlite3.Error:
            db.close()
            raise
        return db

    def _connect_read_only(self) -> sqlite3.Connection | None:
        if not self.path.is_file():
            return None
        for mode in ("mode=ro", "immutable=1"):  # immutable: no lock files needed (a full or read-only disk)
            try:
                db = sqlite3.connect(f"{self.path.as_uri()}?{mode}", uri=True, check_same_thread=False,
                                     isolation_level=None)
            except sqlite3.Error:
                continue
            try:
                db.execute("SELECT COUNT(*) FROM responses").fetchone()
                return db
            except sqlite3.Error:
                db.close()
        return None

    def _degrade(self, reason: str, *, reads_too: bool) -> None:
        first = self.problem is None
        self.writable = False
        self.readable = self.readable and not reads_too
        self.problem = reason
        if first:
            what = "off" if reads_too else "read-only"
            self._warn(f"warning: the LLM response cache {self.path} {reason}: the run goes on with the cache "
                       f"{what} (new responses are not saved, so a rerun pays for them again)")

    def get(self, key: str) -> dict[str, Any] | None:
        if not self.readable or self._db is None:
            return None
        try:
            with self._lock:
                row = self._db.execute("SELECT payload FROM responses WHERE key = ?", (key,)).fetchone()
            return json.loads(row[0]) if row else None
        except (sqlite3.Error, ValueError, TypeError) as exc:  # a damaged file or row: a miss, not a crash
            self._degrade(f"cannot be read ({first_line(exc)})", reads_too=True)
            return None

    def put(self, key: str, model: str, payload: dict[str, Any]) -> None:
        if not self.writable or self._db is None:
            return
        try:
            with self._lock:
                self._db.execute("INSERT OR REPLACE INTO responses VALUES (?, ?, ?)",
                                 (key, model, json.dumps(payload)))
        except sqlite3.Error as exc:  # "database or disk is full", "attempt to write a readonly database"
            self._degrade(f"cannot be written ({first_line(exc)})", reads_too=False)

    def delete(self, key: str) -> None:
        with self._lock:
            self._db.execute("DELETE FROM responses WHERE key = ?", (key,))

    def __len__(self) -> int:
        if self._db is None:
            return 0
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                with contextlib.suppress(sqlite3.Error):
                    self._db.close()


def open_cache(directory: str | Path | None = None, *,
               warn: Callable[[str], None] = _warn_stderr) -> ResponseCache | None:
    """The response cache in `directory`, or None (after one warning) when it cannot be opened at all (a full
    disk, a file where the folder should be, a damaged database): runs go on without a cache."""
    cache = ResponseCache(directory, warn=warn)
    if not cache.readable:
        cache.close()
        return None
    return cache

"""Resumable CXMArena runs: every finished item is appended (fsynced) to a journal; a rerun reuses rows
whose stage, key and fingerprint match and that did not fail, so no finished LLM call is repeated."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragjudge.formats.jsonl import JsonlAppender, read_jsonl


class StageJournal:
    def __init__(self, path: Path):
        self.path = path
        self._done: dict[tuple[str, str, str], dict[str, Any]] = {}
        if path.exists():
            for _, rec in read_jsonl(path, tolerate_truncated_tail=True):
                row = rec.get("row") or {}
                if not row.get("error"):
                    self._done[(rec["stage"], rec["key"], rec["fp"])] = row
        self._out: JsonlAppender | None = None

    def get(self, stage: str, key: str, fp: str) -> dict[str, Any] | None:
        return self._done.get((stage, key, fp))

    def record(self, stage: str, key: str, fp: str, row: dict[str, Any]) -> None:
        if self._out is None:
            self._out = JsonlAppender(self.path)
        self._out.append({"stage": stage, "key": key, "fp": fp, "row": row})
        if not row.get("error"):
            self._done[(stage, key, fp)] = row

    def close(self) -> None:
        if self._out is not None:
            self._out.close()
            self._out = None

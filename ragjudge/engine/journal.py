"""The one journal: an append-only JSONL log of finished outputs and scores that makes every run resumable.
Each line is `{"stage", "key", "fp", "value"}` (`solve` or a scorer's name, the sample id, a fingerprint of
everything the value was computed from); a rerun reuses a value only when all three match and it is not an error,
so a changed model, prompt, passage or answer is computed again and a failure is retried. Lines are fsynced; a line
torn by a kill is dropped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragjudge.formats.jsonl import JsonlAppender, read_jsonl

Value = dict[str, Any]


class Journal:
    """`path=None` keeps nothing on disk (a run that writes no files)."""

    def __init__(self, path: Path | None):
        self.path = path
        self._done: dict[tuple[str, str, str], Value] = {}
        self._out: JsonlAppender | None = None
        if path is not None and path.exists():
            for _, rec in read_jsonl(path, tolerate_truncated_tail=True):
                value = rec.get("value")
                if isinstance(value, dict) and not value.get("error"):
                    self._done[(str(rec.get("stage")), str(rec.get("key")), str(rec.get("fp")))] = value

    def get(self, stage: str, key: str, fp: str) -> Value | None:
        return self._done.get((stage, key, fp))

    def record(self, stage: str, key: str, fp: str, value: Value) -> None:
        if self.path is not None:
            if self._out is None:
                self._out = JsonlAppender(self.path)
            self._out.append({"stage": stage, "key": key, "fp": fp, "value": value})
        if not value.get("error"):
            self._done[(stage, key, fp)] = value

    def close(self) -> None:
        if self._out is not None:
            self._out.close()
            self._out = None

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

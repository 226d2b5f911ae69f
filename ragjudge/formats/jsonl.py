"""JSON Lines reading and writing with line numbers for errors, and appends that survive a crash."""

from __future__ import annotations

import io
import json
import math
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ragjudge.errors import InputError

if TYPE_CHECKING:
    from pydantic import BaseModel

M = TypeVar("M", bound="BaseModel")


def read_jsonl(path: str | Path, *, tolerate_truncated_tail: bool = False) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, object) for each non-blank line.

    `tolerate_truncated_tail` is for our own append-only journals: a process killed mid-write leaves
    a partial last line, which is dropped instead of failing the resume.
    """
    lines = read_text_lines(path)
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            is_tail = number == len(lines) and not line.endswith("\n")
            if tolerate_truncated_tail and is_tail:
                return
            raise InputError(f"invalid JSON ({exc.msg} at column {exc.colno})", file=str(path), line=number) from None
        if not isinstance(obj, dict):
            raise InputError(f"expected a JSON object, got {type(obj).__name__}", file=str(path), line=number)
        yield number, obj


def read_text_lines(path: str | Path) -> list[str]:
    """A text file's lines; a missing file, a folder or bytes that are not UTF-8 are one-line InputErrors."""
    path = Path(path)
    if not path.exists():
        raise InputError("file not found", file=str(path))
    if path.is_dir():
        raise InputError("is a folder, not a file", file=str(path))
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); save the file as "
                         "UTF-8", file=str(path), line=line) from None
    return io.StringIO(text, newline=None).readlines()  # universal newlines, as open() reads text


def to_jsonable(value: Any) -> Any:
    """Replace NaN/inf (which MTRAG files contain but strict JSON forbids) with null, recursively."""
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    if isinstance(value, dict):
        return {k: to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    return value


def dumps(obj: Any) -> str:
    return json.dumps(to_jsonable(obj), ensure_ascii=False, allow_nan=False)


def write_jsonl(path: str | Path, rows: Iterable[dict[str, Any]]) -> None:
    """Write atomically: a reader never sees a half-written results file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(dumps(row) + "\n")
    os.replace(tmp, path)


class JsonlAppender:
    """Append-only journal: each record is flushed and fsynced so a kill loses at most the line in flight."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        _drop_partial_tail(self.path)
        self._fh = self.path.open("a", encoding="utf-8")

    def append(self, record: dict[str, Any]) -> None:
        self._fh.write(dumps(record) + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> JsonlAppender:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _drop_partial_tail(path: Path) -> None:
    """Cut a line left half-written by a killed process, so new records start on a fresh line."""
    if not path.exists() or path.stat().st_size == 0:
        return
    data = path.read_bytes()
    if data.endswith(b"\n"):
        return
    cut = data.rfind(b"\n") + 1
    with path.open("r+b") as fh:
        fh.truncate(cut)


def read_models(path: str | Path, model: type[M]) -> list[M]:
    """Every line of a JSONL file validated as `model`; the first bad line is an InputError naming the file,
    the line and the field (what a bench's `load` wants at its boundary)."""
    from pydantic import ValidationError

    out = []
    for number, record in read_jsonl(path):
        try:
            out.append(model.model_validate(record))
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"]) or None
            raise InputError(err["msg"].removeprefix("Value error, "), file=str(path), line=number,
                             field=field) from None
    return out

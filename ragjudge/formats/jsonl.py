"""JSON Lines reading and writing with line numbers for errors, appends that survive a crash, and whole JSON
documents read with the same errors (file, line and column)."""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Iterable, Iterator
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ragjudge.errors import InputError
from ragjudge.formats.files import atomic_output, iter_lines, read_text, writing

if TYPE_CHECKING:
    from pydantic import BaseModel

M = TypeVar("M", bound="BaseModel")


def read_jsonl(path: str | Path, *, tolerate_truncated_tail: bool = False) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, object) for each non-blank line, streaming (memory bounded by the longest line).
    `tolerate_truncated_tail` is for our own append-only journals: the partial last line a process killed mid-write
    leaves is dropped instead of failing the resume."""
    for number, line, complete in iter_lines(path, "JSON Lines file"):
        if not line.strip():
            continue
        obj = parse_json_line(line, file=str(path), line=number, tolerate=tolerate_truncated_tail and not complete)
        del line  # not kept alive while the caller holds the parsed record
        if obj is None:
            return
        yield number, obj


def parse_json_line(text: str, *, file: str, line: int, tolerate: bool = False) -> dict[str, Any] | None:
    """One JSON object; anything else is an InputError naming file and line (None: a torn tail to drop)."""
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        if tolerate:
            return None
        raise _syntax_error(exc, file=file, line=line) from None
    except RecursionError:
        raise InputError("invalid JSON (nested too deeply)", file=file, line=line) from None
    if not isinstance(obj, dict):
        raise InputError(f"expected a JSON object, got {json_type(obj)}", file=file, line=line)
    return obj


def read_json(path: str | Path, what: str = "JSON file") -> Any:
    """A whole JSON document, read through ragjudge.formats.files: a folder, bytes that are not UTF-8, an empty or
    cut-off file and bad JSON are each one InputError naming the file (and line and column)."""
    text = read_text(path, what)
    if not text.strip():
        raise InputError(f"empty file, expected {what}", file=str(path))
    return parse_json(text, file=str(path))


def parse_json(text: str, *, file: str) -> Any:
    """The JSON document `text` (all of `file`, already read); bad JSON is an InputError as `read_json` says it."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise json_document_error(exc, file=file) from None
    except RecursionError:
        raise InputError("invalid JSON (nested too deeply)", file=file) from None


def json_document_error(exc: json.JSONDecodeError, *, file: str) -> InputError:
    """The InputError of a syntax error in a whole JSON document (`exc.doc` is all of `file`): its line and column,
    or, where the document stops before it is complete, that the file is cut off."""
    if exc.pos >= len(exc.doc.rstrip()):
        return InputError("invalid JSON: the file ends in the middle of the document (truncated?)", file=file,
                          line=exc.lineno)
    return _syntax_error(exc, file=file, line=exc.lineno)


def _syntax_error(exc: json.JSONDecodeError, *, file: str, line: int) -> InputError:
    # json's own message may end in "at" ("Unterminated string starting at"): the column follows once
    return InputError(f"invalid JSON ({exc.msg.removesuffix(' at')} at column {exc.colno})", file=file, line=line)


def json_type(value: Any) -> str:
    """How a JSON value's type reads in an error message: "an array", "a number", "null"..."""
    names = {list: "an array", dict: "an object", str: "a string", int: "a number", float: "a number",
             bool: "true/false"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def json_path(loc: Iterable[str | int]) -> str:
    """A pydantic error's location as a JSON path (`evaluations[3].annotations`), what errors name as the field."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def missing(value: Any, *, empty: bool = False, na: frozenset[str] = frozenset()) -> bool:
    """Whether a field holds no value: None or NaN (a table's empty cell); with `empty`, also "" and [];
    a text in `na` (a file's own "N/A") too, spaces aside."""
    if isinstance(value, str):
        return (empty and not value) or value.strip() in na
    if empty and isinstance(value, list):
        return not value
    return value is None or (isinstance(value, float) and math.isnan(value))


def to_jsonable(value: Any) -> Any:
    """Replace NaN/inf (which MTRAG files contain but strict JSON forbids) with null, and numpy scalars and arrays
    (what DataFrame cells hold) with the JSON values they stand for, recursively."""
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        return to_jsonable(value.tolist())
    if isinstance(value, dict):
        return {k: to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    return value


def dumps(obj: Any) -> str:
    return json.dumps(to_jsonable(obj), ensure_ascii=False, allow_nan=False)


def write_jsonl(path: str | Path, rows: Iterable[dict[str, Any]]) -> None:
    """Write atomically: a reader never sees a half-written results file."""
    with atomic_output(path) as tmp, tmp.open("w", encoding="utf-8") as fh:
        fh.writelines(dumps(row) + "\n" for row in rows)


class JsonlAppender:
    """Append-only journal. Each record is flushed at once, so a killed process loses at most the line in
    flight (the OS holds what was flushed); fsync runs at most every `sync_every` seconds and at close, which
    covers a machine crash without paying a disk sync per record."""

    def __init__(self, path: str | Path, sync_every: float | None = None):
        self.path = Path(path)
        if sync_every is None:  # RAGJUDGE_FSYNC_SECONDS=0: a disk sync per record (slow, for paranoid setups)
            sync_every = float(os.environ.get("RAGJUDGE_FSYNC_SECONDS", "1"))
        with writing(self.path, "write the journal"):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            _drop_partial_tail(self.path)
            self._fh = self.path.open("a", encoding="utf-8")
        self._sync_every = sync_every
        self._synced = time.monotonic()

    def append(self, record: dict[str, Any]) -> None:
        line = dumps(record) + "\n"
        with writing(self.path, "write the journal"):
            self._fh.write(line)
            self._fh.flush()
            if time.monotonic() - self._synced >= self._sync_every:
                os.fsync(self._fh.fileno())
                self._synced = time.monotonic()

    def close(self) -> None:
        if self._fh.closed:
            return
        try:
            with suppress(OSError):  # the disk filled while the last line was buffered: the append already said so
                self._fh.flush()
                os.fsync(self._fh.fileno())
        finally:
            with suppress(OSError):
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

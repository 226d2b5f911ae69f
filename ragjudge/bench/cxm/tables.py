"""Read the row files CXMArena data comes in (JSONL, JSON, Parquet, CSV) with row numbers for errors, and find a
task's files in a data folder: ragjudge's plain names first, then the release's `<Config>/<split>.<ext>` layout
(what `ragjudge cxm fetch` writes).
"""

from __future__ import annotations

import ast
import io
import json
import re
from pathlib import Path
from typing import Any

from ragjudge.errors import EnvironmentFault, InputError
from ragjudge.formats.files import decode_text, input_file, open_binary
from ragjudge.formats.jsonl import read_json, read_jsonl, to_jsonable

EXTENSIONS = (".jsonl", ".json", ".parquet", ".csv")

Row = tuple[int, dict[str, Any]]
"""(line or row number, record). For CSV the number is the file line (header is line 1)."""


def read_rows(path: Path, what: str | None = None) -> list[Row]:
    """The file's records with their line (or row) numbers. Every format is read through `ragjudge.formats.files`
    (one-line errors naming the file, line and byte offset of a byte that is not UTF-8; the file recorded in
    run.json's inputs). With `what` (e.g. "intent conversations"), a file that holds no record is an error
    naming it, rather than a task with nothing in it."""
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        rows = list(read_jsonl(path))
    elif suffix == ".json":
        rows = _json_rows(path)
    elif suffix in (".parquet", ".csv"):
        rows = _table_rows(path, suffix)
    else:
        raise InputError(f"unsupported file type {suffix!r} (use {', '.join(EXTENSIONS)})", file=str(path))
    if what is not None and not rows:
        raise InputError(f"the file holds no {what}", file=str(path))
    return rows


def _json_rows(path: Path) -> list[Row]:
    data = read_json(path, "a JSON file")
    if isinstance(data, dict):  # {"rows": [...]} or a single record
        data = data.get("rows", data.get("data", [data]))
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise InputError("expected a JSON array of objects", file=str(path))
    return [(i + 1, r) for i, r in enumerate(data)]


def _table_rows(path: Path, suffix: str) -> list[Row]:
    """CSV (decoded as UTF-8 here, so a bad byte is located, never pandas' codec message) or Parquet."""
    import pandas as pd

    fh = open_binary(path, "CSV file" if suffix == ".csv" else "Parquet file")
    try:
        with fh:
            data = fh.read()
    except OSError as exc:
        raise EnvironmentFault.from_os_error(exc, action="read", path=str(path)) from None
    kind = "CSV table" if suffix == ".csv" else "Parquet file"
    try:
        if suffix == ".csv":
            text = decode_text(data, path=path)
            frame = pd.read_csv(io.StringIO(text)) if text.strip() else pd.DataFrame()
        else:
            frame = pd.read_parquet(io.BytesIO(data))
    except InputError:
        raise
    except Exception as exc:  # pandas/pyarrow raise many types for unreadable files: one line, never a traceback
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        line = re.search(r"\bline (\d+)", first) if suffix == ".csv" else None
        raise InputError(f"not a readable {kind} ({first})", file=str(path),
                         line=int(line.group(1)) if line else None) from None
    offset = 2 if suffix == ".csv" else 1
    return [(i + offset, {str(k): to_jsonable(v) for k, v in row.items()})
            for i, row in enumerate(frame.to_dict(orient="records"))]


def find_file(folder: Path, names: tuple[str, ...], release: tuple[tuple[str, str], ...] = (),
              what: str | None = None) -> Path | None:
    """The first of `names` (plain files in `folder`), else the first release `(config, split)` file found. A
    folder where one of these files is expected is an error naming it, not a file that is not there."""
    candidates = [folder / name for name in names]
    candidates += [folder / config / f"{split}{ext}" for config, split in release for ext in EXTENSIONS]
    for path in candidates:
        if path.exists():
            return input_file(path, f"{what} file" if what else "file")
    return None


def require_file(folder: Path, what: str, names: tuple[str, ...], release: tuple[tuple[str, str], ...] = ()) -> Path:
    path = find_file(folder, names, release, what)
    if path is None:
        options = list(names) + [f"{c}/{s}.jsonl|.parquet|.csv" for c, s in release]
        raise InputError(f"no {what} found (looked for {', '.join(options)})", file=str(folder))
    return path


def field(row: dict[str, Any], *names: str) -> Any:
    """The first of `names` present (and not None) in the row."""
    for name in names:
        if row.get(name) is not None:
            return row[name]
    return None


def listish(value: Any, *, path: Path, line: int, name: str) -> list[Any]:
    """A list cell, also when stored as JSON or Python-literal text (as the release's CSV/Excel exports do)."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return []
        if text[0] in "[(":
            for loader in (json.loads, ast.literal_eval):
                try:
                    parsed = loader(text)
                except (ValueError, SyntaxError, json.JSONDecodeError):
                    continue
                if isinstance(parsed, (list, tuple)):
                    return list(parsed)
            raise InputError(f"cannot read a list from {text[:60]!r}", file=str(path), line=line, field=name)
        return [text]
    return [value]


def id_list(value: Any, *, path: Path, line: int, name: str) -> list[str]:
    """A list of ids (article, message, tool ids): like `listish`, but every item must be text or a number,
    so a stray object or null is an error instead of an id like "{'a': 1}" or "None"."""
    items = listish(value, path=path, line=line, name=name)
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (str, int)) or not str(item).strip():
            raise InputError(f"expected a list of ids (text or numbers), found {item!r}", file=str(path), line=line,
                             field=name)
    return [str(item).strip() for item in items]


def structured(value: Any, *, path: Path, line: int, name: str) -> Any:
    """A list/dict cell that may be stored as JSON or Python-literal text."""
    if not isinstance(value, str):
        return value
    for loader in (json.loads, ast.literal_eval):
        try:
            return loader(value)
        except (ValueError, SyntaxError, json.JSONDecodeError):
            continue
    raise InputError(f"cannot read structured value from {value[:60]!r}", file=str(path), line=line, field=name)

"""Read the row files CXMArena data comes in (JSONL, JSON, Parquet, CSV) with row numbers for errors,
and find a task's files in a data folder: ragjudge's plain names first, then the release's layout.

Release layout: `<folder>/<Config>/<split>.<ext>`, e.g. `Agent_Quality_Adherence/train.parquet`, which is
what `ragjudge cxm fetch` writes (one file per config and split of `sprinklr-huggingface/CXM_Arena`).
"""

from __future__ import annotations

import ast
import json
import math
from pathlib import Path
from typing import Any

from ragjudge.errors import InputError
from ragjudge.formats.files import input_file, read_text
from ragjudge.formats.jsonl import read_jsonl

EXTENSIONS = (".jsonl", ".json", ".parquet", ".csv")

Row = tuple[int, dict[str, Any]]
"""(line or row number, record). For CSV the number is the file line (header is line 1)."""


def _plain(value: Any) -> Any:
    """pandas/numpy cells → plain Python (NaN → None, arrays → lists)."""
    if value is None:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        return _plain(value.tolist())
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        return value.item()
    return value


def read_rows(path: Path) -> list[Row]:
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        return list(read_jsonl(path))
    if suffix == ".json":
        try:
            data = json.loads(read_text(path, "JSON file"))
        except json.JSONDecodeError as exc:
            raise InputError(f"invalid JSON ({exc.msg})", file=str(path), line=exc.lineno) from None
        except RecursionError:
            raise InputError("invalid JSON (nested too deeply)", file=str(path)) from None
        if isinstance(data, dict):  # {"rows": [...]} or a single record
            data = data.get("rows", data.get("data", [data]))
        if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
            raise InputError("expected a JSON array of objects", file=str(path))
        return [(i + 1, r) for i, r in enumerate(data)]
    if suffix in (".parquet", ".csv"):
        import pandas as pd

        input_file(path, "table")
        try:
            frame = pd.read_parquet(path) if suffix == ".parquet" else pd.read_csv(path)
        except Exception as exc:  # pandas/pyarrow raise many types for unreadable files
            raise InputError(f"cannot read table: {exc}", file=str(path)) from None
        offset = 2 if suffix == ".csv" else 1
        return [(i + offset, {str(k): _plain(v) for k, v in row.items()})
                for i, row in enumerate(frame.to_dict(orient="records"))]
    raise InputError(f"unsupported file type {suffix!r} (use {', '.join(EXTENSIONS)})", file=str(path))


def find_file(folder: Path, names: tuple[str, ...], release: tuple[tuple[str, str], ...] = ()) -> Path | None:
    """The first of `names` (plain files in `folder`), else the first release `(config, split)` file found."""
    for name in names:
        if (folder / name).is_file():
            return folder / name
    for config, split in release:
        for ext in EXTENSIONS:
            path = folder / config / f"{split}{ext}"
            if path.is_file():
                return path
    return None


def require_file(folder: Path, what: str, names: tuple[str, ...], release: tuple[tuple[str, str], ...] = ()) -> Path:
    path = find_file(folder, names, release)
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

"""What the scorers share: prediction rows with their line numbers, and one-line errors naming them.

Each scorer validates the rows (bad rows are InputErrors naming file, line and field), computes the metrics
with `ragjudge.bench.cxm.metrics` and returns a TaskReport. Rows with `error` (calls that failed) and items
without a prediction are left out of the metrics and counted as problems.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragjudge.bench.cxm.tables import id_list
from ragjudge.errors import InputError

Rows = Sequence[tuple[int, dict[str, Any]]]
"""(line number, prediction row) as read from a predictions JSONL file."""


def bad(path: Path | None, line: int, field: str, message: str) -> InputError:
    return InputError(message, file=str(path) if path else None, line=line, field=field)


def ids(row: dict[str, Any], key: str, path: Path | None, line: int) -> list[str]:
    return id_list(row.get(key), path=path or Path("-"), line=line, name=key)


def known_id(row: dict[str, Any], key: str, known: set[str], path: Path | None, line: int, what: str) -> str:
    value = row.get(key)
    if value is None:
        raise bad(path, line, key, f"missing {key}")
    value = str(value)
    if value not in known:
        raise bad(path, line, key, f"unknown {what} {value!r}")
    return value

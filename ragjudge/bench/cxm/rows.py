"""CXMArena's prediction rows, the record format of every task: their fields and types, and one-line errors
naming a row's file, line and field. Rows with `error` (failed calls) and items without a prediction are left out of
the metrics and counted as problems.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from ragjudge.bench.cxm.tables import id_list
from ragjudge.errors import InputError

Rows = Sequence[tuple[int, dict[str, Any]]]
"""(line number, prediction row) as read from a predictions JSONL file."""


class FileRow(BaseModel):
    """One line of a predictions file, as a sample of a scoring run."""

    model_config = ConfigDict(frozen=True)

    id: str
    line: int
    row: dict[str, Any]


def bad(path: Path | None, line: int, field: str, message: str) -> InputError:
    return InputError(message, file=str(path) if path else None, line=line, field=field)


def ids(row: dict[str, Any], key: str, path: Path | None, line: int, name: str | None = None) -> list[str]:
    """The ids under `key` (errors name the field `name`, default `key`)."""
    return id_list(row.get(key), path=path or Path("-"), line=line, name=name or key)


def known_id(row: dict[str, Any], key: str, known: set[str], path: Path | None, line: int, what: str) -> str:
    value = row.get(key)
    if value is None:
        raise bad(path, line, key, f"missing {key}")
    value = str(value)
    if value not in known:
        raise bad(path, line, key, f"unknown {what} {value!r}")
    return value


ROW_FIELDS: dict[str, dict[str, str]] = {
    "intent": {"case_id": "id", "taxonomy": "text", "intent": "text", "raw_intent": "text", "verified_match": "bool"},
    "quality": {"case_id": "id", "answers": "objects", "unreadable": "ids"},
    "tool-calls": {"case_id": "id", "n_tools": "size", "mode": "text", "tool_calls": "objects"},
    "answer-classification": {"case_id": "id", "label": "text", "response": "text", "ranking": "ids",
                              "retrieved_ids": "ids", "query": "text", "query_strategy": "text"},
    "kb-refinement": {"kind": "text", "pair": "ids"},
    "article-search": {"query_id": "id", "ranking": "ids", "chunk_articles": "ids"},
    "multiturn-retrieval": {"case_id": "id", "ranking": "ids", "chunk_articles": "ids", "query": "text",
                            "query_strategy": "text"},
}
"""The fields of a task's prediction rows (in a predictions file, or a run's results.jsonl) and their types."""

def _is_id(value: Any) -> bool:
    return isinstance(value, (str, int)) and not isinstance(value, bool) and bool(str(value).strip())


_KINDS: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "id": ("an id (text or a number)", _is_id),
    "text": ("text", lambda v: isinstance(v, str)),
    "bool": ("true, false or null", lambda v: isinstance(v, bool)),
    "objects": ("a list of objects", lambda v: isinstance(v, list) and all(isinstance(x, dict) for x in v)),
    "ids": ("a list of ids (text or numbers)", lambda v: isinstance(v, list) and all(map(_is_id, v))),
    "size": ("a whole number >= 1", lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1),
}
"""What each kind of field holds: (how an error says it, the check)."""


def check_row(task: str, row: Any, path: Path | None, line: int) -> None:
    """One prediction row of `task` has the documented shape (examples/cxm/README.md): each known field that is
    present (and not null) has its type; else an InputError naming file, line and field. What the values mean
    (known ids, labels) is the task's summary's to check."""
    if not isinstance(row, dict):
        raise bad(path, line, "", "a prediction row is a JSON object")
    for key, kind in ROW_FIELDS[task].items():
        value = row.get(key)
        expected, fits = _KINDS[kind]
        if value is not None and not fits(value):
            raise bad(path, line, key, f"{key} must be {expected}, got {value!r}"[:160])

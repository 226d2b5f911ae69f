"""What a notebook holds (a list of records, a DataFrame, a path) as what the benches read, in memory: plain RAG
records by `rag_rows`, MTRAG-format tasks by the MTRAG benches themselves; nothing is written, and an error names
`data[i]` and the field (`at_row`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar, Union

from ragjudge.errors import InputError, UsageError
from ragjudge.formats.jsonl import to_jsonable
from ragjudge.formats.rag_records import RagRecord, is_mtrag_record, rag_records

Data = Union[str, Path, Sequence[Mapping[str, Any]], Any]
"""A path to a file (or folder) of records, a list of records, or a pandas DataFrame with those columns."""

DATA = "data"
"""How errors and the run name records given in memory: `data[3]`."""
T = TypeVar("T")


def rows_of(data: Data) -> list[Mapping[str, Any]] | None:
    """The records given in memory, each checked to be a record; None when `data` is a path (which must exist)."""
    if isinstance(data, (str, Path)):
        if not Path(data).exists():
            raise InputError("no such file or folder", file=str(data))
        return None
    records = _records(data)
    if not records:
        raise InputError("no records were given", file=DATA)
    for i, record in enumerate(records):
        if not isinstance(record, Mapping):
            raise InputError(f"must be a record (a dict), got {type(record).__name__}", file=f"{DATA}[{i}]")
    return records


def holds_rag_rows(rows: Sequence[Mapping[str, Any]]) -> bool:
    return not is_mtrag_record(rows[0])


def rag_rows(rows: Sequence[Mapping[str, Any]]) -> list[RagRecord]:
    """Plain RAG records read in memory, as a file's are; an error names `data[i]` and the field."""
    return at_row(lambda: rag_records([to_jsonable(dict(r)) for r in rows], file=DATA, lines=range(len(rows))))


def at_row(read: Callable[[], T], rows: Sequence[Mapping[str, Any]] = ()) -> T:
    """`read()`, its InputError about row i of the records given in memory naming `data[i]` (and, for an MTRAG task
    among `rows`, its task id)."""
    try:
        return read()
    except InputError as exc:
        if exc.file != DATA or exc.line is None:
            raise
        task_id = rows[exc.line].get("task_id") if 0 <= exc.line < len(rows) else None
        where = f"{DATA}[{exc.line}]" + (f" (task_id {task_id!r})" if task_id is not None else "")
        raise InputError(exc.message, file=where, field=exc.field) from None


def _records(data: Any) -> list[Mapping[str, Any]]:
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is a dependency
        pd = None
    if pd is not None and isinstance(data, pd.DataFrame):
        # read as a CSV's rows are (JSON list cells parsed), its index the ids when someone chose it
        from ragjudge.formats.rag_records import frame_records

        return at_row(lambda: list(frame_records(data, file=DATA, lines=range(len(data)), index_as_id=True)))
    if isinstance(data, Sequence) and not isinstance(data, (str, bytes)):
        return list(data)
    raise UsageError(f"data must be a list of MTRAG-format records, a pandas DataFrame or a path, "
                     f"got {type(data).__name__}")

"""Turn what a notebook holds (a list of records, a DataFrame, a path) into the MTRAG-format file the CLI reads,
and map an error about that file back to the record the user gave."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Union

from ragjudge.errors import InputError, UsageError
from ragjudge.formats.jsonl import to_jsonable, write_jsonl

Data = Union[str, Path, Sequence[Mapping[str, Any]], Any]
"""A path to an MTRAG-format file (or folder), a list of records, or a pandas DataFrame with those columns."""

INPUT_NAME = "input.jsonl"
"""The records' file in the run folder (not a name the engine writes: `predictions.jsonl` is its journal)."""


def as_input(data: Data, folder: Path) -> tuple[Path, list[Mapping[str, Any]] | None]:
    """(the file to run on, the records written to it or None when `data` was a path)."""
    if isinstance(data, (str, Path)):
        path = Path(data)
        if not path.exists():
            raise InputError("no such file or folder", file=str(path))
        return path, None
    records = _records(data)
    if not records:
        raise InputError("no records were given", file="data")
    for i, record in enumerate(records):
        if not isinstance(record, Mapping):
            raise InputError(f"must be a record (a dict), got {type(record).__name__}", file=f"data[{i}]")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / INPUT_NAME
    write_jsonl(path, (to_jsonable(dict(r)) for r in records))
    return path, records


def _records(data: Any) -> list[Mapping[str, Any]]:
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is a dependency
        pd = None
    if pd is not None and isinstance(data, pd.DataFrame):
        # read as a CSV's rows are (JSON list cells parsed), its index the ids when someone chose it
        from ragjudge.formats.rag_records import frame_records

        try:
            return list(frame_records(data, file="data", lines=range(len(data)), index_as_id=True))
        except InputError as exc:
            if exc.file != "data" or exc.line is None:
                raise
            raise InputError(exc.message, file=f"data[{exc.line}]", field=exc.field) from None
    if isinstance(data, Sequence) and not isinstance(data, (str, bytes)):
        return list(data)
    raise UsageError(f"data must be a list of MTRAG-format records, a pandas DataFrame or a path, "
                     f"got {type(data).__name__}")


def locate(exc: InputError, path: Path, records: list[Mapping[str, Any]] | None) -> InputError:
    """An error on line N of the file we wrote names `data[N-1]` and its task id instead."""
    if records is None or exc.file != str(path):
        return exc
    where = "data"
    if exc.line is not None and 1 <= exc.line <= len(records):
        index = exc.line - 1
        task_id = records[index].get("task_id")
        where = f"data[{index}]" + (f" (task_id {task_id!r})" if task_id is not None else "")
    return InputError(exc.message, file=where, field=exc.field)

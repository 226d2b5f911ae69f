"""Labels: a person's judgement of a sample on one metric (`ragjudge.labels/1`, `ragjudge schema labels`).

One JSON object per line, or a CSV/TSV with one column per metric; both read into the same records. The format is
in docs/trust.md; beyond it, the spreadsheet's id column may also be named `id`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ragjudge.errors import InputError
from ragjudge.formats import samples
from ragjudge.formats.jsonl import json_type, read_jsonl

SCHEMA_ID = "ragjudge.labels/1"
PASS_WORDS = {"pass": True, "yes": True, "true": True, "fail": False, "no": False, "false": False}
ID_COLUMNS = ("sample_id", "id")
EXTRA_COLUMNS = ("annotator", "note")


class Label(BaseModel):
    """One person's judgement of one sample on one metric or criterion."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, use_attribute_docstrings=True)

    schema_: Literal["ragjudge.labels/1"] = Field(SCHEMA_ID, alias="schema")
    sample_id: str
    """The sample's `id` in the run's samples.jsonl."""
    metric: str
    """The metric or criterion judged (a name in the run's `scores`)."""
    value: bool | float
    """Pass/fail (true/false), or a number: a score on the judge's scale or an ordinal on the metric's."""
    annotator: str | None = None
    note: str | None = None

    @field_validator("value")
    @classmethod
    def _finite(cls, value: bool | float) -> bool | float:
        if not isinstance(value, bool) and not math.isfinite(value):
            raise ValueError("must be a finite number")
        return value

    @property
    def number(self) -> float:
        """The value as a number: pass 1, fail 0."""
        return float(self.value)

    def to_dict(self) -> dict[str, Any]:
        return {"schema": SCHEMA_ID, **self.model_dump(mode="json", exclude_none=True, exclude={"schema_"})}


def json_schema() -> dict[str, Any]:
    """The published JSON Schema of a label record (`ragjudge schema labels`)."""
    return samples.json_schema(Label, SCHEMA_ID, "ragjudge label")


def read_labels(path: str | Path) -> list[Label]:
    """Labels from a `ragjudge.labels/1` JSONL file or a CSV/TSV with one column per metric; a bad line is one
    InputError naming the file, line and field. A sample labelled twice on one metric keeps every label (several
    annotators); `by_metric` takes their mean."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in (".xlsx", ".xls", ".ods"):
        raise InputError("a spreadsheet file: save it as CSV (one column per metric beside sample_id) and pass that",
                         file=str(path))
    labels = list(_read_table(path, "\t" if suffix == ".tsv" else ",") if suffix in (".csv", ".tsv")
                  else _read_jsonl(path))
    if not labels:
        raise InputError("contains no labels", file=str(path))
    return labels


def _read_jsonl(path: Path) -> Iterable[Label]:
    for line, record in read_jsonl(path):
        schema = record.get("schema")
        if schema != SCHEMA_ID:
            what = "no 'schema'" if schema is None else f"schema {schema!r}"
            raise InputError(f"not a {SCHEMA_ID} record ({what})", file=str(path), line=line, field="schema")
        try:
            yield Label.model_validate(record)
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"] if p not in ("bool", "float"))
            message = {"missing": "is missing", "extra_forbidden": "is not a field of a label"}.get(
                err["type"], f"must be {_expected(field)}, got {json_type(err.get('input'))}"
                if err["type"].endswith(("_type", "_parsing")) else str(err["msg"]).removeprefix("Value error, "))
            raise InputError(message, file=str(path), line=line, field=field or None) from None


def _expected(field: str) -> str:
    return "true/false or a number" if field == "value" else "text"


def _read_table(path: Path, delimiter: str) -> Iterable[Label]:
    from ragjudge.formats.files import csv_rows

    id_column: str | None = None
    metrics: list[str] = []
    for line, row in csv_rows(path, "labels file", delimiter=delimiter, header=True):
        if id_column is None:
            columns = [c for c in row if c is not None]
            id_column = next((c for c in columns if c.strip().lower() in ID_COLUMNS), None)
            if id_column is None:
                raise InputError(f"no sample_id column (columns: {', '.join(columns)})", file=str(path), line=1)
            metrics = [c for c in columns if c != id_column and c.strip().lower() not in EXTRA_COLUMNS]
            if not metrics:
                raise InputError("no metric column beside the sample id", file=str(path), line=1)
        if None in row:
            raise InputError("more cells than columns", file=str(path), line=line)
        sample_id = (row.get(id_column) or "").strip()
        if not sample_id:
            raise InputError("is empty", file=str(path), line=line, field=id_column)
        extras = {k.strip().lower(): (v or "").strip() or None for k, v in row.items()
                  if k and k.strip().lower() in EXTRA_COLUMNS}
        for metric in metrics:
            if cell := (row.get(metric) or "").strip():
                yield Label(sample_id=sample_id, metric=metric.strip(), value=_cell(cell, path, line, metric),
                            **extras)


def _cell(cell: str, path: Path, line: int, column: str) -> bool | float:
    word = PASS_WORDS.get(cell.lower())
    if word is not None:
        return word
    try:
        value = float(cell)
    except ValueError:
        raise InputError(f"must be pass/fail, yes/no, true/false or a number, got {cell!r}", file=str(path),
                         line=line, field=column) from None
    if not math.isfinite(value):
        raise InputError(f"must be a finite number, got {cell!r}", file=str(path), line=line, field=column)
    return value


def by_metric(labels: Iterable[Label]) -> dict[str, dict[str, float]]:
    """metric → sample id → the label's number (the mean when several annotators labelled it)."""
    grouped: dict[str, dict[str, list[float]]] = {}
    for label in labels:
        grouped.setdefault(label.metric, {}).setdefault(label.sample_id, []).append(label.number)
    return {m: {s: sum(v) / len(v) for s, v in by_id.items()} for m, by_id in grouped.items()}


def is_pass_fail(labels: Iterable[Label], metric: str) -> bool:
    """Whether a metric's labels are all pass/fail."""
    values = [label.value for label in labels if label.metric == metric]
    return bool(values) and all(isinstance(v, bool) for v in values)

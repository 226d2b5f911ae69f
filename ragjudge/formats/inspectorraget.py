"""InspectorRAGet experiment files (IBM's UI in which MTRAG's human evaluation is published): read human and
algorithmic ratings, write ragjudge results. `evaluations` hold one entry per (task, model), whose `annotations` map
metric → annotator id (or "system" / "composite") → {"value", ...}; `tasks` carry enrichments (`Answerability`).

Published files are not uniform, so reading is tolerant: values may be strings ("1"-"4") or numbers whatever the
metric declares, items may have fewer annotators than others, categorical values are mapped through their
`numeric_value`, and the newer schema (`results`/`scores`/`output`) is read too; anything else is an InputError
naming the file and the JSON path. Files are written in the original schema (v1), which every version opens.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AliasChoices, AliasGenerator, BaseModel, BeforeValidator, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from ragjudge.errors import InputError
from ragjudge.formats.files import atomic_output, read_text
from ragjudge.formats.jsonl import json_path, to_jsonable
from ragjudge.models import normalize_task_id

SYSTEM = "system"
COMPOSITE = "composite"
"""Annotator ids that are not people: an algorithm's own value, and a pre-aggregated human value."""


def _to_str(value: Any) -> Any:
    return str(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value


Id = Annotated[str, BeforeValidator(_to_str)]


def as_number(value: Any) -> float | None:
    """A number from a number or a numeric string; None for missing values (None, "", NaN)."""
    if isinstance(value, str):
        try:
            value = float(value)  # spaces around are ignored; "" is no number
        except ValueError:
            return None
    if isinstance(value, (int, float)):  # true/false too: 1/0
        return None if math.isnan(value) else float(value)
    return None


def is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip()) or (
        isinstance(value, float) and math.isnan(value))


class _Open(BaseModel):
    """Published files add fields of their own (kept) and some write names in camelCase (`taskId`)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, alias_generator=AliasGenerator(
        validation_alias=lambda name: AliasChoices(name, to_camel(name))))


class MetricValue(_Open):
    """One category of a categorical metric; `numeric_value` places it on a numeric scale."""

    value: str | int | float | bool
    numeric_value: float | None = None
    display_value: str | None = None


class Metric(_Open):
    name: Id
    display_name: str | None = None
    description: str | None = None
    author: Literal["human", "algorithm"]
    type: Literal["numerical", "categorical", "text"]
    aggregator: str | None = None
    values: list[MetricValue] | None = None
    range: list[float] | None = None

    @property
    def is_numeric(self) -> bool:
        return self.type != "text"

    def category_numbers(self) -> list[float]:
        """The numeric value of each declared category, in declaration order."""
        out = []
        for position, category in enumerate(self.values or [], start=1):
            if category.numeric_value is not None:
                out.append(float(category.numeric_value))
            else:  # no numeric_value: a numeric label is its own number, otherwise its position
                number = as_number(category.value)
                out.append(number if number is not None else float(position))
        return out

    def levels(self) -> list[float] | None:
        """The ordered scale of a categorical metric (distinct numeric values), else None."""
        if self.type != "categorical" or not self.values:
            return None
        return sorted(set(self.category_numbers()))

    def step(self) -> float | None:
        """The scale step of a numerical metric, from `range: [min, max, step]`."""
        if self.type == "numerical" and self.range and len(self.range) >= 3 and self.range[2] > 0:
            return float(self.range[2])
        return None

    def to_number(self, raw: Any) -> float | None:
        """An annotation value on the metric's numeric scale; None when missing; ValueError when unknown."""
        if is_missing(raw):
            return None
        if self.type == "categorical" and self.values:
            raw_number = as_number(raw)
            for category, number in zip(self.values, self.category_numbers(), strict=True):
                if str(category.value).strip() == str(raw).strip():
                    return number
                label_number = as_number(category.value)
                if raw_number is not None and label_number is not None and raw_number == label_number:
                    return number  # 4 for a category declared as "4"
            if raw_number is not None:
                return raw_number
            known = ", ".join(repr(c.value) for c in self.values)
            raise ValueError(f"{raw!r} is not one of the metric's values ({known})")
        number = as_number(raw)
        if number is None:
            raise ValueError(f"{raw!r} is not a number")
        return number


class Model(_Open):
    model_id: Id
    name: str | None = None


class Document(_Open):
    document_id: Id
    text: str | None = None
    title: str | None = None


class ContextRef(_Open):
    document_id: Id


TASK_FIELDS = {"task_id", "taskId", "task_type", "taskType", "input", "contexts", "targets", "annotations",
               "comments", "flagged"}


class Task(_Open):
    """A task; every field beyond the standard ones is an enrichment (Answerability, Turn, ...)."""

    task_id: Id
    task_type: str | None = None
    input: Any = None
    contexts: list[ContextRef] = Field(default_factory=list)
    targets: list[Any] = Field(default_factory=list)

    @property
    def enrichments(self) -> dict[str, Any]:
        return {k: v for k, v in (self.model_extra or {}).items() if k not in TASK_FIELDS}


class Annotation(_Open):
    value: Any = None
    timestamp: float | None = None
    duration: float | None = None


def _annotation(value: Any) -> Any:
    return value if isinstance(value, (dict, BaseModel)) else {"value": value}  # tolerate a bare value


class Evaluation(_Open):
    task_id: Id
    model_id: Id
    model_response: str | None = None
    annotations: dict[str, dict[str, Annotated[Annotation, BeforeValidator(_annotation)]]] = Field(
        default_factory=dict)


class InspectorRAGetFile(_Open):
    name: str | None = None
    description: str | None = None
    models: list[Model] = Field(default_factory=list)
    metrics: list[Metric]
    documents: list[Document] = Field(default_factory=list)
    tasks: list[Task] = Field(default_factory=list)
    evaluations: list[Evaluation]

    def metric(self, name: str) -> Metric | None:
        return next((m for m in self.metrics if m.name == name), None)

    def task_index(self) -> dict[str, Task]:
        return {normalize_task_id(t.task_id): t for t in self.tasks}


# ---------------------------------------------------------------------------------------------- reading


def _upgrade(raw: dict[str, Any]) -> dict[str, Any]:
    """The newer schema renames evaluations→results, annotations→scores, model_response→output."""
    if "evaluations" not in raw and isinstance(raw.get("results"), list):
        raw = {**raw, "evaluations": raw["results"]}
    evaluations = raw.get("evaluations")
    if isinstance(evaluations, list):
        upgraded = []
        for ev in evaluations:
            if isinstance(ev, dict):
                ev = dict(ev)
                if "annotations" not in ev and isinstance(ev.get("scores"), dict):
                    ev["annotations"] = ev.pop("scores")
                output = ev.get("output")
                if "model_response" not in ev and isinstance(output, dict) and isinstance(output.get("value"), str):
                    ev["model_response"] = output["value"]
            upgraded.append(ev)
        raw = {**raw, "evaluations": upgraded}
    return raw


def parse_inspectorraget(raw: Any, *, file: str) -> InspectorRAGetFile:
    """Validate a parsed JSON document; errors name the JSON path of the offending field."""
    if not isinstance(raw, dict):
        raise InputError(f"not an InspectorRAGet file: expected a JSON object, got a JSON {type(raw).__name__}",
                         file=file)
    raw = _upgrade(raw)
    if "metrics" not in raw or "evaluations" not in raw:
        keys = ", ".join(sorted(raw)[:8]) or "none"
        raise InputError("not an InspectorRAGet file: expected a JSON object with models, metrics, tasks and "
                         f"evaluations (found keys: {keys})", file=file)
    try:
        data = InspectorRAGetFile.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise InputError(err["msg"], file=file, field=json_path(err["loc"])) from None
    _check(data, file)
    return data


def _check(data: InspectorRAGetFile, file: str) -> None:
    seen_metrics: set[str] = set()
    for i, metric in enumerate(data.metrics):
        if metric.name in seen_metrics:
            raise InputError(f"duplicate metric name {metric.name!r}", file=file, field=f"metrics[{i}].name")
        seen_metrics.add(metric.name)
    seen_items: dict[tuple[str, str], int] = {}
    for i, ev in enumerate(data.evaluations):
        key = (normalize_task_id(ev.task_id), ev.model_id)
        if key in seen_items:
            raise InputError(f"second evaluation of task {ev.task_id!r} by model {ev.model_id!r} "
                             f"(first: evaluations[{seen_items[key]}])", file=file, field=f"evaluations[{i}]")
        seen_items[key] = i


def read_inspectorraget(path: str | Path) -> InspectorRAGetFile:
    path = Path(path)
    text = read_text(path, "InspectorRAGet JSON file")
    try:
        raw = json.loads(text)
    except RecursionError:
        raise InputError("not an InspectorRAGet file: invalid JSON (nested too deeply)", file=str(path)) from None
    except json.JSONDecodeError as exc:
        hint = " (a JSON Lines file? ragjudge results go in --judges)" if exc.msg == "Extra data" else ""
        raise InputError(f"not an InspectorRAGet file: invalid JSON ({exc.msg} at column {exc.colno}){hint}",
                         file=str(path), line=exc.lineno) from None
    return parse_inspectorraget(raw, file=str(path))


def annotation_number(data: InspectorRAGetFile, metric: Metric, index: int, annotator: str, raw: Any,
                      *, file: str) -> float | None:
    """`metric.to_number` with an InputError that points at the annotation."""
    try:
        return metric.to_number(raw)
    except ValueError as exc:
        field = f"evaluations[{index}].annotations.{metric.name}.{annotator}.value"
        raise InputError(str(exc), file=file, field=field) from None


# ---------------------------------------------------------------------------------------------- writing


def write_inspectorraget(path: str | Path, data: InspectorRAGetFile) -> None:
    """Write atomically, v1 schema, NaN-free."""
    payload = to_jsonable(data.model_dump(mode="json", exclude_none=True))
    with atomic_output(path) as tmp:
        tmp.write_text(json.dumps(payload, ensure_ascii=False, indent=1, allow_nan=False) + "\n", encoding="utf-8")


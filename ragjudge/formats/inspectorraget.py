"""InspectorRAGet experiment files: read (human and algorithmic ratings) and write (ragjudge results).

InspectorRAGet (IBM) is the UI in which MTRAG's human evaluation is published. A file holds `models`,
`metrics` (author human|algorithm, type numerical|categorical|text, an aggregator, `values` with a
`numeric_value` for categorical metrics, `range` for numerical ones), `documents`, `tasks` (with
enrichments such as `Answerability`) and `evaluations`: one per (task, model) with `annotations`
metric → annotator id (or "system" / "composite") → {"value", optional "timestamp", "duration"}.

Published files are not uniform, so reading is tolerant: values may be strings ("1"-"4") or numbers
whatever the metric declares, items may have fewer annotators than others, categorical values are
mapped through their `numeric_value`, and files in the newer schema (`results`/`scores`/`output`)
are read too. Anything that cannot be understood is an InputError naming the file and the JSON path.
Files are written in the original schema (v1), which every InspectorRAGet version opens.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AliasChoices, BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from ragjudge.errors import InputError
from ragjudge.formats.jsonl import to_jsonable
from ragjudge.models import normalize_task_id

SYSTEM = "system"
COMPOSITE = "composite"
"""Annotator ids that are not people: an algorithm's own value, and a pre-aggregated human value."""


def _to_str(value: Any) -> Any:
    return str(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value


Id = Annotated[str, BeforeValidator(_to_str)]


def as_number(value: Any) -> float | None:
    """A number from a number or a numeric string; None for missing values (None, "", NaN)."""
    if value is None or isinstance(value, bool):
        return None if value is None else float(value)
    if isinstance(value, (int, float)):
        return None if math.isnan(value) else float(value)
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        try:
            number = float(text)
        except ValueError:
            return None
        return None if math.isnan(number) else number
    return None


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip()) or (
        isinstance(value, float) and math.isnan(value))


class MetricValue(BaseModel):
    """One category of a categorical metric; `numeric_value` places it on a numeric scale."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    value: str | int | float | bool
    numeric_value: float | None = Field(default=None, validation_alias=AliasChoices("numeric_value", "numericValue"))
    display_value: str | None = Field(default=None, validation_alias=AliasChoices("display_value", "displayValue"))


class Metric(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    name: Id
    display_name: str | None = Field(default=None, validation_alias=AliasChoices("display_name", "displayName"))
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
        if _missing(raw):
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


class Model(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    model_id: Id = Field(validation_alias=AliasChoices("model_id", "modelId"))
    name: str | None = None


class Document(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    document_id: Id = Field(validation_alias=AliasChoices("document_id", "documentId"))
    text: str | None = None
    title: str | None = None


class ContextRef(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    document_id: Id = Field(validation_alias=AliasChoices("document_id", "documentId"))


TASK_FIELDS = {"task_id", "taskId", "task_type", "taskType", "input", "contexts", "targets", "annotations",
               "comments", "flagged"}


class Task(BaseModel):
    """A task; every field beyond the standard ones is an enrichment (Answerability, Turn, ...)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    task_id: Id = Field(validation_alias=AliasChoices("task_id", "taskId"))
    task_type: str | None = Field(default=None, validation_alias=AliasChoices("task_type", "taskType"))
    input: Any = None
    contexts: list[ContextRef] = Field(default_factory=list)
    targets: list[Any] = Field(default_factory=list)

    @property
    def enrichments(self) -> dict[str, Any]:
        return {k: v for k, v in (self.model_extra or {}).items() if k not in TASK_FIELDS}


class Annotation(BaseModel):
    model_config = ConfigDict(extra="allow")

    value: Any = None
    timestamp: float | None = None
    duration: float | None = None


def _annotation(value: Any) -> Any:
    return value if isinstance(value, (dict, BaseModel)) else {"value": value}  # tolerate a bare value


class Evaluation(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    task_id: Id = Field(validation_alias=AliasChoices("task_id", "taskId"))
    model_id: Id = Field(validation_alias=AliasChoices("model_id", "modelId"))
    model_response: str | None = None
    annotations: dict[str, dict[str, Annotated[Annotation, BeforeValidator(_annotation)]]] = Field(
        default_factory=dict)


class InspectorRAGetFile(BaseModel):
    model_config = ConfigDict(extra="allow")

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


def _json_path(loc: Sequence[str | int]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


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
        raise InputError(err["msg"], file=file, field=_json_path(err["loc"])) from None
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
    if not path.exists():
        raise InputError("file not found", file=str(path))
    if path.is_dir():
        raise InputError("is a folder, expected an InspectorRAGet JSON file", file=str(path))
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise InputError("not an InspectorRAGet file: not UTF-8 text", file=str(path)) from None
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
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = to_jsonable(data.model_dump(mode="json", exclude_none=True))
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(payload, ensure_ascii=False, indent=1, allow_nan=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


# Fields of an MTRAG record that become InspectorRAGet task fields rather than enrichments.
_RECORD_FIELDS = TASK_FIELDS | {"predictions", "metrics", "ragjudge", "answerability", "Answerability",
                                 "Question Type", "Multi-Turn", "turn", "Collection", "collection"}


def _as_list(value: Any) -> list[Any]:
    if _missing(value) or value == []:
        return []
    return list(value) if isinstance(value, list) else [value]


def _first_value(value: Any) -> Any:
    return value[0] if isinstance(value, list) and value else (None if isinstance(value, list) else value)


def _task_from_record(record: dict[str, Any]) -> Task:
    enrichments: dict[str, Any] = {}
    answerability = _as_list(record.get("answerability", record.get("Answerability")))
    if answerability:
        enrichments["Answerability"] = [str(a) for a in answerability]
    for name in ("Question Type", "Multi-Turn"):
        if _as_list(record.get(name)):
            enrichments[name] = _as_list(record.get(name))
    if record.get("turn") is not None:
        enrichments["Turn"] = record["turn"]
    collection = record.get("Collection", record.get("collection"))
    if not _missing(collection):
        enrichments["Collection"] = collection
    for key, value in record.items():
        if key not in _RECORD_FIELDS and not _missing(value):
            enrichments[key] = value
    contexts = [ContextRef(document_id=str(c.get("document_id", c.get("id"))))
                for c in record.get("contexts") or [] if isinstance(c, dict)]
    targets = [{"text": t.get("text", "")} for t in record.get("targets") or [] if isinstance(t, dict)]
    turns = [{"speaker": t.get("speaker"), "text": t.get("text")} for t in record.get("input") or []
             if isinstance(t, dict)]
    return Task(task_id=str(record["task_id"]), task_type="rag", input=turns, contexts=contexts, targets=targets,
                **enrichments)


def _judge_details(record: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """metric name → the ragjudge judge result that produced it (for labels and panel members)."""
    judges = ((record.get("ragjudge") or {}).get("judges") or {})
    return {d["metric"]: d for d in judges.values() if isinstance(d, dict) and d.get("metric")}


def _metric_value(record: dict[str, Any], name: str) -> float | None:
    return as_number(_first_value((record.get("metrics") or {}).get(name)))


class _MetricSummary:
    """What the writer learns about one ragjudge metric across every record, to declare it."""

    def __init__(self, name: str):
        self.name = name
        self.values: list[float] = []
        self.labels: dict[str, float] = {}
        self.label_conflict = False
        self.judge: str | None = None
        self.panel = False
        self.models: set[str] = set()

    def add(self, value: float, detail: dict[str, Any] | None) -> None:
        self.values.append(value)
        if detail is None:
            self.label_conflict = True  # no judge label: declare it numerical
            return
        self.judge = detail.get("judge")
        if detail.get("model"):
            self.models.add(str(detail["model"]))
        if detail.get("members"):
            self.panel = True
        label = detail.get("label")
        if not isinstance(label, str) or as_number(label) is not None or self.labels.get(label, value) != value:
            self.label_conflict = True
        else:
            self.labels[label] = value

    @property
    def categorical(self) -> bool:
        """Judges with word labels (IDK: yes/partial/no) open in the UI as categories."""
        return not self.label_conflict and 0 < len(self.labels) <= 10

    def declare(self) -> Metric:
        where = f" from judge {self.judge}" if self.judge else ""
        models = f" ({', '.join(sorted(self.models))})" if self.models else ""
        description = f"ragjudge metric {self.name}{where}{models}"
        if self.categorical:
            ordered = sorted(self.labels.items(), key=lambda kv: kv[1])
            return Metric(name=self.name, display_name=self.name, description=description, author="algorithm",
                          type="categorical", aggregator="majority",
                          values=[MetricValue(value=label, display_value=label, numeric_value=number)
                                  for label, number in ordered])
        low, high = (min(self.values), max(self.values)) if self.values else (0.0, 1.0)
        if 0.0 <= low and high <= 1.0:
            value_range = [0.0, 1.0, 0.1]
        else:
            value_range = [low, high, (high - low) / 10 if high > low else 1.0]
        return Metric(name=self.name, display_name=self.name, description=description, author="algorithm",
                      type="numerical", aggregator="median" if self.panel else "average", range=value_range)


def from_results(runs: Iterable[tuple[str, list[dict[str, Any]]]], *, name: str,
                 description: str | None = None) -> InspectorRAGetFile:
    """An InspectorRAGet file from ragjudge results: one (model id, results records) pair per model.

    Every ragjudge metric becomes an algorithm metric; judges with word labels (IDK) become categorical
    metrics; a panel judge's members become its annotators (aggregated by median, as the panel is).
    """
    models: list[Model] = []
    tasks: dict[str, Task] = {}
    documents: dict[str, Document] = {}
    summaries: dict[str, _MetricSummary] = {}
    evaluations: list[Evaluation] = []
    for model_id, records in runs:
        models.append(Model(model_id=model_id, name=model_id, owner="ragjudge"))
        for record in records:
            key = normalize_task_id(str(record["task_id"]))
            if key not in tasks:
                tasks[key] = _task_from_record(record)
            for passage in record.get("contexts") or []:
                if isinstance(passage, dict) and isinstance(passage.get("text"), str):
                    pid = str(passage.get("document_id", passage.get("id")))
                    documents.setdefault(pid, Document(document_id=pid, text=passage["text"],
                                                       title=passage.get("title")))
            details = _judge_details(record)
            annotations: dict[str, dict[str, Annotation]] = {}
            for metric in (record.get("metrics") or {}):
                value = _metric_value(record, metric)
                if value is None:
                    continue
                detail = details.get(metric)
                summary = summaries.setdefault(metric, _MetricSummary(metric))
                summary.add(value, detail)
                members = [m for m in (detail or {}).get("members") or []
                           if isinstance(m, dict) and as_number(m.get("value")) is not None]
                if members:
                    annotations[metric] = {str(m.get("model") or f"member{i}"): Annotation(value=float(m["value"]))
                                           for i, m in enumerate(members)}
                else:
                    annotations[metric] = {SYSTEM: Annotation(value=value)}
            prediction = _first_value(record.get("predictions"))
            text = prediction.get("text") if isinstance(prediction, dict) else None
            evaluations.append(Evaluation(task_id=str(record["task_id"]), model_id=model_id, model_response=text,
                                          annotations=annotations))
    metrics = [s.declare() for s in summaries.values()]
    categorical = {m.name: {v.numeric_value: v.value for v in m.values or []} for m in metrics
                   if m.type == "categorical"}
    for ev in evaluations:  # categorical metrics carry their label, as InspectorRAGet expects
        for metric, by_rater in ev.annotations.items():
            if metric in categorical:
                for annotation in by_rater.values():
                    annotation.value = categorical[metric].get(annotation.value, annotation.value)
    return InspectorRAGetFile(name=name, description=description, models=models, metrics=metrics,
                              documents=list(documents.values()), tasks=list(tasks.values()),
                              evaluations=evaluations)

"""ragjudge results → an InspectorRAGet experiment (`ragjudge export`): tasks, documents, one model per results
file, every ragjudge metric as an algorithm metric (a panel's members become its annotators)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ragjudge.formats.inspectorraget import (
    SYSTEM,
    TASK_FIELDS,
    Annotation,
    ContextRef,
    Document,
    Evaluation,
    InspectorRAGetFile,
    Metric,
    MetricValue,
    Model,
    Task,
    as_number,
    is_missing,
)
from ragjudge.models import normalize_task_id

_RECORD_FIELDS = TASK_FIELDS | {"predictions", "metrics", "ragjudge", "answerability", "Answerability",
                                 "Question Type", "Multi-Turn", "turn", "Collection", "collection"}


def _as_list(value: Any) -> list[Any]:
    if is_missing(value) or value == []:
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
    if not is_missing(collection):
        enrichments["Collection"] = collection
    for key, value in record.items():
        if key not in _RECORD_FIELDS and not is_missing(value):
            enrichments[key] = value
    contexts = [ContextRef(document_id=str(c.get("document_id", c.get("id"))))
                for c in record.get("contexts") or [] if isinstance(c, dict)]
    targets = [{"text": t.get("text", "")} for t in record.get("targets") or [] if isinstance(t, dict)]
    turns = [{"speaker": t.get("speaker"), "text": t.get("text")} for t in record.get("input") or []
             if isinstance(t, dict)]
    return Task(task_id=str(record["task_id"]), task_type="rag", input=turns, contexts=contexts, targets=targets,
                **enrichments)


def _judge_details(record: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """metric name → the ragjudge judge result that produced it (for labels and panel members); records come
    through `correlation.sources.read_results`, which checked their shape."""
    details = record.get("ragjudge")
    judges = (details.get("judges") or {}) if isinstance(details, dict) else {}
    return {str(d["metric"]): d for d in judges.values() if isinstance(d, dict) and d.get("metric")}


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

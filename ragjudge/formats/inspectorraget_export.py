"""ragjudge runs (their samples) → an InspectorRAGet experiment (`ragjudge export`): tasks, documents, one model per
run, every ragjudge metric as an algorithm metric (a panel's members become its annotators)."""

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
from ragjudge.formats.mtrag import task_record
from ragjudge.formats.samples import Sample, Score, mtrag_turns
from ragjudge.models import normalize_task_id

_RECORD_FIELDS = TASK_FIELDS | {"answerability", "Answerability", "Question Type", "Multi-Turn", "turn",
                                 "Collection", "collection"}


def _as_list(value: Any) -> list[Any]:
    if is_missing(value) or value == []:
        return []
    return list(value) if isinstance(value, list) else [value]


def _task(sample: Sample) -> Task:
    """The sample's task: its conversation, passages and references, and as enrichments the task's own fields
    (`formats.mtrag.task_record`)."""
    record = task_record(sample)
    enrichments: dict[str, Any] = {}
    if answerability := _as_list(record.get("answerability", record.get("Answerability"))):
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
    if "targets" in record:
        targets = [{"text": t.get("text", "")} for t in record["targets"] or [] if isinstance(t, dict)]
    else:
        targets = [{"text": t} for t in ([sample.target] if isinstance(sample.target, str) else sample.target or [])]
    turns = [{"speaker": t["speaker"], "text": t["text"]} for t in mtrag_turns(sample.input)]
    return Task(task_id=sample.id, task_type="rag", input=turns, targets=targets,
                contexts=[ContextRef(document_id=str(p.id)) for p in sample.contexts], **enrichments)


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

    def add(self, value: float, verdict: Score | None) -> None:
        """`verdict`: the judge's score, None for a metric no judge gave."""
        self.values.append(value)
        if verdict is None:
            self.label_conflict = True  # no judge label: declare it numerical
            return
        self.judge = verdict.judge
        if verdict.model:
            self.models.add(verdict.model)
        if verdict.members:
            self.panel = True
        label = verdict.label
        if label is None or as_number(label) is not None or self.labels.get(label, value) != value:
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
        value_range = [0.0, 1.0, 0.1] if 0.0 <= low and high <= 1.0 else \
            [low, high, (high - low) / 10 if high > low else 1.0]
        return Metric(name=self.name, display_name=self.name, description=description, author="algorithm",
                      type="numerical", aggregator="median" if self.panel else "average", range=value_range)


def from_samples(runs: Iterable[tuple[str, Iterable[Sample]]], *, name: str,
                 description: str | None = None) -> InspectorRAGetFile:
    """An InspectorRAGet file from ragjudge runs, one (model id, samples) pair per model: a numeric score becomes an
    algorithm metric, a judge with word labels (IDK) a categorical one, a panel's members its annotators (aggregated by
    median, as the panel is)."""
    models: list[Model] = []
    tasks: dict[str, Task] = {}
    documents: dict[str, Document] = {}
    summaries: dict[str, _MetricSummary] = {}
    evaluations: list[Evaluation] = []
    for model_id, samples in runs:
        models.append(Model(model_id=model_id, name=model_id, owner="ragjudge"))
        for sample in samples:
            key = normalize_task_id(sample.id)
            if key not in tasks:
                tasks[key] = _task(sample)
            for passage in sample.contexts:
                if passage.text is not None:
                    pid = str(passage.id)
                    documents.setdefault(pid, Document(document_id=pid, text=passage.text, title=passage.title or None))
            annotations: dict[str, dict[str, Annotation]] = {}
            for metric, score in sample.scores.items():
                if score.value is None:
                    continue
                summary = summaries.setdefault(metric, _MetricSummary(metric))
                summary.add(score.value, score if score.judge is not None else None)
                members = [m for m in score.members if m.value is not None] if score.judge is not None else []
                annotations[metric] = {m.model or f"member{i}": Annotation(value=m.value)
                                       for i, m in enumerate(members)} or {SYSTEM: Annotation(value=score.value)}
            evaluations.append(Evaluation(task_id=sample.id, model_id=model_id, model_response=sample.output,
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

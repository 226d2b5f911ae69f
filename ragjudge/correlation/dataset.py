"""Humans and judges joined per item (one model's response to one task) on the normalised task id and the model id.

Humans are an InspectorRAGet file's `human` metrics; judges its algorithm metrics, ragjudge runs (each tied to a
model id) and other InspectorRAGet files. Each item keeps the task's enrichments as filterable fields.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragjudge.correlation.aggregate import Scale, aggregate, normalize_aggregator
from ragjudge.correlation.sources import read_results, results_file
from ragjudge.errors import InputError, UsageError
from ragjudge.formats.inspectorraget import (COMPOSITE, SYSTEM, InspectorRAGetFile, annotation_number,
                                             read_inspectorraget)
from ragjudge.formats.mtrag import task_of
from ragjudge.models import Task, domain_of, normalize_task_id

HUMAN, JUDGE = "human", "judge"


@dataclass(frozen=True, order=True)
class ItemKey:
    task: str
    """Normalised task id."""
    model: str


@dataclass
class Item:
    key: ItemKey
    task_id: str
    fields: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def answerability(self) -> str | None:
        values = self.fields.get("answerability") or ()
        return values[0].upper() if values else None


@dataclass
class MetricData:
    """One metric's ratings: per item the raters' values and the aggregated value."""

    name: str
    role: str
    source: str
    aggregator: str = "median"
    levels: tuple[float, ...] | None = None
    step: float | None = None
    ratings: dict[ItemKey, dict[str, float]] = field(default_factory=dict)
    values: dict[ItemKey, float] = field(default_factory=dict)

    def scale(self) -> Scale:
        observed = [v for r in self.ratings.values() for v in r.values()] or list(self.values.values())
        return Scale.infer(observed, levels=self.levels, step=self.step)

    def restricted(self, keys: set[ItemKey]) -> MetricData:
        return MetricData(self.name, self.role, self.source, self.aggregator, self.levels, self.step,
                          {k: v for k, v in self.ratings.items() if k in keys},
                          {k: v for k, v in self.values.items() if k in keys})

    def set_value(self, key: ItemKey, value: float, source: str, task_id: str) -> None:
        old = self.values.get(key)
        if old is not None and not math.isclose(old, value, rel_tol=1e-9, abs_tol=1e-12):
            raise InputError(f"judge metric {self.name!r} for task {task_id!r}, model {key.model!r} is {value} here "
                             f"but {old} in {self.source}", file=source)
        self.values[key] = value


@dataclass
class Dataset:
    items: dict[ItemKey, Item] = field(default_factory=dict)
    humans: dict[str, MetricData] = field(default_factory=dict)
    judges: dict[str, MetricData] = field(default_factory=dict)
    models: dict[str, str] = field(default_factory=dict)
    """model id → display name (from the human file)."""
    source: str = ""

    # ------------------------------------------------------------------ subsets and selection

    def restricted(self, keys: Iterable[ItemKey]) -> Dataset:
        keep = set(keys)
        return Dataset(items={k: v for k, v in self.items.items() if k in keep},
                       humans={n: m.restricted(keep) for n, m in self.humans.items()},
                       judges={n: m.restricted(keep) for n, m in self.judges.items()},
                       models=self.models, source=self.source)

    def field_names(self) -> list[str]:
        return sorted({name for item in self.items.values() for name in item.fields})

    def where(self, conditions: dict[str, list[str]]) -> Dataset:
        """Items whose field has one of the given values (case-insensitive; list fields match any element)."""
        available = self.field_names()
        keys = set(self.items)
        for name, wanted in conditions.items():
            column = field_name(name)
            if column not in available:
                raise UsageError(f"--where: no field {name!r} in the tasks (fields: {', '.join(available)})")
            accept = {w.casefold() for w in wanted}
            keys = {k for k in keys if any(v.casefold() in accept for v in self.items[k].fields.get(column, ()))}
            if not keys:
                present = sorted({v for item in self.items.values() for v in item.fields.get(column, ())})
                raise UsageError(f"no items left after --where {name}={','.join(wanted)} (values of {column}: "
                                 f"{', '.join(present[:20]) or 'none'})")
        return self.restricted(keys)

    def resolve_model(self, given: str, option: str) -> str:
        if given in self.models:
            return given
        by_name = [mid for mid, name in self.models.items() if name == given]
        if len(by_name) == 1:
            return by_name[0]
        raise UsageError(f"{option}: no model {given!r} in {self.source} (models: {', '.join(self.models) or 'none'})")

    def exclude_models(self, models: list[str]) -> Dataset:
        drop = {self.resolve_model(m, "--exclude-model") for m in models}
        keys = [k for k in self.items if k.model not in drop]
        if not keys:
            raise UsageError(f"no items left after --exclude-model {','.join(models)}")
        return self.restricted(keys)

    def select(self, humans: list[str] | None, judges: list[str] | None) -> Dataset:
        """Keep the named metrics (all by default); unknown names are a usage error listing the known ones."""
        out = self.restricted(self.items)
        out.humans = _pick(self.humans, humans, "human", other=self.judges)
        out.judges = _pick(self.judges, judges, "judge", other=self.humans)
        return out

    def with_members(self) -> Dataset:
        """Each panel member (a judge's individual raters) also as a judge of its own: `NAME[rater]`."""
        out = self.restricted(self.items)
        for name, metric in self.judges.items():
            raters = sorted({r for by_rater in metric.ratings.values() for r in by_rater})
            if len(raters) < 2:
                continue
            for rater in raters:
                member = MetricData(f"{name}[{rater}]", JUDGE, metric.source, metric.aggregator, metric.levels,
                                    metric.step)
                member.values = {k: r[rater] for k, r in metric.ratings.items() if rater in r}
                out.judges[member.name] = member
        return out


def _pick(metrics: dict[str, MetricData], names: list[str] | None, role: str, other: dict[str, MetricData]
          ) -> dict[str, MetricData]:
    if names is None:
        return dict(metrics)
    picked = {}
    for name in names:
        if name not in metrics:
            hint = f" ({name!r} is a {'judge' if role == 'human' else 'human'} metric)" if name in other else ""
            raise UsageError(f"unknown {role} metric {name!r}{hint} (available: {', '.join(metrics) or 'none'})")
        picked[name] = metrics[name]
    return picked


# ---------------------------------------------------------------------------------------------- fields


def field_name(name: str) -> str:
    """`Question Type`, `question-type` and `question_type` are the same field."""
    return re.sub(r"[\s\-]+", "_", name.strip()).casefold()


def _field_values(value: Any) -> tuple[str, ...]:
    if value is None or isinstance(value, dict):
        return ()
    if isinstance(value, list):
        return tuple(v for item in value for v in _field_values(item))
    if isinstance(value, float):
        if math.isnan(value):
            return ()
        if value.is_integer():
            value = int(value)
    text = str(value).strip()
    return (text,) if text else ()


def _fields(enrichments: dict[str, Any], task_id: str, model_id: str) -> dict[str, tuple[str, ...]]:
    out = {field_name(key): values for key, value in enrichments.items() if (values := _field_values(value))}
    out.update(task_id=(task_id,), model=(model_id,))
    if "domain" not in out and out.get("collection"):
        out["domain"] = tuple(d for d in (domain_of(c) for c in out["collection"]) if d)
    return out


def _task_fields(task: Task, model_id: str) -> dict[str, tuple[str, ...]]:
    enrichments = dict(task.enrichments)
    enrichments.update({"answerability": task.answerability, "question_type": task.question_types,
                        "multi_turn": task.multi_turn, "collection": task.collection, "turn": task.turn,
                        "conversation_id": task.conversation_id})
    return _fields(enrichments, task.task_id, model_id)


def _merge_fields(item: Item, fields: dict[str, tuple[str, ...]]) -> None:
    for name, values in fields.items():
        item.fields.setdefault(name, values)  # the human file's task description wins


# ---------------------------------------------------------------------------------------------- loading


def _load_ir(ds: Dataset, data: InspectorRAGetFile, file: str, roles: set[str]) -> None:
    """Add the metrics of the given authors (human → humans, algorithm → judges) from an InspectorRAGet file."""
    tasks = data.task_index()
    wanted = {m.name: m for m in data.metrics if m.is_numeric and
              (HUMAN if m.author == "human" else JUDGE) in roles}
    for i, ev in enumerate(data.evaluations):
        key = ItemKey(normalize_task_id(ev.task_id), ev.model_id)
        task = tasks.get(key.task)
        fields = _fields(task.enrichments if task else {}, ev.task_id, ev.model_id)
        if key in ds.items:
            _merge_fields(ds.items[key], fields)
        else:
            ds.items[key] = Item(key, ev.task_id, fields)
        for name, by_rater in ev.annotations.items():
            metric = wanted.get(name)
            if metric is None:
                continue
            role = HUMAN if metric.author == "human" else JUDGE
            target = ds.humans if role == HUMAN else ds.judges
            data_ = target.setdefault(name, MetricData(name, role, file, normalize_aggregator(metric.aggregator),
                                                       tuple(metric.levels() or ()) or None, metric.step()))
            raters = {rater: value for rater, annotation in by_rater.items()
                      if (value := annotation_number(data, metric, i, rater, annotation.value, file=file)) is not None}
            people = {r: v for r, v in raters.items() if r not in (SYSTEM, COMPOSITE)}
            if SYSTEM in raters:
                value = raters[SYSTEM]
            elif people:
                value = aggregate(list(people.values()), metric.aggregator)
            else:
                value = raters.get(COMPOSITE)
            if value is None:
                continue
            if people:
                data_.ratings[key] = people
            if role == JUDGE:
                data_.set_value(key, value, file, ev.task_id)
            else:
                data_.values[key] = value


def load_humans(path: str | Path) -> Dataset:
    """The human ratings (and any algorithm metrics) of an InspectorRAGet file."""
    data = read_inspectorraget(path)
    ds = Dataset(models={m.model_id: m.name or m.model_id for m in data.models}, source=str(path))
    for ev in data.evaluations:
        ds.models.setdefault(ev.model_id, ev.model_id)
    _load_ir(ds, data, str(path), {HUMAN, JUDGE})
    if not ds.humans:
        numeric = [m.name for m in data.metrics if m.author == "human" and m.is_numeric]
        reason = "no human-authored numerical or categorical metric" if not numeric else \
            f"no evaluation has a value for the human metrics {', '.join(numeric)}"
        raise InputError(f"has no human ratings to compare with ({reason})", file=str(path))
    return ds


def add_inspectorraget_judges(ds: Dataset, path: str | Path) -> int:
    """Algorithm metrics of another InspectorRAGet file (for example one written by `ragjudge export`);
    returns how many of its items were already known (from the human file)."""
    data = read_inspectorraget(path)
    if not any(m.author == "algorithm" and m.is_numeric for m in data.metrics):
        raise InputError("has no algorithm metrics to use as judges", file=str(path))
    known = set(ds.items)
    joined = sum(ItemKey(normalize_task_id(ev.task_id), ev.model_id) in known for ev in data.evaluations)
    _load_ir(ds, data, str(path), {JUDGE})
    return joined


def add_results(ds: Dataset, path: str | Path, model_id: str) -> int:
    """Judge values of a ragjudge run (its samples) for one model; returns how many of its items have humans."""
    file = results_file(Path(path))
    joined = 0
    for line, sample in read_results(file):
        task = task_of(sample, file=str(file), line=line)
        key = ItemKey(task.key, model_id)
        joined += key in ds.items
        item = ds.items.setdefault(key, Item(key, task.task_id))
        _merge_fields(item, _task_fields(task, model_id))
        for name, score in sample.scores.items():
            if score.value is not None:
                ds.judges.setdefault(name, MetricData(name, JUDGE, str(file))).set_value(key, score.value, str(file),
                                                                                      task.task_id)
            members = {m.model or f"member{i}": m.value for i, m in enumerate(score.members) if m.value is not None}
            if score.judge is not None and name in ds.judges and members:  # a panel's raters
                ds.judges[name].ratings[key] = members
    return joined

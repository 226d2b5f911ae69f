"""The one result contract: what a bench's summary is (docs/contract.md).

Every reader (summary.json, `--format json`, the terminal, the report) reads this and nothing else, so none guesses
what a bench meant: each metric says which way is better, what kind of number it is (a score in [0, 1], a rate, a
count, a time) and what it measures; the paper's figures say their units and when they are comparable.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ragjudge.formats.samples import json_schema as record_schema

SCHEMA_ID = "ragjudge.summary/1"

Kind = Literal["score", "rate", "count", "seconds", "number"]
"""- `score`: a figure of merit in [0, 1] (accuracy, recall, RB_agg);
- `rate`: a share in [0, 1] that describes a behaviour (how often a model declined, invented an answer);
- `count`: a whole number of things (cases, errors, missing predictions);
- `seconds`: a time;
- `number`: any other real number (a threshold, a p-value, tokens per answer)."""

UNIT_KINDS = ("score", "rate")
"""Kinds drawn on a 0-1 axis; the others are never charted against them."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class Stat(_Model):
    """A metric's figure over some samples: the whole run's, or one breakdown group's."""

    value: float | None
    """None when no sample had a value (n = 0)."""
    n: int | None = None
    """How many samples (or units: queries, splits, cases) the value is computed over; None when the figure is not
    a mean over samples (a corpus-level F1, a threshold)."""
    errors: int = 0
    """Samples whose score failed: not in `n`, never counted as zero."""
    not_applicable: int = 0
    """Samples the metric does not apply to (a context judge's record without passages, a reference judge's without
    a reference, a record without an answer): not in `n`, not errors, never counted as zero."""
    std: float | None = None
    ci: tuple[float, float] | None = None
    """95% interval of a mean over samples: the judge's own uncertainty (a seeded bootstrap over samples, "judge
    only"; `details.ci` says how), not how far the judge is from people: `ragjudge correlate RUN --labels` adds that."""


@dataclass(frozen=True)
class MetricInfo:
    """What a bench declares about a metric (`Bench.metrics`): the single source of every summary's, table's
    and chart's metadata. `name` may be a pattern (`*_idk`, `R@*`) matching a family."""

    name: str
    description: str
    higher_is_better: bool | None = True
    """None: neither better nor worse in itself (how often a model declined)."""
    kind: Kind = "score"
    counts: str = ""
    """Which samples get a value, when not all: why `n` differs between metrics (said in the legend)."""

    def matches(self, name: str) -> bool:
        return fnmatchcase(name, self.name)


class Metric(Stat):
    higher_is_better: bool | None
    kind: Kind
    description: str
    counts: str = ""
    details: dict[str, Any] = Field(default_factory=dict)
    """Anything else about this figure (e.g. `partial_panels`: panel scores fewer judges gave than asked)."""


class Headline(_Model):
    """The one line a run is summed up by, printed last: `RB_agg_idk 0.541 over 37 tasks; ...`."""

    metric: str
    value: float | None
    text: str


class Group(_Model):
    n: int | None
    """Samples in this group."""
    metrics: dict[str, Stat]


class Breakdown(_Model):
    title: str
    label: str
    """The first column's header: the dimension (`answerability`, `system`, `split`)."""
    groups: dict[str, Group]
    columns: list[str] = Field(default_factory=list)
    """The metrics the table shows, in order (default: every metric the groups have)."""
    note: str = ""
    """What a reader must know to read it (a task with several labels counts under each)."""


class Table(_Model):
    """A bench's own table (a confusion matrix, per-category figures), shown as it is."""

    title: str
    columns: list[str]
    rows: list[list[Any]]
    notes: list[str] = Field(default_factory=list)


class Reference(Table):
    """Figures published in the benchmark's paper, printed beside ours."""

    source: str
    """Where they are published: `MTRAG (Katsis et al., 2025), Table 15`."""
    unit: Literal["fraction", "percent", "mixed"] = "fraction"
    """How its numbers are written: fractions in [0, 1] like ours, percentages, or per column (see notes)."""
    comparable: str = ""
    """When our figures can be compared with these (same data split, retriever, k...); empty: not comparable."""


class RunFacts(BaseModel):
    """What ran: enough to tell two summaries apart (run.json has everything)."""

    model_config = ConfigDict(extra="allow", use_attribute_docstrings=True)

    ragjudge_version: str
    bench: str
    options: dict[str, Any] = Field(default_factory=dict)
    models: dict[str, Any] = Field(default_factory=dict)
    """The LLMs, encoders and judge panels used, by role."""
    seconds: float | None = None


class Summary(_Model):
    """A run's result: what summary.json holds and `--format json` prints, for every bench."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, use_attribute_docstrings=True)

    schema_: Literal["ragjudge.summary/1"] = Field(SCHEMA_ID, alias="schema")
    bench: str
    title: str
    """What the main table is called: `mtrag: 40 tasks`."""
    unit: str = "samples"
    """What one sample is (tasks, queries, dialogues, cases): used in titles and the headline."""
    n_samples: int
    n_errors: int
    """Samples with any error (in their output or a score)."""
    metrics: dict[str, Metric]
    headline: Headline | None = None
    breakdowns: dict[str, Breakdown] = Field(default_factory=dict)
    tables: list[Table] = Field(default_factory=list)
    reference: list[Reference] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    """Lines printed on stderr after the tables (rewrites that fell back, partial panels)."""
    run: RunFacts | None = None
    details: dict[str, Any] = Field(default_factory=dict)
    """The bench's own data for scripts (per-seed figures, significance tests...): not drawn by renderers."""

    @model_validator(mode="after")
    def _consistent(self) -> Summary:
        for name, metric in self.metrics.items():
            check_value(name, metric.value, metric.kind)
        for key, breakdown in self.breakdowns.items():
            for group, stats in breakdown.groups.items():
                for name, stat in stats.metrics.items():
                    if name not in self.metrics:
                        raise ValueError(f"breakdown {key!r}, group {group!r}: metric {name!r} is not in `metrics`")
                    check_value(f"{key}/{group}/{name}", stat.value, self.metrics[name].kind)
            unknown = [c for c in breakdown.columns if c not in self.metrics]
            if unknown:
                raise ValueError(f"breakdown {key!r} shows unknown metric(s) {unknown}")
        if self.headline is not None and self.headline.metric not in self.metrics:
            raise ValueError(f"headline metric {self.headline.metric!r} is not in `metrics`")
        return self

    def to_dict(self) -> dict[str, Any]:
        """The JSON object written to summary.json and printed by `--format json`, as a dict."""
        return self.model_dump(mode="json", by_alias=True)

    def to_json(self, *, indent: int | None = 2) -> str:
        """summary.json's text (pandas' and pydantic's convention: `to_json` gives a string, `to_dict` a dict)."""
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)


def check_value(where: str, value: float | None, kind: Kind) -> None:
    """A score or a rate outside [0, 1], a negative or fractional count, or a NaN is a bench bug, caught here
    rather than drawn on the wrong axis."""
    if value is None:
        return
    if not math.isfinite(value):
        raise ValueError(f"metric {where}: {value} is not a finite number (use null for 'no value')")
    if kind in UNIT_KINDS and not -1e-9 <= value <= 1 + 1e-9:
        raise ValueError(f"metric {where}: a {kind} must be in [0, 1], got {value}")
    if kind == "count" and (value < 0 or value != int(value)):
        raise ValueError(f"metric {where}: a count must be a whole number >= 0, got {value}")


class MetricCatalog:
    """A bench's declared metrics, turning figures into `Metric`s with their metadata. A name no declaration
    matches is a bench bug (its tables and charts would have to guess), not something to render anyway."""

    def __init__(self, infos: Sequence[MetricInfo], bench: str = "bench"):
        self.infos = list(infos)
        self.bench = bench

    def info(self, name: str) -> MetricInfo:
        for info in self.infos:
            if info.matches(name):
                return info
        raise KeyError(f"{self.bench}: metric {name!r} is not declared in the bench's `metrics`")

    def metric(self, name: str, value: float | None, *, n: int | None = None, errors: int = 0,
               not_applicable: int = 0, std: float | None = None, ci: tuple[float, float] | None = None,
               **details: Any) -> Metric:
        info = self.info(name)
        return Metric(value=_plain(value), n=n, errors=errors, not_applicable=not_applicable, std=_plain(std), ci=ci,
                      higher_is_better=info.higher_is_better, kind=info.kind, description=info.description,
                      counts=info.counts, details={k: v for k, v in details.items() if v is not None})


def stat(value: float | None, *, n: int | None = None, errors: int = 0, not_applicable: int = 0,
         std: float | None = None) -> Stat:
    return Stat(value=_plain(value), n=n, errors=errors, not_applicable=not_applicable, std=_plain(std))


def _plain(value: Any) -> float | None:
    """numpy scalars and NaN ('no value') as JSON-able floats or None."""
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value


def headline_of(summary_metrics: dict[str, Metric], names: Iterable[str], unit: str, *,
                also: Sequence[str] = ()) -> Headline | None:
    """The first of `names` that has a value, as `NAME 0.541 over 37 UNIT`, then each of `also` that has one."""
    main = next((m for m in names if m in summary_metrics and summary_metrics[m].value is not None), None)
    if main is None:
        return None
    shown = [main, *(m for m in also if m != main and m in summary_metrics and summary_metrics[m].value is not None)]
    return Headline(metric=main, value=summary_metrics[main].value,
                    text=describe_figures([(m, summary_metrics[m]) for m in shown], unit))


def describe_figures(figures: Sequence[tuple[str, Stat]], unit: str) -> str:
    """`nDCG@10 0.466, R@10 0.590 over 10 queries; BertKPrec 0.674 over 31 tasks`: figures over the same samples
    share their `over N`, so the line stays short enough to read (and to fit 80 columns)."""
    runs: list[tuple[int | None, list[str]]] = []
    for name, metric in figures:
        value = metric.value
        text = f"{name} {value:.3f}" if value is not None and not float(value).is_integer() else f"{name} {value:g}"
        if runs and runs[-1][0] == metric.n:
            runs[-1][1].append(text)
        else:
            runs.append((metric.n, [text]))
    return "; ".join(", ".join(texts) + (f" over {n} {unit}" if n is not None else "") for n, texts in runs)


def describe(name: str, metric: Stat, unit: str) -> str:
    """`NAME 0.541 over 37 UNIT`."""
    return describe_figures([(name, metric)], unit)


def json_schema() -> dict[str, Any]:
    """The published JSON Schema of a summary (`ragjudge schema summary`): made as a sample's is."""
    return record_schema(Summary, SCHEMA_ID, "ragjudge summary")


ROUNDED = 5.01e-5
"""How far a summary's mean may be from its samples' mean: benches round their figures (MTRAG to 4 digits)."""
JUDGE_ONLY_CI = "judge only: 95% percentile bootstrap over samples (1000 resamples, seed 0)"


def add_judge_only_cis(summary: Summary, samples: Sequence[Any]) -> None:
    """Fill `ci` of each metric that is the mean of its samples' scores of the same name (same n, the same mean up
    to rounding) with the seeded bootstrap interval of that mean, and say so in `details.ci`. Figures that are not
    such a mean (a corpus-level F1, a threshold, a count) keep no interval."""
    from ragjudge.metrics.bootstrap import mean_interval

    for name, metric in summary.metrics.items():
        if metric.value is None or metric.ci is not None or not metric.n or metric.n < 2:
            continue
        values = [s.scores[name].value for s in samples if name in s.scores and s.scores[name].value is not None]
        if len(values) != metric.n or abs(math.fsum(values) / len(values) - metric.value) > ROUNDED:
            continue
        bounds = mean_interval(values)
        if bounds is not None:
            metric.ci = bounds
            metric.details["ci"] = JUDGE_ONLY_CI

"""A `rag` run's summary: each judge's metric as the mean over the records it judged (its failures, `errors`, and the
records it does not apply to, `not_applicable`, counted apart, never as zeros), and a breakdown by every label the
records carry."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from ragjudge.engine.bench import SampleResult, failed
from ragjudge.engine.summary import Breakdown, Group, Metric, MetricCatalog, MetricInfo, stat
from ragjudge.formats.rag_records import RagRecord
from ragjudge.judges import Judge

MAX_GROUPS = 30
"""A label with more values than this is an identifier, not something to break figures down by."""


def catalog(judges: Sequence[Judge], bench: str) -> MetricCatalog:
    """Each judge's metric, with the direction and kind its spec declares."""
    return MetricCatalog([MetricInfo(j.metric, j.spec.description.split(". ")[0].rstrip("."),
                                     higher_is_better=j.spec.higher_is_better, kind=j.spec.metric_kind,
                                     counts="records the judge could judge (not applicable ones are left out)")
                          for j in judges], bench)


def not_applicable(score: Mapping[str, Any] | None) -> str | None:
    """Why a judge did not apply to a record (`details.skipped`: no passages, no reference, no answer), or None."""
    if not score or failed(score) or score.get("value") is not None:
        return None
    reason = (score.get("details") or {}).get("skipped")
    return str(reason) if reason else None


def values(results: Sequence[SampleResult[RagRecord]], judge: Judge) -> list[float | None]:
    """Each record's value of one judge (None: failed, not judged or not applicable)."""
    found = [r.scores.get(judge.name, {}).get("value") for r in results]
    return [float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None for v in found]


def metrics(results: Sequence[SampleResult[RagRecord]], judges: Sequence[Judge],
            cat: MetricCatalog) -> dict[str, Metric]:
    out = {}
    for judge in judges:
        got = [v for v in values(results, judge) if v is not None]
        # a record whose answer could not be read fails every judge: counted here too, so that the table's errors
        # and the run's "N sample(s) had errors" are the same samples
        errors = sum(1 for r in results if failed(r.output) or failed(r.scores.get(judge.name)))
        skipped = sum(1 for r in results if not failed(r.output) and not_applicable(r.scores.get(judge.name)))
        out[judge.metric] = cat.metric(judge.metric, statistics.fmean(got) if got else None, n=len(got),
                                       errors=errors, not_applicable=skipped,
                                       std=statistics.stdev(got) if len(got) > 1 else None)
    return out


def breakdowns(results: Sequence[SampleResult[RagRecord]], judges: Sequence[Judge]) -> dict[str, Breakdown]:
    """By each label with 2 to MAX_GROUPS values (a record with several values counts under each)."""
    out: dict[str, Breakdown] = {}
    names = list(dict.fromkeys(k for r in results for k in r.sample.labels))
    per_judge = {j.metric: values(results, j) for j in judges}
    by_metric = {j.metric: j for j in judges}
    for name in names:
        groups: dict[str, list[int]] = {}
        for i, r in enumerate(results):
            label = r.sample.labels.get(name)
            for value in label if isinstance(label, list) else [label] if label is not None else []:
                groups.setdefault(value, []).append(i)
        if not 2 <= len(groups) <= MAX_GROUPS:
            continue
        table = {}
        for value, members in sorted(groups.items()):
            stats = {}
            for metric, got in per_judge.items():
                present = [got[i] for i in members if got[i] is not None]
                skipped = sum(1 for i in members if not_applicable(results[i].scores.get(by_metric[metric].name)))
                stats[metric] = stat(statistics.fmean(present) if present else None, n=len(present),
                                     not_applicable=skipped)
            table[value] = Group(n=len(members), metrics=stats)
        out[name] = Breakdown(title=f"By {name}", label=name, columns=list(per_judge), groups=table)
    return out

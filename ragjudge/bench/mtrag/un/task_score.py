"""The MTRAGEval task score of a generation run, as the organisers ranked tasks B and C.

The harmonic mean of the three **corpus-level** means of `*_idk_underspecified` RL_F, RB_llm and RB_agg, not a mean
of per-task harmonic means (as RaguTeam's `scripts/evaluation/metrics_aggregation.py`). Labels follow the organisers'
files: the bare name for conditioned means, "X (Pre-conditioned)" for the others. A run without one of the three (an
offline run has no RL_F or RB_llm) has no task score, and the summary says which judge is missing.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ragjudge.engine.summary import Headline, MetricCatalog, MetricInfo, Stat, Summary, Table, describe_figures

SCORE_METRIC = "mtrageval_score"
RANKED = {"RB_agg": "RB_agg_idk_underspecified", "RL_F": "RL_F_idk_underspecified",
          "RB_llm": "RB_llm_idk_underspecified"}
"""The organisers' label -> our metric, in the order of their returned files."""
JUDGE_OF = {"RB_agg": "rb_alg", "RL_F": "rl_f", "RB_llm": "rb_llm"}
CONDITIONING_JUDGES = "an IDK judge (idk) and a clarification judge (underspecified)"
PRE_CONDITIONED = "{} (Pre-conditioned)"
SCORE_INFO = MetricInfo(SCORE_METRIC, "the MTRAGEval task score (tasks B and C): harmonic mean of the corpus-level "
                        "means of RB_agg, RL_F and RB_llm conditioned (*_idk_underspecified)",
                        counts="a corpus-level figure: each of its three means counts its own tasks")


@dataclass(frozen=True)
class TaskScore:
    """The task score (None when a ranked metric is missing or has no value) and what it is made of."""

    score: float | None
    conditioned: dict[str, Stat]
    """The organisers' label -> the run's corpus-level conditioned mean, for those the run has."""
    pre_conditioned: dict[str, Stat]
    """`X (Pre-conditioned)` -> the run's unconditioned mean, for those the run has."""
    missing: list[str] = field(default_factory=list)
    """The organisers' labels of the ranked metrics the run has no value for."""


def task_score(metrics: Mapping[str, Stat]) -> TaskScore:
    """The task score of a run's corpus-level means (`metrics`: the summary's)."""
    conditioned = {label: metrics[name] for label, name in RANKED.items()
                   if name in metrics and metrics[name].value is not None}
    pre = {PRE_CONDITIONED.format(label): metrics[label] for label in RANKED
           if label in metrics and metrics[label].value is not None}
    missing = [label for label in RANKED if label not in conditioned]
    values = [s.value for s in conditioned.values() if s.value is not None]
    score = None if missing else round(statistics.harmonic_mean(values), 6)  # 0 when any mean is 0
    return TaskScore(score, conditioned, pre, missing)


def missing_note(missing: Sequence[str], metrics: Mapping[str, Stat]) -> str:
    """Why a run has no task score: which judge did not run (or gave no value)."""
    parts = []
    for label in missing:
        name = RANKED[label]
        why = "no task has a value" if name in metrics else \
            f"judge {JUDGE_OF[label]} did not run" if label not in metrics else \
            f"it needs {CONDITIONING_JUDGES}"
        parts.append(f"{name} ({why})")
    return (f"no MTRAGEval task score: it is the harmonic mean of RB_agg, RL_F and RB_llm conditioned, and this run "
            f"has no {'; no '.join(parts)}")


def add_task_score(summary: Summary) -> TaskScore | None:
    """The task score as the summary's headline, with its table under the organisers' labels; when the run has
    none of the ranked metrics (no reference-based judge ran) nothing is added, else a note says what is missing."""
    if not any(label in summary.metrics or name in summary.metrics for label, name in RANKED.items()):
        return None
    found = task_score(summary.metrics)
    both = {**found.conditioned, **found.pre_conditioned}
    rows = [[label, s.value, s.n] for label, s in both.items()]
    summary.details["mtrageval"] = {"score": found.score, "missing": [RANKED[m] for m in found.missing],
                                    **{label: s.value for label, s in both.items()}}
    if found.score is None:
        summary.notes.append(missing_note(found.missing, summary.metrics))
        return found
    metric = MetricCatalog([SCORE_INFO], summary.bench).metric(SCORE_METRIC, found.score)
    summary.metrics = {SCORE_METRIC: metric, **summary.metrics}
    parts = describe_figures(list(found.conditioned.items()), summary.unit)
    summary.headline = Headline(metric=SCORE_METRIC, value=found.score,
                                text=f"{SCORE_METRIC} {found.score:.3f} (harmonic mean of {parts}, conditioned)")
    summary.tables.insert(0, Table(
        title="MTRAGEval task score, as the organisers ranked tasks B and C", columns=["figure", "value", "n"],
        rows=[[f"{SCORE_METRIC} (harmonic mean)", found.score, None], *rows],
        notes=["the harmonic mean of the three corpus-level conditioned means (RB_agg, RL_F, RB_llm: "
               "*_idk_underspecified), labelled as the organisers' returned files label them; the "
               "Pre-conditioned means are the judges' own, unconditioned"]))
    return found

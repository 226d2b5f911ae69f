"""The tidy per-task table and the summary: overall means, the paper's breakdowns, what the judges and the
retrieval did."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ragjudge.bench.mtrag.metrics import TaskOutcome, partial_panels
from ragjudge.engine.summary import Breakdown, Group, Metric, MetricCatalog, headline_of, stat

if TYPE_CHECKING:  # pandas loads on first use: listing benches must not pay for it
    import pandas as pd

    from ragjudge.models import Task

BREAKDOWNS = {
    "answerability": ("answerability", "By answerability", ""),
    "turn": ("turn_position", "First vs later turns", ""),
    "domain": ("domain", "By domain", ""),
    "question_type": ("question_type", "By question type", "a task with several question types counts under each"),
    "multi_turn": ("multi_turn", "By multi-turn type", "a task with several multi-turn types counts under each"),
    "standalone": ("standalone", "Standalone vs non-standalone questions", ""),
}
"""Breakdown dimension (MTRAG Table 5 / Table 16 / Figure 3) -> its tidy-table column, title and note."""
MULTI_LABEL = ("question_type", "multi_turn")
"""Columns holding several labels joined by "|": a task counts once under each."""
STANDALONE_FIELDS = ("Standalone Type", "Standalone", "standalone")


def standalone_label(task: Task) -> str | None:
    """standalone / non-standalone where the task says (MTRAG's `Standalone Type`), else None (MTRAG-UN's release
    does not label it)."""
    value = next((task.enrichments[f] for f in STANDALONE_FIELDS if f in task.enrichments), None)
    if isinstance(value, list):
        value = value[0] if value else None
    if isinstance(value, bool):
        return "standalone" if value else "non-standalone"
    if not isinstance(value, str) or value.strip().lower() in ("", "n/a", "na", "nan", "none", "null"):
        return None
    label = value.strip().lower().replace("_", "-").replace(" ", "-")
    return "non-standalone" if label in ("non-standalone", "nonstandalone", "no", "false") else \
        "standalone" if label in ("standalone", "yes", "true") else value.strip()


def multi_turns(task: Task) -> list[str]:
    """Every `Multi-Turn` label of a task (MTRAG writes one, MTRAG-UN a list)."""
    return task.multi_turns or ([task.multi_turn] if task.multi_turn else [])


def tidy_table(outcomes: Sequence[TaskOutcome], metric_names: Sequence[str]) -> pd.DataFrame:
    """One row per task: identifiers, enrichments, the prediction, one column per metric, errors."""
    import pandas as pd

    frame = pd.DataFrame([{
        "task_id": (t := o.task).task_id, "conversation_id": t.conversation_id, "turn": t.turn,
        "turn_position": "first" if t.turn == 1 else "later", "collection": t.collection, "domain": t.domain,
        "answerability": t.answerability, "question_type": "|".join(t.question_types) or None,
        "multi_turn": "|".join(multi_turns(t)) or None, "standalone": standalone_label(t),
        "prediction": o.prediction.text, **{name: o.metrics.get(name) for name in metric_names},
        "errors": "; ".join(f"{k}: {v}" for k, v in o.errors.items()) or None} for o in outcomes])
    for name in metric_names:
        frame[name] = pd.to_numeric(frame[name], errors="coerce")
    return frame


CONDITIONED_UNDERSPECIFIED = ("RB_agg_idk_underspecified", "RB_llm_idk_underspecified", "RL_F_idk_underspecified",
                              "answerability_acc")
"""MTRAG-UN's official conditioning, shown when a clarification judge ran: every class has a value (and, by
answerability, how often the answers asked for clarification)."""
BY_ANSWERABILITY_ALSO = ("underspecified_eval",)
CONDITIONED = ("RB_agg_idk", "RB_llm_idk", "RL_F_idk", "answerability_acc")
RAW = ("RB_agg", "RB_llm", "RL_F", "idk_eval", "idk_lexical")
"""Breakdown tables show what the paper reports: the IDK-conditioned scores and answerability accuracy when an
IDK judge ran, else the raw scores (summary.json holds every metric in every group)."""
HEADLINE = ("RB_llm_idk_underspecified", "RB_agg_idk_underspecified", "RL_F_idk_underspecified",
            "RB_llm_idk", "RB_agg_idk", "RL_F_idk", "RB_llm", "RB_agg", "RL_F")
"""The papers' headline figures, best first: MTRAG-UN's conditioned scores (over every task) when a clarification
judge ran, else MTRAG's IDK-conditioned reference-based scores."""


def summarize(outcomes: Sequence[TaskOutcome], metric_names: Sequence[str], error_counts: dict[str, int],
              catalog: MetricCatalog) -> tuple[dict[str, Metric], dict[str, Breakdown]]:
    """Overall metrics (mean over the tasks that have a value, and the tasks whose judge failed) and the paper's
    breakdowns (Table 5 / Table 16 / Figure 3), each group's means over its tasks."""
    import pandas as pd

    frame = tidy_table(outcomes, metric_names)
    metrics: dict[str, Metric] = {}
    for name in metric_names:
        column = frame[name].dropna() if name in frame else pd.Series(dtype=float)
        metrics[name] = catalog.metric(name, _mean(column), n=int(column.size), errors=error_counts.get(name, 0))
    shown = _shown(CONDITIONED_UNDERSPECIFIED, metrics, first=3) or _shown(CONDITIONED, metrics) or \
        _shown(RAW, metrics) or list(metrics)[:6]
    breakdowns: dict[str, Breakdown] = {}
    for dimension, (column, title, note) in BREAKDOWNS.items():
        data = frame
        if column in MULTI_LABEL:  # multi-label: a task counts once under each of its labels
            data = frame.assign(**{column: frame[column].str.split("|")}).explode(column)
        data = data[data[column].notna()]
        if data.empty:
            continue
        groups: dict[str, Group] = {}
        for value, group in data.groupby(column, sort=True):
            groups[str(value)] = Group(n=int(len(group)), metrics={
                name: stat(_mean(values := group[name].dropna()), n=int(values.size)) for name in metric_names})
        breakdowns[dimension] = Breakdown(title=title, label=dimension, groups=groups, note=note,
                                          columns=shown + _also(dimension, shown, metrics))
    return metrics, breakdowns


def _also(dimension: str, shown: list[str], metrics: dict[str, Metric]) -> list[str]:
    if dimension != "answerability" or not any(m.endswith("_idk_underspecified") for m in shown):
        return []
    return [m for m in BY_ANSWERABILITY_ALSO if m in metrics]


def _shown(names: Sequence[str], metrics: dict[str, Metric], first: int | None = None) -> list[str]:
    """The `names` that are metrics, if any of the first `first` is (else none)."""
    present = [m for m in names if m in metrics]
    return present if first is None or any(m in metrics for m in names[:first]) else []


def _mean(series: pd.Series) -> float | None:
    return None if series.empty else round(float(series.mean()), 6)


def summary_parts(outcomes: Sequence[TaskOutcome], metric_names: Sequence[str], catalog: MetricCatalog, *,
                  judges: dict[str, list[str]], retrieval: dict[str, Any] | None) -> dict[str, Any]:
    """The keyword arguments of `Bench.summary` for a run: the metrics (each with the tasks its judge failed on) and
    breakdowns, panels some member did not answer, the judges' models and, when the generator retrieved, the
    pipeline and its query rewrites (fallbacks are reported, never hidden)."""
    error_counts = Counter(r.metric for o in outcomes for r in o.results.values() if r.error)
    metrics, breakdowns = summarize(outcomes, metric_names, error_counts, catalog)
    warnings = []
    for metric, partial in partial_panels(list(outcomes)).items():
        metrics[metric].details["partial_panels"] = partial
        warnings.append(f"warning: {partial} {metric} panel score(s) came from fewer judges than asked (a "
                        "member failed); --min-panel N requires N answers")
    details: dict[str, Any] = {"judges": judges}
    if retrieval is not None:
        from ragjudge.retrieval.queries import rewrite_warning

        details["pipeline"] = retrieval["spec"]["name"]
        if retrieval["query_strategy"].get("strategy") == "rewrite":
            details["query_rewrite"] = retrieval["query_strategy"]
            warnings[:0] = [w for w in [rewrite_warning(retrieval["query_strategy"])] if w]
    return {"metrics": metrics, "breakdowns": breakdowns, "warnings": warnings, "details": details,
            "headline": headline_of(metrics, HEADLINE, "tasks", also=("answerability_acc",))}

"""Per-task metrics under MTRAG's official names: judge values, RB_alg parts, IDK-conditioned variants and
answerability accuracy (the paper's Table 5 conditioning), and MTRAG-UN's official `*_idk_underspecified`
conditioning when a clarification judge ran too."""

from __future__ import annotations

from dataclasses import dataclass, field

from ragjudge.judges.conditioning import (
    ANSWERABILITY_ACCURACY,
    CONDITIONED_SUFFIX,
    UNDERSPECIFIED_SUFFIX,
    answerability_correct,
    condition,
    condition_underspecified,
)
from ragjudge.judges import Judge
from ragjudge.models import JudgeResult, Prediction, Task

# Metrics that IDK conditioning applies to (the paper's phi), by official name.
CONDITIONED_METRICS = ("RB_agg", "RB_llm", "RL_F")
IDK_JUDGES = ("idk", "idk_lexical")
CLARIFICATION_METRIC = "underspecified_eval"
"""What MTRAG-UN's clarification judges (`underspecified`, `underspecified_lexical`) write: 1 asks, 0 does not."""
RB_ALG_COMPONENTS = ("RougeL_stemFalse", "BertscoreR", "BertKPrec")


@dataclass
class TaskOutcome:
    task: Task
    prediction: Prediction
    results: dict[str, JudgeResult] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return bool(self.errors)


def assemble(task: Task, prediction: Prediction, results: dict[str, JudgeResult], *,
             conversational_as_unanswerable: bool = False) -> TaskOutcome:
    """Per-task metrics under their official names, IDK-conditioned variants and answerability accuracy."""
    outcome = TaskOutcome(task=task, prediction=prediction, results=results)
    if prediction.error:
        outcome.errors["generation"] = prediction.error
    for name, result in results.items():
        if result.error:
            outcome.errors[name] = result.error
        if result.value is not None:
            outcome.metrics[result.metric] = result.value
        for component in RB_ALG_COMPONENTS:
            if isinstance(result.details.get(component), (int, float)):
                outcome.metrics[component] = float(result.details[component])

    idk_result = next((results[j] for j in IDK_JUDGES if j in results), None)
    if idk_result is not None:
        idk = idk_result.value
        opts = {"conversational_as_unanswerable": conversational_as_unanswerable}
        for metric in CONDITIONED_METRICS:
            if not any(r.metric == metric for r in results.values()):
                continue
            value = condition(outcome.metrics.get(metric), idk, task.answerability, **opts)
            if value is not None:
                outcome.metrics[metric + CONDITIONED_SUFFIX] = value
        correct = answerability_correct(idk, task.answerability, **opts)
        if correct is not None:
            outcome.metrics[ANSWERABILITY_ACCURACY] = correct
        clarification = next((r for r in results.values() if r.metric == CLARIFICATION_METRIC), None)
        if clarification is not None:
            for metric in CONDITIONED_METRICS:
                if any(r.metric == metric for r in results.values()):
                    value = condition_underspecified(outcome.metrics.get(metric), idk, clarification.value,
                                                     task.answerability)
                    if value is not None:
                        outcome.metrics[metric + UNDERSPECIFIED_SUFFIX] = value
    return outcome


def metric_names(judges: list[Judge]) -> list[str]:
    """Judge metrics, RB_alg components, conditioned variants and answerability accuracy, in that order."""
    names = [j.metric for j in judges]
    if any(j.name == "rb_alg" for j in judges):
        names += list(RB_ALG_COMPONENTS)
    if any(j.name in IDK_JUDGES for j in judges):
        conditioned = [m for m in CONDITIONED_METRICS if m in names]
        names += [m + CONDITIONED_SUFFIX for m in conditioned]
        names.append(ANSWERABILITY_ACCURACY)
        if CLARIFICATION_METRIC in names:
            names += [m + UNDERSPECIFIED_SUFFIX for m in conditioned]
    return names


def partial_panels(outcomes: list[TaskOutcome]) -> dict[str, int]:
    """Per panel metric, how many scores came from fewer members than were asked (e.g. the median of 2 of 3)."""
    counts: dict[str, int] = {}
    for o in outcomes:
        for r in o.results.values():
            if r.members is not None and r.error is None:
                counts.setdefault(r.metric, 0)
                if r.details.get("members_ok", len(r.members)) < r.details.get("members_total", len(r.members)):
                    counts[r.metric] += 1
    return counts

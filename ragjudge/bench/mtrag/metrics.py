"""Per-task metrics under MTRAG's official names: judge values, RB_alg parts, IDK-conditioned variants and
answerability accuracy (the paper's Table 5 conditioning), and MTRAG-UN's official `*_idk_underspecified`
conditioning when a clarification judge ran too."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ragjudge.engine.summary import MetricInfo
from ragjudge.formats.samples import Score
from ragjudge.judges import Judge
from ragjudge.judges.conditioning import (
    ANSWERABILITY_ACCURACY,
    CONDITIONED_SUFFIX,
    UNDERSPECIFIED_SUFFIX,
    answerability_correct,
    condition,
    condition_underspecified,
)
from ragjudge.models import Prediction, Task

# Metrics that IDK conditioning applies to (the paper's phi), by official name.
CONDITIONED_METRICS = ("RB_agg", "RB_llm", "RL_F")
IDK_JUDGES = ("idk", "idk_lexical")
CLARIFICATION_METRIC = "underspecified_eval"
"""What MTRAG-UN's clarification judges (`underspecified`, `underspecified_lexical`) write: 1 asks, 0 does not."""
RB_ALG_COMPONENTS = ("RougeL_stemFalse", "BertscoreR", "BertKPrec")

METRIC_INFOS = (
    MetricInfo("*_idk_underspecified", "MTRAG-UN's official conditioning (get_idk_underspec_score), over every "
               "task: asking for clarification scores 1 on underspecified tasks, declining 1 on unanswerable and "
               "conversational ones; otherwise a declined answer scores 0, else the metric",
               counts="every task whose judgements it needs succeeded"),
    MetricInfo("*_idk", "IDK-conditioned (the paper's Table 5): the metric if the answer does not decline; "
               "declining scores 1 on unanswerable tasks, 0 on others",
               counts="labelled tasks but conversational turns (left out, as in the paper)"),
    MetricInfo("answerability_acc", "the answer declines exactly when the task is unanswerable",
               counts="the same tasks as *_idk"),
    MetricInfo("RB_agg", "RB_alg: harmonic mean of BERTScore recall, ROUGE-L and BERT K-Precision against "
               "the reference answer"),
    MetricInfo("RB_llm", "reference-based LLM judge, median of the judge panel (1-10 scaled to 0-1)"),
    MetricInfo("RL_F", "RAGAS faithfulness: share of the answer's claims the passages support",
               counts="only tasks with passages"),
    MetricInfo("RougeL_stemFalse", "ROUGE-L F1 against the reference answer (part of RB_alg)"),
    MetricInfo("BertscoreR", "BERTScore recall against the reference answer (part of RB_alg)"),
    MetricInfo("BertKPrec", "BERTScore precision of the answer against the passages (part of RB_alg)",
               counts="only tasks with passages"),
    MetricInfo("idk_eval", "IDK judge (LLM): did the answer decline (1 yes, 0.5 partly, 0 no)",
               higher_is_better=None, kind="rate"),
    MetricInfo("idk_lexical", "IDK by phrase patterns, offline: did the answer decline (1 yes, 0.5 partly, "
               "0 no)", higher_is_better=None, kind="rate"),
    MetricInfo("underspecified_eval", "clarification judge (MTRAG-UN): does the answer ask the user for "
               "clarification (1 yes, 0 no)", higher_is_better=None, kind="rate"),
)
"""Every metric a run may report, with its direction, kind and what it counts."""


@dataclass
class TaskOutcome:
    task: Task
    prediction: Prediction
    results: dict[str, Score] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return bool(self.errors)


def assemble(task: Task, prediction: Prediction, results: dict[str, Score], *,
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
        judged = [m for m in CONDITIONED_METRICS if any(r.metric == m for r in results.values())]
        clarification = next((r for r in results.values() if r.metric == CLARIFICATION_METRIC), None)
        found = {m + CONDITIONED_SUFFIX: condition(outcome.metrics.get(m), idk, task.answerability, **opts)
                 for m in judged}
        found[ANSWERABILITY_ACCURACY] = answerability_correct(idk, task.answerability, **opts)
        if clarification is not None:
            found.update({m + UNDERSPECIFIED_SUFFIX: condition_underspecified(
                outcome.metrics.get(m), idk, clarification.value, task.answerability) for m in judged})
        outcome.metrics.update({name: value for name, value in found.items() if value is not None})
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
    """Per panel metric with any, how many scores came from fewer members than were asked (e.g. the median of 2 of
    3); a metric whose panels all answered in full is absent, so nothing warns about zero."""
    return dict(Counter(r.metric for o in outcomes for r in o.results.values() if r.members and r.error is None and
                        r.details.get("members_ok", len(r.members)) < r.details.get("members_total", len(r.members))))

"""Run generation and judges over tasks, resumably, and assemble per-task metrics.

Stages are journaled (see journal.py): a rerun with the same output skips every finished generation
and judgement, and the LLM response cache makes any repeated call free.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ragjudge.evaluation.conditioning import (
    ANSWERABILITY_ACCURACY,
    CONDITIONED_SUFFIX,
    answerability_correct,
    condition,
)
from ragjudge.evaluation.journal import JudgementJournal, PredictionJournal, fingerprint, passage_ids
from ragjudge.generation import GenerationInput, Generator
from ragjudge.judges import Judge, JudgeContext, JudgeItem
from ragjudge.models import JudgeResult, Prediction, Task
from ragjudge.progress import ProgressBars

# Metrics that IDK conditioning applies to (the paper's phi), by official name.
CONDITIONED_METRICS = ("RB_agg", "RB_llm", "RL_F")
IDK_JUDGES = ("idk", "idk_lexical")
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


def _chunks(items: Sequence[Any], size: int) -> list[Sequence[Any]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


async def generate_all(inputs: list[GenerationInput], generator: Generator, journal: PredictionJournal,
                       bars: ProgressBars, chunk_size: int = 64) -> dict[str, Prediction]:
    """Predictions for every input; finished ones come from the journal."""
    todo = [i for i in inputs if i.task.key not in journal.done]
    advance = bars.bar(f"generate ({generator.name})", total=len(inputs), completed=len(inputs) - len(todo))
    for chunk in _chunks(todo, chunk_size):
        predictions = await generator.generate(list(chunk), advance)
        for item, prediction in zip(chunk, predictions, strict=True):
            journal.record(prediction)
    out: dict[str, Prediction] = {}
    for item in inputs:
        if item.task.key in journal.done:
            out[item.task.key] = journal.done[item.task.key]
    return out


def judge_fingerprint(judge: Judge, ctx: JudgeContext) -> str:
    return fingerprint(judge.spec.model_dump(exclude={"source"}), judge.describe_models(ctx))


async def judge_all(pairs: list[tuple[Task, Prediction]], judges: list[Judge], ctx: JudgeContext,
                    journal: JudgementJournal, bars: ProgressBars) -> dict[str, dict[str, JudgeResult]]:
    """Every judge over every (task, prediction); finished judgements come from the journal."""
    results: dict[str, dict[str, JudgeResult]] = {task.key: {} for task, _ in pairs}
    for judge in judges:
        fp = judge_fingerprint(judge, ctx)
        todo: list[JudgeItem] = []
        item_fps: dict[str, str] = {}
        for task, prediction in pairs:
            item = JudgeItem(task, prediction)
            # Reuse a judgement only for the very answer and passages it was made on.
            item_fps[task.key] = fingerprint(fp, prediction.text, passage_ids(item.passages))
            if prediction.error:
                results[task.key][judge.name] = JudgeResult(judge=judge.name, metric=judge.metric,
                                                            error=f"no prediction to judge: {prediction.error}")
            elif (done := journal.get(task.task_id, judge.name, item_fps[task.key])) is not None:
                results[task.key][judge.name] = done
            else:
                todo.append(item)
        advance = bars.bar(judge.name, total=len(pairs), completed=len(pairs) - len(todo))
        judge_ctx = replace(ctx, on_progress=advance)
        for chunk in _chunks(todo, getattr(judge, "chunk_size", 64)):
            for item, result in zip(chunk, await judge.judge(list(chunk), judge_ctx), strict=True):
                journal.record(item.task.task_id, item_fps[item.task.key], result)
                results[item.task.key][judge.name] = result
    return results


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
    return outcome

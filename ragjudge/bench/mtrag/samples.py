"""An MTRAG task's outcome as the sample log's record (what it holds: docs/benches/mtrag.md, Outputs).

Which passages are which depends on how the answers were made: in the `reference` setting `contexts` are what the
generator saw (none for an unanswerable or conversational turn); with retrieval each carries its score and `origin`
(retrieved, or a reference topped up) and `metadata.query` the query searched (strategy, a rewrite's class or
fallback); `target_contexts` are the task's references, except for a predictions file, whose passages are `contexts`
as given and none a reference (the file does not say). The task's record, less what the sample holds in its own
fields, is kept in `metadata.record` (`formats.mtrag.task_record`: what `export` and `correlate` read).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ragjudge.bench.mtrag.metrics import TaskOutcome
from ragjudge.bench.mtrag.settings import reference_passages
from ragjudge.bench.mtrag.summary import multi_turns, standalone_label
from ragjudge.formats.mtrag import RECORD_FIELDS
from ragjudge.formats.samples import Sample, Score, messages
from ragjudge.models import Passage, Task


def outcome_sample(outcome: TaskOutcome, metric_order: Sequence[str], setting: str | None, *,
                   query: Mapping[str, Any] | None = None) -> Sample:
    """`setting`: the generator's setting, or None when the predictions were read from a file; `query`: what the
    pipeline searched for this task (the solver's output keeps it)."""
    task, prediction = outcome.task, outcome.prediction
    return Sample(
        id=task.task_id, input=messages(t.model_dump(exclude_none=True) for t in task.input),
        target=[t.text for t in task.targets if t.text] or None,
        target_contexts=list(task.contexts) if setting is not None else [],
        output=prediction.text if not prediction.error else None, contexts=shown(outcome, setting),
        scores=scores(outcome, metric_order), labels=labels(task), error=prediction.error,
        metadata={k: v for k, v in {"record": {k: v for k, v in task.raw.items() if k not in RECORD_FIELDS},
                                    "setting": setting, "generator": prediction.model,
                                    "query": dict(query) if query else None}.items() if v})


def shown(outcome: TaskOutcome, setting: str | None) -> list[Passage]:
    """The passages the answer was made from."""
    if outcome.prediction.contexts is not None:
        return outcome.prediction.contexts
    return reference_passages(outcome.task) if setting == "reference" else list(outcome.task.contexts)


def scores(outcome: TaskOutcome, metric_order: Sequence[str]) -> dict[str, Score]:
    """Every metric the task has, in the summary's order; a judge's own metric is its verdict (a failed judge keeps
    its error and raw answer, never a number), under the judge's name when two judges write one metric."""
    found: dict[str, Score] = {}
    for name in [*metric_order, *(m for m in outcome.metrics if m not in metric_order)]:
        if name in outcome.metrics:
            found[name] = Score(value=outcome.metrics[name])
    for judge, result in outcome.results.items():
        key = result.metric if result.metric not in found or found[result.metric].judge is None else judge
        found[key] = result.filed().model_copy(update={"judge": judge, "value": outcome.metrics.get(key, result.value)})
    return found


def labels(task: Task) -> dict[str, str | list[str]]:
    """The paper's breakdown dimensions (the summary's breakdown names) for one task."""
    found: dict[str, str | list[str]] = {
        "answerability": task.answerability or "", "turn": "first" if task.turn == 1 else "later",
        "domain": task.domain or "", "question_type": list(task.question_types),
        "multi_turn": multi_turns(task),
        "standalone": standalone_label(task) or ""}
    return {k: v for k, v in found.items() if v}

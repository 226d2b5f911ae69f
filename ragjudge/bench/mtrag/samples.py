"""An MTRAG task's outcome as the sample log's record: the conversation, the passages the generator saw and the
reference passages, the answer and the reference answer, every metric under its official name (a judge's metric
carries the judge's verdict: raw answer, rationale, panel), and the paper's breakdown labels.

Which passages are references depends on how the answers were made: generated from the reference passages
(`reference`), the references are what the generator saw; generated with retrieval (`rag`, `reference+rag`) the
generator's passages are the prediction's and the references the task's; judged from someone else's predictions
file, the file's passages are shown as given and none is called a reference.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragjudge.bench.mtrag.assemble import TaskOutcome
from ragjudge.bench.mtrag.summary import standalone_label
from ragjudge.formats.mtrag import RECORD_FIELDS
from ragjudge.formats.samples import Passage, Sample, Score, messages
from ragjudge.models import Passage as TaskPassage
from ragjudge.models import Task


def outcome_sample(outcome: TaskOutcome, metric_order: Sequence[str], setting: str | None) -> Sample:
    """`setting`: the generator's setting, or None when the predictions were read from a file."""
    task, prediction = outcome.task, outcome.prediction
    passages = prediction.contexts if prediction.contexts is not None else task.contexts
    references = task.contexts if setting is not None else []
    scores: dict[str, Score] = {}
    for name in [*metric_order, *(m for m in outcome.metrics if m not in metric_order)]:
        if name in outcome.metrics:
            scores[name] = Score(value=outcome.metrics[name])
    for judge, result in outcome.results.items():
        key = result.metric if result.metric not in scores or scores[result.metric].judge is None else judge
        verdict = Score.of(result.model_dump(exclude_none=True, exclude={"judge", "metric"}))
        scores[key] = verdict.model_copy(update={"judge": judge, "value": outcome.metrics.get(key, verdict.value)})
    return Sample(
        id=task.task_id, input=messages(t.model_dump(exclude_none=True) for t in task.input),
        target=[t.text for t in task.targets if t.text] or None,
        target_contexts=_passages(references), output=prediction.text if not prediction.error else None,
        contexts=_passages(passages), scores=scores, labels=labels(task), error=prediction.error,
        metadata={k: v for k, v in {"record": {k: v for k, v in task.raw.items() if k not in RECORD_FIELDS},
                                    "setting": setting, "generator": prediction.model}.items() if v})


def labels(task: Task) -> dict[str, str | list[str]]:
    """The paper's breakdown dimensions (the summary's breakdown names) for one task."""
    found: dict[str, str | list[str]] = {
        "answerability": task.answerability or "", "turn": "first" if task.turn == 1 else "later",
        "domain": task.domain or "", "question_type": list(task.question_types),
        "multi_turn": list(task.multi_turns or ([task.multi_turn] if task.multi_turn else [])),
        "standalone": standalone_label(task) or ""}
    return {k: v for k, v in found.items() if v}


def _passages(passages: Sequence[TaskPassage]) -> list[Passage]:
    out = []
    for p in passages:
        extra = p.model_dump(exclude={"document_id", "text", "title", "score"}, exclude_none=True)
        out.append(Passage(id=p.document_id, text=p.text, title=p.title, score=p.score, metadata=extra))
    return out

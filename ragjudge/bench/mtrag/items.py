"""An MTRAG task and the system's prediction as the item every judge reads."""

from __future__ import annotations

from typing import Any

from ragjudge.models import JudgedItem, Prediction, Task


def judged_item(task: Task, prediction: Prediction) -> JudgedItem:
    """The passages judged are what the generator was given: its own if it retrieved them, else the task's."""
    labels = {"answerability": task.answerability} if task.answerability else {}
    return JudgedItem(id=task.key, messages=list(task.input), answer=prediction.text,
                      contexts=list(prediction.contexts if prediction.contexts is not None else task.contexts),
                      reference=task.reference, labels=labels)


def output_item(task: Task, output: dict[str, Any]) -> JudgedItem:
    """A journaled prediction record (the engine's output) of `task`, as the judges read it."""
    return judged_item(task, Prediction.model_validate(output))

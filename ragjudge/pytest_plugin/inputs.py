"""Turn what a test knows about one turn of a RAG app (plain dicts, strings, OpenAI-style messages) into ragjudge's
Task and Prediction; bad values raise InputError naming the argument and position.

PYTEST_DONT_REWRITE
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragjudge.errors import InputError
from ragjudge.models import ANSWERABILITY_VALUES, Passage, Prediction, Task, Turn

_ROLES = {"user": "user", "human": "user", "agent": "agent", "assistant": "agent", "ai": "agent"}
ANSWERABLE = ("ANSWERABLE", "PARTIAL")


@dataclass(frozen=True)
class TurnInput:
    """One judged turn: the task (conversation, reference) and the app's answer with its passages."""

    task: Task
    prediction: Prediction
    expected_passage_ids: list[str] | None

    @property
    def passages(self) -> list[Passage]:
        return self.prediction.contexts if self.prediction.contexts is not None else self.task.contexts

    @property
    def retrieved_ids(self) -> list[str]:
        return [p.document_id for p in self.passages]

    @property
    def answerability(self) -> str | None:
        return self.task.answerability


def as_turns(conversation: Iterable[Any] | None, field: str = "conversation") -> list[Turn]:
    """Turns from Turn objects, {"speaker", "text"} or {"role", "content"} dicts, or (speaker, text) pairs. OpenAI
    roles map onto MTRAG's speakers (assistant -> agent); system messages are not conversation turns and are dropped."""
    turns: list[Turn] = []
    for i, item in enumerate(conversation or []):
        if isinstance(item, Turn):
            turns.append(item)
            continue
        if isinstance(item, Mapping):
            speaker = item.get("speaker", item.get("role"))
            text = item.get("text", item.get("content"))
        elif isinstance(item, Sequence) and not isinstance(item, str) and len(item) == 2:
            speaker, text = item
        else:
            raise InputError("must be a {speaker, text} or {role, content} mapping, or a (speaker, text) pair",
                             field=f"{field}[{i}]")
        if speaker == "system":
            continue
        if speaker not in _ROLES:
            raise InputError(f"speaker must be user or agent (or OpenAI's user/assistant), got {speaker!r}",
                             field=f"{field}[{i}]")
        if not isinstance(text, str):
            raise InputError(f"text must be a string, got {type(text).__name__}", field=f"{field}[{i}]")
        turns.append(Turn(speaker=_ROLES[speaker], text=text))  # type: ignore[arg-type]
    return turns


def as_passages(passages: Iterable[Any] | None, field: str = "passages") -> list[Passage]:
    """Passages from Passage objects, dicts with an id (`document_id`, `id` or `_id`) and `text`, or strings (given
    positional ids, `passage-1`, ...: give real ids to check retrieval recall)."""
    out: list[Passage] = []
    for i, item in enumerate(passages or []):
        if isinstance(item, Passage):
            out.append(item)
        elif isinstance(item, str):
            out.append(Passage(id=f"passage-{i + 1}", text=item))
        elif isinstance(item, Mapping):
            pid = item.get("document_id", item.get("id", item.get("_id")))
            text = item.get("text")
            if pid is None or pid == "":
                raise InputError("needs an id (document_id, id or _id)", field=f"{field}[{i}]")
            if not isinstance(text, str):
                raise InputError("needs a string 'text'", field=f"{field}[{i}]")
            out.append(Passage.of_record(item, id=str(pid), text=text))
        else:
            raise InputError(f"must be a Passage, a mapping or a string, got {type(item).__name__}",
                             field=f"{field}[{i}]")
    return out


def answerability_label(expected_answerable: bool | None, answerability: str | None) -> str | None:
    """MTRAG's label from either form; they must agree when both are given."""
    label = answerability.upper() if answerability else None
    if label is not None and label not in ANSWERABILITY_VALUES:
        raise InputError(f"unknown value {answerability!r} (expected one of {', '.join(ANSWERABILITY_VALUES)})",
                         field="answerability")
    if expected_answerable is None:
        return label
    if not isinstance(expected_answerable, bool):
        raise InputError(f"must be True, False or None, got {expected_answerable!r}", field="expected_answerable")
    implied = "ANSWERABLE" if expected_answerable else "UNANSWERABLE"
    if label is not None and (label in ANSWERABLE) != expected_answerable:
        raise InputError(f"expected_answerable={expected_answerable} contradicts answerability={label}",
                         field="expected_answerable")
    return label or implied


def build_turn(
    *,
    answer: str,
    question: str | None = None,
    conversation: Iterable[Any] | None = None,
    passages: Iterable[Any] | None = None,
    reference: str | None = None,
    expected_answerable: bool | None = None,
    answerability: str | None = None,
    expected_passage_ids: Iterable[str] | None = None,
    task: Task | None = None,
    task_id: str = "turn",
) -> TurnInput:
    """Build the judged turn. With `task` (e.g. from a dataset), its conversation, reference,
    answerability and reference passages are the defaults; explicit arguments override them."""
    if not isinstance(answer, str):
        raise InputError(f"must be a string, got {type(answer).__name__}", field="answer")
    if task is not None:
        history = task.history if conversation is None else as_turns(conversation)
        question = task.question if question is None else question
        reference = task.reference if reference is None else reference
        if answerability is None and expected_answerable is None:
            answerability = task.answerability
        if expected_passage_ids is None and task.contexts:
            expected_passage_ids = [p.document_id for p in task.contexts]
        given = as_passages(passages) if passages is not None else list(task.contexts)
    else:
        history = as_turns(conversation)
        given = as_passages(passages)
    if question is None:  # the conversation may end with the question itself
        if history and history[-1].speaker == "user":
            question, history = history[-1].text, history[:-1]
        else:
            raise InputError("is required (or end the conversation with the user's question)", field="question")
    elif history and history[-1].speaker == "user" and history[-1].text == question:
        history = history[:-1]
    if not isinstance(question, str) or not question.strip():
        raise InputError("must be a non-empty string", field="question")
    if reference is not None and not isinstance(reference, str):
        raise InputError(f"must be a string, got {type(reference).__name__}", field="reference")
    if isinstance(expected_passage_ids, str):
        raise InputError("must be a list of passage ids, not one string", field="expected_passage_ids")
    label = answerability_label(expected_answerable, answerability)

    turns = [*history, Turn(speaker="user", text=question)]
    tid = task.task_id if task is not None else task_id
    new_task = Task(
        task_id=tid,
        conversation_id=task.conversation_id if task is not None else tid,
        turn=sum(1 for t in turns if t.speaker == "user"),
        collection=task.collection if task is not None else None,
        input=turns,
        contexts=given,
        targets=[Turn(speaker="agent", text=reference)] if reference else [],
        answerability=label,  # type: ignore[arg-type]
    )
    prediction = Prediction(task_id=tid, text=answer, contexts=given)
    expected = None if expected_passage_ids is None else [str(i) for i in expected_passage_ids]
    return TurnInput(task=new_task, prediction=prediction, expected_passage_ids=expected)

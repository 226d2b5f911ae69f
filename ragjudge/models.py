"""The data model shared by every part of ragjudge: conversations, passages, tasks, predictions, the item a judge
reads, judge results.

Tasks keep the record they were read from (`raw`) so that results files can carry every input field
through unchanged, which is what lets them interoperate with the benchmark's own tooling.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializationInfo, SerializerFunctionWrapHandler, \
    model_serializer, model_validator

Speaker = Literal["user", "agent"]
Answerability = Literal["ANSWERABLE", "PARTIAL", "UNANSWERABLE", "CONVERSATIONAL", "UNDERSPECIFIED"]
ANSWERABILITY_VALUES: tuple[str, ...] = ("ANSWERABLE", "PARTIAL", "UNANSWERABLE", "CONVERSATIONAL", "UNDERSPECIFIED")


class Turn(BaseModel):
    """One utterance of a conversation."""

    model_config = ConfigDict(extra="allow")

    speaker: Speaker
    text: str


class Passage(BaseModel):
    """A passage, document or sentence: retrieved, shown to the system, or a reference."""

    # One model for every part (retrievers, tasks, judges, the sample log); its docstring is the published sample
    # schema's description. Read from any shape benches keep (MTRAG's `document_id`, BEIR's `_id`), a record's other
    # fields kept in `metadata`; written as its own fields in the sample log, as MTRAG's record everywhere else.

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    id: str | None = None
    text: str | None = None
    title: str | None = None
    score: float | None = None
    """The retriever's score; for a reference, its relevance grade."""
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _fields_of_its_own(cls, data: Any) -> Any:
        """`document_id` (MTRAG) and `_id` (BEIR) are the id; a record's other fields go to `metadata`."""
        if not isinstance(data, dict) or not set(data) - _PASSAGE_FIELDS:
            return data
        data = dict(data)
        for name in ("document_id", "_id"):
            if name in data and "id" not in data:
                data["id"] = data.pop(name)
        extra = {k: v for k in list(data) if k not in _PASSAGE_FIELDS and (v := data.pop(k)) is not None}
        if extra:
            data["metadata"] = {**extra, **(data.get("metadata") or {})}
        return data

    @property
    def document_id(self) -> str | None:
        """The id under MTRAG's name (what retrievers and MTRAG's files call it)."""
        return self.id

    @model_serializer(mode="wrap")
    def _dump(self, fields: SerializerFunctionWrapHandler, info: SerializationInfo) -> dict[str, Any]:
        """Dumped as MTRAG's record (`document_id`, `text`, `title`, `score`, its other fields): what tasks,
        predictions and their fingerprints have always held; as its own fields in the sample log (`AS_FIELDS`)."""
        if (info.context or {}).get(AS_FIELDS):
            return fields(self)
        record = {"document_id": self.id, "text": self.text, "title": self.title, "score": self.score,
                  **self.metadata}
        return {k: v for k, v in record.items() if v is not None} if info.exclude_none else record

    def to_record(self) -> dict[str, Any]:
        """The passage as MTRAG writes one, unset fields left out."""
        return self.model_dump(mode="json", exclude_none=True)


_PASSAGE_FIELDS = {"id", "text", "title", "score", "metadata"}
AS_FIELDS = "passage_fields"
"""Serialisation context key: dump passages as their own fields (`id`, ..., `metadata`), as the sample log does."""


class Task(BaseModel):
    """One evaluation item: answer the last user turn of `input` given `contexts`."""

    model_config = ConfigDict(extra="forbid")

    task_id: str
    conversation_id: str
    turn: int
    collection: str | None = None
    input: list[Turn]
    contexts: list[Passage] = Field(default_factory=list)
    targets: list[Turn] = Field(default_factory=list)
    answerability: Answerability | None = None
    question_types: list[str] = Field(default_factory=list)
    multi_turn: str | None = None
    """The first `Multi-Turn` label (Follow-up, Clarification); `multi_turns` has them all."""
    multi_turns: list[str] = Field(default_factory=list)
    """Every `Multi-Turn` label: MTRAG-UN writes a list, which may hold several."""
    enrichments: dict[str, Any] = Field(default_factory=dict)
    """Every other field of the source record (kept verbatim, e.g. `Standalone Type`)."""
    raw: dict[str, Any] = Field(default_factory=dict, exclude=True, repr=False)
    """The record exactly as read, written back out with results."""

    @property
    def key(self) -> str:
        return normalize_task_id(self.task_id)

    @property
    def question(self) -> str:
        return question_of(self.input)

    @property
    def history(self) -> list[Turn]:
        """The conversation before the current question."""
        return history_of(self.input)

    @property
    def reference(self) -> str | None:
        texts = [t.text for t in self.targets if t.text]
        return texts[0] if texts else None

    @property
    def domain(self) -> str | None:
        return domain_of(self.collection)


class Prediction(BaseModel):
    """A system's answer to one task, with the passages it was given (if they differ from the task's)."""

    task_id: str
    text: str
    contexts: list[Passage] | None = None
    model: str | None = None
    error: str | None = None
    tokens: int | None = None
    latency: float | None = None


@dataclass(frozen=True)
class JudgedItem:
    """What a judge reads: one answer, with the conversation, passages and reference it is judged against. Neutral on
    purpose (no bench's task model): plain records read straight into it (`RagRecord.item`), and each bench adapts
    its own task in its own folder (MTRAG: `bench/mtrag/items.py`), so every judge spec works on any of them."""

    id: str
    """The sample's key: what the judge's verdict is filed under."""
    messages: list[Turn]
    """The conversation, ending with the user's question."""
    answer: str
    """The answer under judgement ("" when there is none)."""
    contexts: list[Passage] = field(default_factory=list)
    """The passages the system was given (its own if it retrieved them)."""
    reference: str | None = None
    reference_context_ids: list[str] = field(default_factory=list)
    labels: dict[str, str | list[str]] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def question(self) -> str:
        return question_of(self.messages)


class JudgeResult(BaseModel):
    """One judge's verdict on one prediction. `value` is None when the judge failed (see `error`)."""

    judge: str
    metric: str
    value: float | None = None
    label: str | None = None
    rationale: str | None = None
    raw: str | None = None
    error: str | None = None
    model: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency: float | None = None
    members: list[JudgeResult] | None = None
    """Panel members' individual results (RB_llm); `value` is their median."""
    details: dict[str, Any] = Field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.error is None and self.value is not None


def question_of(turns: list[Turn]) -> str:
    """The conversation's last user turn."""
    for turn in reversed(turns):
        if turn.speaker == "user":
            return turn.text
    return ""


def history_of(turns: list[Turn]) -> list[Turn]:
    """The conversation before its last user turn."""
    for i in range(len(turns) - 1, -1, -1):
        if turns[i].speaker == "user":
            return turns[:i]
    return list(turns)


def normalize_task_id(task_id: str) -> str:
    """MTRAG files use both `<::>` and `::` between conversation id and turn; compare on one form."""
    return task_id.replace("<::>", "::")


def domain_of(collection: str | None) -> str | None:
    """`mt-rag-clapnq-elser-512-100-20240503` -> `clapnq`; MTRAG-UN's bare names are domains, `ibmcloud` being
    MTRAG's `cloud`; other collection names are their own domain."""
    if not collection:
        return None
    parts = collection.split("-")
    if len(parts) >= 3 and parts[0] == "mt" and parts[1] == "rag":
        return _DOMAIN_ALIASES.get(parts[2], parts[2])
    return _DOMAIN_ALIASES.get(collection, collection)


_DOMAIN_ALIASES = {"ibmcloud": "cloud"}

"""The data model shared by every part of ragjudge: conversations, passages, tasks, predictions, the item a judge
reads (a judge returns the sample log's `formats.samples.Score`). Tasks keep the record they were read from (`raw`)
so results files carry every input field through unchanged, to interoperate with the benchmark's own tooling.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, get_args

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer

Speaker = Literal["user", "agent"]
Answerability = Literal["ANSWERABLE", "PARTIAL", "UNANSWERABLE", "CONVERSATIONAL", "UNDERSPECIFIED"]
ANSWERABILITY_VALUES: tuple[str, ...] = get_args(Answerability)


class Turn(BaseModel):
    """One utterance of a conversation."""

    model_config = ConfigDict(extra="allow")

    speaker: Speaker
    text: str


class Passage(BaseModel):
    """A passage, document or sentence: retrieved, shown to the system, or a reference."""

    # One model for retrievers, tasks, judges and the sample log (its docstring is the published sample schema's
    # description). As the log reads it, `id` and `text` may be unset (a reference known by its id, a memory
    # without its session); a task's or a prediction's passages are `RecordPassage`s: id and text required, read
    # from and dumped as MTRAG's record.

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    id: str | None = None
    text: str | None = None
    title: str | None = None
    score: float | None = None
    """The retriever's score; for a reference, its relevance grade."""
    metadata: dict[str, Any] = Field(default_factory=dict)

    @property
    def document_id(self) -> str:
        """The id under MTRAG's name (what retrievers and MTRAG's files call it)."""
        return self.id  # type: ignore[return-value]  # set on every passage a retriever or a task holds

    @classmethod
    def of_record(cls, record: Mapping[str, Any], **read: Any) -> Passage:
        """A passage record as MTRAG and BEIR write one (`document_id`, `_id` or `id`, `text`, `title`, `score`;
        `read`: those a reader has already read), its other fields kept in `metadata`; types checked by the model."""
        pid = next((record[k] for k in ("document_id", "_id", "id") if k in record), None)
        fields = {"id": pid, "text": record.get("text"), "title": record.get("title"), "score": record.get("score")}
        return cls.model_validate({**fields, **read, "metadata": {k: v for k, v in record.items()
                                                                  if k not in _RECORD_FIELDS and v is not None}})

    def to_record(self, *, unset: bool = False) -> dict[str, Any]:
        """The passage as MTRAG writes one (`document_id`, `text`, `title`, `score`, its other fields), unset fields
        left out (kept with `unset`: what a task's fingerprint has always hashed)."""
        record = {"document_id": self.id, "text": self.text, "title": self.title, "score": self.score, **self.metadata}
        return record if unset else {k: v for k, v in record.items() if v is not None}


_RECORD_FIELDS = ("document_id", "_id", "id", "text", "title", "score")


def _complete(passage: Passage) -> Passage:
    if passage.id is None or passage.text is None:
        raise ValueError(f"a task's passage needs an id and a text, got {passage.to_record()}"[:200])
    return passage


RecordPassage = Annotated[Passage, BeforeValidator(lambda v: Passage.of_record(v) if isinstance(v, Mapping) else v),
                          AfterValidator(_complete),
                          PlainSerializer(lambda p, info: p.to_record(unset=not info.exclude_none))]
"""A passage a task, a prediction or a record holds: id and text required; read from, and dumped as, MTRAG's record
(what task fingerprints hash and journals keep)."""


class Task(BaseModel):
    """One evaluation item: answer the last user turn of `input` given `contexts`."""

    model_config = ConfigDict(extra="forbid")

    task_id: str
    conversation_id: str
    turn: int
    collection: str | None = None
    input: list[Turn]
    contexts: list[RecordPassage] = Field(default_factory=list)
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
        return next((t.text for t in self.targets if t.text), None)

    @property
    def domain(self) -> str | None:
        return domain_of(self.collection)


class Prediction(BaseModel):
    """A system's answer to one task, with the passages it was given (if they differ from the task's)."""

    task_id: str
    text: str
    contexts: list[RecordPassage] | None = None
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


def question_of(turns: list[Turn]) -> str:
    """The conversation's last user turn."""
    return next((turn.text for turn in reversed(turns) if turn.speaker == "user"), "")


def history_of(turns: list[Turn]) -> list[Turn]:
    """The conversation before its last user turn."""
    return next((turns[:i] for i in reversed(range(len(turns))) if turns[i].speaker == "user"), list(turns))


def normalize_task_id(task_id: str) -> str:
    """MTRAG files use both `<::>` and `::` between conversation id and turn; compare on one form."""
    return task_id.replace("<::>", "::")


def domain_of(collection: str | None) -> str | None:
    """`mt-rag-clapnq-elser-512-100-20240503` -> `clapnq`; MTRAG-UN's bare names are domains, `ibmcloud` being
    MTRAG's `cloud`; other collection names are their own domain."""
    if not collection:
        return None
    parts = collection.split("-")
    name = parts[2] if len(parts) >= 3 and parts[:2] == ["mt", "rag"] else collection
    return _DOMAIN_ALIASES.get(name, name)


_DOMAIN_ALIASES = {"ibmcloud": "cloud"}

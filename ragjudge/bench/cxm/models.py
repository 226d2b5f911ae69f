"""The CXMArena data model: conversations with message ids, and one case type per task; loaders build these from the
release's columns or plain JSONL, and runners and scorers only ever see these types.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

PairKind = Literal["similar", "contradictory"]
PAIR_KINDS: tuple[PairKind, ...] = ("similar", "contradictory")

ANSWER_LABELS = ("Correct", "Incorrect", "Hallucination", "Refusal")
"""Multi-turn RAG answer classes, in report order."""
_CLASS_NAMES = {label.casefold(): label for label in ANSWER_LABELS} | {"hallucinated": "Hallucination"}


def normalize_class(value: Any) -> str | None:
    """'correct', 'Hallucinated'... → the class name; None when it is no class."""
    return None if value is None else _CLASS_NAMES.get(str(value).strip().casefold())


class Strict(BaseModel):
    """The data model refuses fields it does not know (a misspelt field is an error, not a silent default)."""

    model_config = ConfigDict(extra="forbid")


class Message(Strict):
    id: str
    speaker: str
    """'customer', 'agent' or 'ivr' for parsed transcripts; 'transcript' for unlabelled text."""
    text: str
    label: str | None = None
    """The speaker as the data writes it, when it is none of customer/agent (e.g. `IVR-Bot`)."""


def render_conversation(messages: list[Message], *, with_ids: bool = True) -> str:
    """One line per message: `[id] Customer: text` (ids let models cite evidence)."""
    lines = []
    for m in messages:
        if m.speaker == "transcript":
            lines.append(m.text)
            continue
        prefix = f"[{m.id}] " if with_ids else ""
        lines.append(f"{prefix}{m.label or m.speaker.capitalize()}: {m.text}")
    return "\n".join(lines)


class TaxonomyEntry(Strict):
    l1: str
    l2: str | None = None
    description: str = ""

    @property
    def label(self) -> str:
        """Two-level intents are `L1:L2`, the form the release's own evaluator compares."""
        return f"{self.l1}:{self.l2}" if self.l2 else self.l1


class Taxonomy(Strict):
    name: str
    entries: list[TaxonomyEntry]

    @property
    def labels(self) -> list[str]:
        return [e.label for e in self.entries]

    @property
    def two_level(self) -> bool:
        return any(e.l2 for e in self.entries)


class IntentCase(Strict):
    case_id: str
    messages: list[Message]
    gold: dict[str, str] = Field(default_factory=dict)
    """Taxonomy name → gold intent label."""
    transcript: str | None = None
    """The conversation as the data wrote it (prompts written for the release's text use it)."""


class QualityQuestion(Strict):
    question_id: str
    text: str
    answer: bool | None
    """True / False; None means 'not applicable' (the release's NA)."""
    evidence: list[str] | None = None
    """Gold supporting message ids, when the data gives them (and they name messages of the conversation)."""
    evidence_error: str | None = None
    """Why the data's gold evidence of this question cannot be used (`file:line: ...`: an id that names no message,
    or the wrong speaker's): the question's answer is still scored, its evidence is not."""


class QualityCase(Strict):
    case_id: str
    messages: list[Message]
    questions: list[QualityQuestion]
    transcript: str | None = None


class ToolCall(Strict):
    name: str
    arguments: dict[str, Any] | None = None
    """None when the data names the tool only (the release gives tool names, not arguments)."""


def parse_arguments(raw: Any) -> dict[str, Any] | None:
    """Tool-call arguments arrive as a JSON string (OpenAI wire format) or an object; None if unreadable."""
    if raw is None or isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            value = json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError:
            return None
        return value if isinstance(value, dict) else None
    return None


class ToolCase(Strict):
    case_id: str
    messages: list[Message]
    expected: list[ToolCall]
    candidates: dict[int, list[str]] = Field(default_factory=dict)
    """Number of offered tools → the tool names offered (from the data; built when absent)."""
    kb_ids: list[str] = Field(default_factory=list)


class Article(Strict):
    id: str
    text: str
    title: str | None = None

    @property
    def full_text(self) -> str:
        return f"{self.title}\n{self.text}" if self.title else self.text


class SearchQuery(Strict):
    query_id: str
    query: str
    relevant: list[str]


class RagCase(Strict):
    """One multi-turn RAG turn: the conversation so far, the gold agent reply and its source articles."""

    case_id: str
    messages: list[Message]
    reference: str | None = None
    kb_ids: list[str] = Field(default_factory=list)
    retrieved_ids: list[str] | None = None
    response: str | None = None
    label: str | None = None
    """A gold answer class, when people labelled the response (lets the judge itself be scored)."""
    transcript: str | None = None

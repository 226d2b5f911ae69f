"""Retrieval units: how a CDR conversation is cut before indexing. The kinds and how messages are found:
docs/benches/cdr.md (Options, Units). Not said there: the paper's "turns" are messages (5.4 per conversation); text
before the first role marker is a message without role; a window always covers the last messages; a unit's
conversation is looked up in `UnitTable.conversation_of`, never parsed back out of its id (ids are for people).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ragjudge.errors import UsageError
from ragjudge.formats.files import atomic_output

UnitKind = Literal["session", "message", "exchange", "window", "user"]
KINDS: tuple[str, ...] = ("session", "message", "exchange", "window", "user")
_MARKER = re.compile(r"(user|assistant):")


@dataclass(frozen=True)
class UnitSpec:
    kind: UnitKind
    size: int = 3
    stride: int = 1

    @property
    def label(self) -> str:
        """As the user writes it: `session`, `window:3:1`."""
        return f"window:{self.size}:{self.stride}" if self.kind == "window" else self.kind

    @property
    def slug(self) -> str:
        """For file and folder names: `session`, `window3s1`."""
        return f"window{self.size}s{self.stride}" if self.kind == "window" else self.kind


def parse_unit(text: str) -> UnitSpec:
    """`session`, `message`, `exchange`, `user`, `window`, `window:K` or `window:K:STRIDE`."""
    kind, _, rest = text.strip().partition(":")
    if kind not in KINDS:
        raise UsageError(f"-T unit: expected one of session, message, exchange, user, window:K[:STRIDE], got {text!r}")
    if kind != "window":
        if rest:
            raise UsageError(f"-T unit: {kind} takes no parameters, got {text!r}")
        return UnitSpec(kind)  # type: ignore[arg-type]
    parts = rest.split(":") if rest else []
    if len(parts) > 2 or not all(p.isdigit() and int(p) >= 1 for p in parts):
        raise UsageError(f"-T unit: window sizes are positive whole numbers, window:K or window:K:STRIDE, got {text!r}")
    size = int(parts[0]) if parts else 3
    stride = int(parts[1]) if len(parts) > 1 else 1
    if stride > size:
        raise UsageError(f"-T unit={text}: the stride ({stride}) must not exceed the window ({size}), or messages "
                         "between windows would never be indexed")
    return UnitSpec("window", size, stride)


@dataclass(frozen=True)
class Message:
    role: str | None
    """`user`, `assistant`, or None for text before the first marker."""
    text: str
    """As written, role prefix included, stripped."""


def split_messages(conversation: str) -> tuple[list[Message], int]:
    """The non-empty messages of a conversation, and how many empty ones were dropped."""
    blocks: list[tuple[str | None, list[str]]] = []
    for line in conversation.splitlines():
        marker = _MARKER.match(line)
        if marker:
            blocks.append((marker.group(1), [line]))
        elif blocks:
            blocks[-1][1].append(line)
        else:
            blocks.append((None, [line]))
    messages: list[Message] = []
    empty = 0
    for role, lines in blocks:
        text = "\n".join(lines).strip()
        content = text[len(role) + 1:] if role else text
        if content.strip():
            messages.append(Message(role, text))
        elif role:
            empty += 1
    return messages, empty


def exchanges(messages: list[Message]) -> list[list[Message]]:
    """A user message starts an exchange; replies (and text before any user message) join the current one."""
    groups: list[list[Message]] = []
    for message in messages:
        if message.role == "user" or not groups:
            groups.append([message])
        else:
            groups[-1].append(message)
    return groups


def windows(messages: list[Message], size: int, stride: int) -> list[list[Message]]:
    """Windows of `size` messages every `stride`; the last window always ends at the last message."""
    if len(messages) <= size:
        return [messages] if messages else []
    starts = list(range(0, len(messages) - size + 1, stride))
    if starts[-1] + size < len(messages):
        starts.append(len(messages) - size)
    return [messages[s : s + size] for s in starts]


def conversation_units(conversation: str, spec: UnitSpec) -> tuple[list[str], int]:
    """The unit texts of one conversation (in order), and the empty messages dropped."""
    messages, empty = split_messages(conversation)
    if spec.kind == "session":  # the conversation as written, unless it has no content at all
        return ([conversation.strip()] if messages else []), empty
    if spec.kind == "message":
        groups = [[m] for m in messages]
    elif spec.kind == "user":
        groups = [[m] for m in messages if m.role == "user"]
    elif spec.kind == "exchange":
        groups = exchanges(messages)
    else:
        groups = windows(messages, spec.size, spec.stride)
    return ["\n".join(m.text for m in g) for g in groups], empty


@dataclass
class Unit:
    id: str
    conversation: str
    text: str


@dataclass
class UnitTable:
    """Every unit of a corpus, in corpus order, and the conversation each belongs to."""

    spec: UnitSpec
    units: list[Unit] = field(default_factory=list)
    conversation_of: dict[str, str] = field(default_factory=dict)
    conversations: int = 0
    without_units: list[str] = field(default_factory=list)
    """Conversations that gave no unit (empty, or no user message for `user`): never retrievable."""
    empty_messages: int = 0

    def __len__(self) -> int:
        return len(self.units)

    def stats(self) -> dict[str, object]:
        return {"unit": self.spec.label, "units": len(self.units), "conversations": self.conversations,
                "units_per_conversation": round(len(self.units) / self.conversations, 3) if self.conversations else 0,
                "conversations_without_units": len(self.without_units), "empty_messages_dropped": self.empty_messages}


def build_units(corpus: dict[str, str], spec: UnitSpec) -> UnitTable:
    table = UnitTable(spec, conversations=len(corpus))
    for conversation_id, text in corpus.items():
        texts, empty = conversation_units(text, spec)
        table.empty_messages += empty
        if not texts:
            table.without_units.append(conversation_id)
        for i, unit_text in enumerate(texts):
            unit_id = f"{conversation_id}#{spec.slug}-{i}"
            if unit_id in table.conversation_of:
                raise UsageError(f"unit id {unit_id!r} is made twice (conversation ids that look like unit ids?)")
            table.conversation_of[unit_id] = conversation_id
            table.units.append(Unit(unit_id, conversation_id, unit_text))
    return table


UNITS_FORMAT = 1


def write_units(table: UnitTable, folder: Path, corpus_sha256: str) -> Path:
    """The units as a BEIR corpus a pipeline indexes, named after the corpus bytes and the unit spec and written
    once: the pipeline keys its index on the file's bytes, so each corpus and unit has one index."""
    path = folder / f"{corpus_sha256[:16]}-{table.spec.slug}-v{UNITS_FORMAT}.jsonl"
    if not path.is_file():
        with atomic_output(path) as tmp, tmp.open("w", encoding="utf-8") as fh:
            for unit in table.units:
                fh.write(json.dumps({"_id": unit.id, "title": "", "text": unit.text}, ensure_ascii=False) + "\n")
    return path

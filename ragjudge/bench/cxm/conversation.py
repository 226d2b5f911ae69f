"""Conversations with message ids, from a list of messages or from the release's transcript strings.

A turn starts only where a speaker label (docs/benches/cxmarena.md, Parsing) opens a line, so `Customer: my phone
model: X100` is one customer turn. Messages without an id are numbered from 1 (the `preamble` aside), which is what
supporting-message ids refer to.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ragjudge.bench.cxm.models import Message
from ragjudge.errors import InputError

_SPEAKERS = {
    "customer": "customer", "user": "customer", "client": "customer", "bot_customer": "customer",
    "agent": "agent", "assistant": "agent", "bot_agent": "agent", "bot": "agent", "model": "agent",
    "ivr": "ivr", "ivr-bot": "ivr", "ivr_bot": "ivr", "ivr bot": "ivr", "ivrbot": "ivr",
}
"""Speaker names in structured message lists (any of these) → customer, agent or ivr."""

_MARK = re.compile(
    r"^[ \t]*(?P<speaker>customer|agent|user|ivr[ _-]?bot|ivr)[ \t]*(?:\[\s*(?P<id>[^\]\s]+)\s*\])?[ \t]*:",
    re.IGNORECASE | re.MULTILINE,
)
"""The release's speaker labels, only at the start of a line."""

PREAMBLE_ID = "preamble"


def normalize_speaker(value: str) -> str:
    key = value.strip().lower()
    return _SPEAKERS.get(key, _SPEAKERS.get(key.replace("-", "_"), key))


def parse_transcript(text: str) -> list[Message]:
    """Split a transcript at line-opening speaker labels; unmarked text becomes one 'transcript' message."""
    marks = list(_MARK.finditer(text))
    if not marks:
        return [Message(id="1", speaker="transcript", text=text.strip())] if text.strip() else []
    messages = []
    before = text[: marks[0].start()].strip()
    if before:
        messages.append(Message(id=PREAMBLE_ID, speaker="transcript", text=before))
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        body = text[mark.end():end].strip()
        speaker = normalize_speaker(mark.group("speaker"))
        label = mark.group("speaker").strip() if speaker == "ivr" else None
        messages.append(Message(id=mark.group("id") or str(i + 1), speaker=speaker, text=body, label=label))
    return messages


def parse_messages(value: Any, *, path: Path, line: int, name: str) -> list[Message]:
    """`[{"id", "speaker"|"role", "text"|"content"}, ...]` or a transcript string."""
    if isinstance(value, str):
        messages = parse_transcript(value)
    elif isinstance(value, list):
        messages = []
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                raise InputError(f"message {i + 1} is not an object", file=str(path), line=line, field=name)
            speaker = item.get("speaker") or item.get("role")
            text = item.get("text", item.get("content"))
            if not isinstance(speaker, str) or not isinstance(text, str):
                raise InputError(f"message {i + 1} needs speaker and text", file=str(path), line=line, field=name)
            message_id = item.get("id", item.get("message_id", i + 1))
            role = normalize_speaker(speaker)
            messages.append(Message(id=str(message_id), speaker=role, text=text,
                                    label=speaker.strip() if role == "ivr" else None))
    else:
        raise InputError("expected a list of messages or a transcript string", file=str(path), line=line, field=name)
    if not messages:
        raise InputError("empty conversation", file=str(path), line=line, field=name)
    ids = [m.id for m in messages]
    if len(set(ids)) != len(ids):
        raise InputError("message ids repeat", file=str(path), line=line, field=name)
    return messages


def chat_messages(messages: list[Message]) -> list[dict[str, str]]:
    """Customer (and unlabelled) turns as `user`, agent and IVR turns as `assistant`, for models that take the
    chat itself."""
    out = []
    for m in messages:
        role = "assistant" if m.speaker in ("agent", "ivr") else "user"  # the IVR speaks for the brand
        if out and out[-1]["role"] == role:  # chat APIs want alternation; merge consecutive turns
            out[-1]["content"] += "\n" + m.text
        else:
            out.append({"role": role, "content": m.text})
    return out

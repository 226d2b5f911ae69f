"""Conversations with message ids, from a list of messages or from the release's transcript strings.

The release writes transcripts as `Customer: ...` / `Agent: ...` lines, and the quality-adherence
conversations as `AGENT[3]:...` with the message id in brackets. Messages without an id are numbered
from 1, which is what supporting-message ids then refer to.
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
}
_MARK = re.compile(
    r"(?:^|(?<=\s))(?P<speaker>" + "|".join(sorted(_SPEAKERS, key=len, reverse=True)) +
    r")\s*(?:\[\s*(?P<id>[^\]\s]+)\s*\])?\s*:",
    re.IGNORECASE,
)


def normalize_speaker(value: str) -> str:
    return _SPEAKERS.get(value.strip().lower(), value.strip().lower())


def parse_transcript(text: str) -> list[Message]:
    """Split a transcript at speaker marks; unmarked text becomes one 'transcript' message."""
    marks = list(_MARK.finditer(text))
    if not marks:
        return [Message(id="1", speaker="transcript", text=text.strip())] if text.strip() else []
    messages = []
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        body = text[mark.end():end].strip()
        messages.append(Message(id=mark.group("id") or str(i + 1), speaker=normalize_speaker(mark.group("speaker")),
                                text=body))
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
            messages.append(Message(id=str(message_id), speaker=normalize_speaker(speaker), text=text))
    else:
        raise InputError("expected a list of messages or a transcript string", file=str(path), line=line, field=name)
    if not messages:
        raise InputError("empty conversation", file=str(path), line=line, field=name)
    ids = [m.id for m in messages]
    if len(set(ids)) != len(ids):
        raise InputError("message ids repeat", file=str(path), line=line, field=name)
    return messages


def chat_messages(messages: list[Message]) -> list[dict[str, str]]:
    """Customer turns as `user`, agent turns as `assistant`, for models that take the chat itself."""
    out = []
    for m in messages:
        role = "assistant" if m.speaker == "agent" else "user"
        if out and out[-1]["role"] == role:  # chat APIs want alternation; merge consecutive turns
            out[-1]["content"] += "\n" + m.text
        else:
            out.append({"role": role, "content": m.text})
    return out

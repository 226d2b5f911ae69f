"""What the CXMArena tasks' sample-log records share (`ragjudge.formats.samples`): a conversation as Messages (the
customer is the `user`, the agent the `assistant`, anyone else by the data's own speaker label), a prediction row's
error, and the call facts a row keeps (model, tokens, the raw answer), which go to `metadata`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ragjudge.bench.cxm.models import Message as CxmMessage
from ragjudge.formats.jsonl import to_jsonable
from ragjudge.formats.samples import Message, Passage

ROLES = {"customer": "user", "agent": "assistant"}
CALL_FACTS = ("model", "prompt_tokens", "completion_tokens", "cached", "raw", "parse_error")
"""What a prediction row says about the call that made it (metadata; the answer itself is the sample's output)."""


def conversation(messages: Sequence[CxmMessage]) -> list[Message]:
    return [Message(role=ROLES.get(m.speaker) or m.label or m.speaker, content=m.text) for m in messages]


def error_of(row: Mapping[str, Any]) -> str | None:
    return str(row["error"]) if row.get("error") else None


def facts(row: Mapping[str, Any], keys: Sequence[str] = CALL_FACTS, **extra: Any) -> dict[str, Any]:
    """The row's `keys` that are set, and `extra`, as JSON values (a sample's metadata)."""
    found = {k: row[k] for k in keys if row.get(k) is not None}
    found.update({k: v for k, v in extra.items() if v is not None})
    return to_jsonable(found)


def articles(ids: Sequence[str], scores: Sequence[float] | None = None) -> list[Passage]:
    """Article ids (best first, or gold ones with their relevance) as passages."""
    return [Passage(id=str(i), score=None if scores is None else scores[n]) for n, i in enumerate(ids)]

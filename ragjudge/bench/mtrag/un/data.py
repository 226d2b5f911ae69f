"""MTRAG-UN's tasks are MTRAG's format (`ragjudge.bench.mtrag.data` finds and reads them, downloading the release's
`mtragun-human/generation_tasks/reference.jsonl` on first use); what is MTRAG-UN's own is the UNDERSPECIFIED label,
by which `ragjudge judge` tells its files from MTRAG's."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ragjudge.errors import RagjudgeError

CLARIFICATION_LABEL = "UNDERSPECIFIED"
"""The answerability of a question whose right answer asks the user to clarify."""


def has_underspecified_tasks(path: str | Path) -> bool:
    """Whether an MTRAG-format file holds a task labelled UNDERSPECIFIED (then it is MTRAG-UN's): `ragjudge judge`
    uses this to pick the bench. A file it cannot read is not MTRAG-UN's here; reading it properly reports why."""
    from ragjudge.formats.jsonl import read_jsonl

    try:
        return any_underspecified(record for _, record in read_jsonl(path))
    except (RagjudgeError, OSError, UnicodeDecodeError):
        return False


def any_underspecified(records: Iterable[Mapping[str, Any]]) -> bool:
    """Whether a task among MTRAG-format `records` (a file's, or given in memory) is labelled UNDERSPECIFIED."""
    for record in records:
        label = record.get("answerability", record.get("Answerability"))
        first = label[0] if isinstance(label, list) and label else label
        if isinstance(first, str) and first.strip().upper() == CLARIFICATION_LABEL:
            return True
    return False

"""MTRAG-UN's tasks are MTRAG's format (`ragjudge.bench.mtrag.data` finds and reads them, downloading the release's
`mtragun-human/generation_tasks/reference.jsonl` on first use); what is MTRAG-UN's own is the UNDERSPECIFIED label,
by which `ragjudge judge` tells its files from MTRAG's."""

from __future__ import annotations

from pathlib import Path

from ragjudge.errors import RagjudgeError

CLARIFICATION_LABEL = "UNDERSPECIFIED"
"""The answerability of a question whose right answer asks the user to clarify."""


def has_underspecified_tasks(path: str | Path) -> bool:
    """Whether an MTRAG-format file holds a task labelled UNDERSPECIFIED (then it is MTRAG-UN's): `ragjudge judge`
    uses this to pick the bench. A file it cannot read is not MTRAG-UN's here; reading it properly reports why."""
    from ragjudge.formats.jsonl import read_jsonl

    try:
        for _, record in read_jsonl(path):
            label = record.get("answerability", record.get("Answerability"))
            first = label[0] if isinstance(label, list) and label else label
            if isinstance(first, str) and first.strip().upper() == CLARIFICATION_LABEL:
                return True
    except (RagjudgeError, OSError, UnicodeDecodeError):
        return False
    return False

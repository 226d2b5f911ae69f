"""The records a `rag` run judges: read under ragjudge's, RAGAS's or DeepEval's field names
(`ragjudge.formats.rag_records`), and refused when a field the run needs is in none of them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from ragjudge.errors import InputError
from ragjudge.formats.rag_records import FIELDS, RagRecord

PRESENT = {"answer": lambda r: r.answer is not None, "reference": lambda r: bool(r.reference),
           "contexts": lambda r: bool(r.contexts)}
"""Whether a record has a field the judges read."""


def absent(records: Sequence[RagRecord], requires: Sequence[str]) -> str | None:
    """The first of a judge's required fields (`reference`, `passages`) that no record has, by its record name."""
    for requirement in requires:
        field = "contexts" if requirement == "passages" else requirement
        if not any(PRESENT[field](r) for r in records):
            return field
    return None


def check_fields(records: Sequence[RagRecord], path: str | Path, needs: Mapping[str, Sequence[str]]) -> None:
    """A field the run needs (`answer` always; `reference` or `contexts` for the judges named for them) that no
    record has is a mistake in the file (a column missing or misnamed), not N records each not applicable: one
    error naming the field and the file. A field some records lack is each such record's not-applicable."""
    for field, judges in {"answer": [], **needs}.items():
        if any(PRESENT[field](r) for r in records):
            continue
        who = f" (judge {', '.join(judges)} needs it)" if judges else ""
        raise InputError(f"no record has it{who}: give it under one of: {', '.join(FIELDS[field])}",
                         file=str(path), field=field)


def no_answer(record: RagRecord) -> str | None:
    """Why a record has nothing to judge (not applicable to any judge; never an empty answer's 0), or None."""
    if record.answer is None:
        return f"no answer (the record has none of: {', '.join(FIELDS['answer'])})"
    if not record.answer.strip():
        return "empty answer"
    return None

"""The system under test of a `rag` run is the app that wrote the records: its answers are read, not generated."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING

from ragjudge.engine.bench import Record, Solver
from ragjudge.formats.rag_records import RagRecord

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext


class RecordedAnswers(Solver[RagRecord]):
    """Each record's own answer (and passages), as the judges read a prediction; a record without an answer is that
    sample's error (nothing to judge), not a run failure."""

    journaled = False
    name = "answers"

    def fingerprint(self, sample: RagRecord) -> str:
        return "records"

    async def solve(self, samples: Sequence[RagRecord], ctx: RunContext) -> AsyncIterator[tuple[str, Record]]:
        for record in samples:
            if record.answer is None:
                yield record.key, {"error": "the record has no answer (answer, response or actual_output)"}
            else:
                yield record.key, record.prediction().model_dump(exclude_none=True)

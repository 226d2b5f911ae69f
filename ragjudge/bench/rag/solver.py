"""The system under test of a `rag` run is the app that wrote the records: its answers are read, not generated."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING

from ragjudge.engine.bench import Record, Solver
from ragjudge.formats.rag_records import RagRecord

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext


class RecordedAnswers(Solver[RagRecord]):
    """Each record's own answer (the judges read the record itself, `RagRecord.item`). A record without an answer is
    not an error of the app's: each judge records it as not applicable (`no_answer`); a file where no record has one
    is refused at load (`check_fields`)."""

    journaled = False
    name = "answers"

    def fingerprint(self, sample: RagRecord) -> str:
        return "records"

    async def solve(self, samples: Sequence[RagRecord], ctx: RunContext) -> AsyncIterator[tuple[str, Record]]:
        for record in samples:
            yield record.key, {"text": record.answer or ""}

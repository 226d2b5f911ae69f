"""Each system is a scorer: it ranks every dialogue's candidates at every grid setting and measures each ranking.

Each system is journaled on its own (fingerprint: spec, scoring code version, pool statistics, queries read), so
adding a system to a finished run ranks with it only, and a resume skips what each system ranked. Labels are read only
after ranking. Tuning needs every dialogue's figures, so it is the run's evaluation (`evaluation.py`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ragjudge.bench.sentence_retrieval.data import Dialogue
from ragjudge.bench.sentence_retrieval.metrics import measure
from ragjudge.bench.sentence_retrieval.solver import queries_of
from ragjudge.bench.sentence_retrieval.systems import RankingMemo, System, system_fingerprint
from ragjudge.engine.bench import Record, Scorer
from ragjudge.llm import LLMError
from ragjudge.retrieval.encoders import EncodingError

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext


class SystemScorer(Scorer[Dialogue]):
    """Ranks with one system (every grid setting) and measures AP, nDCG@5 and RR of each ranking."""

    def __init__(self, system: System, memo: RankingMemo, chunk: int = 32):
        self.system = system
        self.name = system.name
        self.memo = memo
        self.chunk = chunk

    def fingerprint(self, sample: Dialogue, output: Record) -> str:
        return system_fingerprint(self.system, queries_of(output))

    async def score(self, items: Sequence[tuple[Dialogue, Record]], ctx: RunContext
                    ) -> AsyncIterator[tuple[str, Record]]:
        keys = self.system.setting_keys
        for start in range(0, len(items), self.chunk):
            chunk = [(d, queries_of(out)) for d, out in items[start:start + self.chunk]]
            try:
                rankings = await self.memo.get(self.system, chunk)
            except (EncodingError, LLMError) as exc:
                for d, _ in chunk:
                    yield d.id, {"error": f"{self.name}: {exc}"}
                continue
            for (d, _), ranking in zip(chunk, rankings, strict=True):
                orders = np.stack([ranking[k] for k in keys])
                values = measure(np.asarray(d.labels), orders)
                yield d.id, {"settings": keys, "rankings": orders.tolist(), "metrics": values.tolist()}


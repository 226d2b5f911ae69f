"""`hybrid`: reciprocal rank fusion (Cormack et al., 2009) of any retrievers: a passage scores the sum of weight /
(rrf_k + rank), which needs no calibration between engines whose scores (BM25, cosine) live on different scales.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ragjudge.errors import UsageError
from ragjudge.models import Passage
from ragjudge.progress import ProgressBars
from ragjudge.retrieval.base import Retriever, RetrieverOptions, StaleIndex


class MemberSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    retriever: str
    options: dict[str, Any] = Field(default_factory=dict)
    weight: float = 1.0


class HybridOptions(RetrieverOptions):
    retrievers: list[MemberSpec | str] = Field(min_length=1)
    """Inline `{retriever, options, weight}` entries, or names of other pipeline specs (their retriever)."""
    rrf_k: int = Field(60, ge=1)
    depth: int = Field(100, ge=1)
    """How many passages each member retrieves before fusion."""


def rrf(rankings: Sequence[Sequence[Passage]], weights: Sequence[float], rrf_k: int, k: int) -> list[Passage]:
    """Fuse ranked lists; ties keep the order in which passages were first seen (member order, rank)."""
    scores: dict[str, float] = {}
    first: dict[str, Passage] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        for rank, passage in enumerate(ranking, start=1):
            pid = passage.document_id
            scores[pid] = scores.get(pid, 0.0) + weight / (rrf_k + rank)
            first.setdefault(pid, passage)
    order = {pid: i for i, pid in enumerate(first)}
    best = sorted(scores, key=lambda pid: (-scores[pid], order[pid]))[:k]
    return [first[pid].model_copy(update={"score": scores[pid]}) for pid in best]


class HybridRetriever(Retriever):
    kind = "hybrid"
    Options = HybridOptions
    options: HybridOptions

    def __init__(self, options: dict[str, Any] | None = None, *, source: str | None = None,
                 members: list[Retriever] | None = None, weights: list[float] | None = None):
        super().__init__(options, source=source)
        if members is None:
            raise ValueError("build hybrid retrievers through ragjudge.retrieval.registry.build_retriever")
        self.members = members
        self.weights = weights or [1.0] * len(members)

    def identity(self) -> dict[str, Any]:
        return {"retriever": self.kind, "options": {"rrf_k": self.options.rrf_k, "depth": self.options.depth,
                                                    "weights": self.weights},
                "members": [m.identity() for m in self.members]}

    def describe(self) -> dict[str, Any]:
        return {**self.identity(), "members": [m.describe() for m in self.members]}

    def _folder(self, folder: Path, i: int) -> Path:
        return folder / f"{i}-{self.members[i].kind}"

    def index(self, passages: Sequence[Passage], bars: ProgressBars | None = None) -> None:
        for member in self.members:
            member.index(passages, bars)

    def save(self, folder: Path) -> None:
        for i, member in enumerate(self.members):
            sub = self._folder(folder, i)
            sub.mkdir(parents=True, exist_ok=True)
            member.save(sub)

    def load(self, folder: Path) -> None:
        for i, member in enumerate(self.members):
            sub = self._folder(folder, i)
            if not sub.is_dir():
                raise StaleIndex(f"{sub} is missing")
            member.load(sub)

    def attach(self) -> None:
        for member in self.members:
            attach = getattr(member, "attach", None)
            if attach is None:
                raise UsageError(f"--corpus is required: hybrid member {member.kind} builds its own index")
            attach()

    def close(self) -> None:
        for member in self.members:
            member.close()

    def _search_many(self, queries: list[str], k: int) -> list[list[Passage]]:
        per_member = [m.search_many(queries, max(k, self.options.depth)) for m in self.members]
        return [rrf([ranked[q] for ranked in per_member], self.weights, self.options.rrf_k, k)
                for q in range(len(queries))]

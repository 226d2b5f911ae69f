"""From ranked units to ranked conversations: each conversation scores its best unit (max-passage), ties in the
retriever's order; too few distinct conversations, and the query is searched twice as deep (docs/benches/cdr.md,
Ranking).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ragjudge.models import Passage


@dataclass(frozen=True)
class RankedConversation:
    id: str
    score: float
    unit: str
    """The unit that gave the conversation its score."""

    def as_dict(self) -> dict[str, object]:
        return {"id": self.id, "score": self.score, "unit": self.unit}


def max_passage(hits: Sequence[Passage], conversation_of: dict[str, str], depth: int | None = None
                ) -> list[RankedConversation]:
    """Conversations in order of their first unit in `hits` (hits are best first), at most `depth`."""
    seen: set[str] = set()
    ranked: list[RankedConversation] = []
    for hit in hits:
        conversation = conversation_of[hit.document_id]
        if conversation in seen:
            continue
        seen.add(conversation)
        ranked.append(RankedConversation(conversation, float(hit.score or 0.0), hit.document_id))
        if depth is not None and len(ranked) == depth:
            break
    return ranked


def first_depth(n_units: int, n_conversations: int, depth: int) -> int:
    """Units to ask for first: twice the cut-off times the mean units per conversation (all, if fewer)."""
    per_conversation = -(-n_units // max(n_conversations, 1))
    return min(n_units, 2 * depth * per_conversation)


def search_conversations(search: Callable[[list[str], int], list[list[Passage]]], queries: list[str],
                         conversation_of: dict[str, str], depth: int, n_units: int, n_conversations: int
                         ) -> tuple[list[list[RankedConversation]], list[int]]:
    """The top `depth` conversations per query, and how many units each query's final search ranked."""
    k = first_depth(n_units, n_conversations, depth)
    results: list[list[RankedConversation]] = [[] for _ in queries]
    searched = [0] * len(queries)
    todo = list(range(len(queries)))
    while todo:
        hits = search([queries[i] for i in todo], k)
        again = []
        for i, ranked_units in zip(todo, hits, strict=True):
            results[i] = max_passage(ranked_units, conversation_of, depth)
            searched[i] = len(ranked_units)
            exhausted = len(ranked_units) < k or k >= n_units
            if len(results[i]) < depth and not exhausted:
                again.append(i)
        todo, k = again, min(n_units, 2 * k)
    return results, searched

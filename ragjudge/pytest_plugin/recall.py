"""Retrieval Recall@k of one turn: the share of the expected passages among the first k retrieved.

PYTEST_DONT_REWRITE
"""

from __future__ import annotations

from collections.abc import Sequence

from ragjudge.formats.samples import Score


def recall_at_k(expected_ids: Sequence[str], retrieved_ids: Sequence[str], k: int) -> float | None:
    """|expected ∩ retrieved[:k]| / |expected|, ids compared as strings (a passage retrieved twice counts once); None
    when nothing is expected (recall is undefined)."""
    if k < 1:
        raise ValueError(f"k must be 1 or more, got {k}")
    expected = {str(i) for i in expected_ids}
    if not expected:
        return None
    top = {str(i) for i in list(retrieved_ids)[:k]}
    return len(expected & top) / len(expected)


def recall_result(expected_ids: Sequence[str] | None, retrieved_ids: Sequence[str], k: int,
                  judge: str = "recall") -> Score:
    """Recall@k as a judge result, with the hits and misses as its rationale."""
    metric = f"Recall@{k}"
    if expected_ids is None:
        return Score(judge=judge, metric=metric, details={"skipped": "no expected passage ids", "k": k})
    value = recall_at_k(expected_ids, retrieved_ids, k)
    if value is None:
        return Score(judge=judge, metric=metric, details={"skipped": "the expected passage id list is empty",
                                                                   "k": k})
    top = [str(i) for i in list(retrieved_ids)[:k]]
    expected = list(dict.fromkeys(str(i) for i in expected_ids))
    found = [i for i in expected if i in top]
    missing = [i for i in expected if i not in top]
    rationale = (f"{len(found)} of {len(expected)} expected passage(s) in the top {k} retrieved; "
                 f"missing: {', '.join(missing) or 'none'}; top {k}: {', '.join(top) or '(nothing retrieved)'}")
    return Score(judge=judge, metric=metric, value=value, label=f"{len(found)}/{len(expected)}",
                       rationale=rationale, model="passage ids",
                       details={"k": k, "found": found, "missing": missing, "retrieved": top})

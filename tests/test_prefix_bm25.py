"""Prefix BM25: searching the first n items (plus extra texts) of a collection tokenised once gives the
scores of a bm25 index built over exactly those items."""

from __future__ import annotations

import random

import pytest

from ragjudge.errors import UsageError
from ragjudge.models import Passage
from ragjudge.retrieval.bm25 import BM25Retriever
from ragjudge.retrieval.prefix_bm25 import PrefixBM25

WORDS = ["ferry", "tulips", "bakery", "otters", "parrot", "lighthouse", "espresso", "florist", "clinic", "veterinarian", "sister", "roommate", "boyfriend", "birthday", "cake", "party", "running", "runs", "ran", "the", "and", "of", "is"]


def corpus(n: int, seed: int = 3) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 15))) for _ in range(n)]


def reference(texts: list[str], query: str, options: dict | None = None) -> dict[str, float]:
    retriever = BM25Retriever(options)
    retriever.index([Passage(id=str(i), text=t) for i, t in enumerate(texts)])
    return {p.document_id: p.score for p in retriever.search(query, len(texts))}


@pytest.mark.parametrize("options", [None, {"method": "robertson", "k1": 1.5, "stemmer": None}])
def test_prefix_scores_equal_an_index_of_the_prefix(options: dict | None) -> None:
    texts = corpus(80)
    engine = PrefixBM25(options)
    engine.index(texts)
    for n in (1, 7, 40, 80):
        for query in ("otters parrot", "running tulips tulips", "Whose sister works at the clinic?"):
            got = {str(r): s for r, s in engine.search(query, n, n)}
            want = reference(texts[:n], query, options)
            assert got.keys() == want.keys()
            assert all(got[k] == pytest.approx(want[k], rel=1e-5) for k in want)


def test_extra_texts_count_as_part_of_the_collection() -> None:
    texts = corpus(30)
    extras = ["otters at the lighthouse", "a brand new word: zeppelin"]
    engine = PrefixBM25()
    engine.index(texts)
    got = {r: s for r, s in engine.search("otters zeppelin lighthouse", 12, 20, extras)}
    want = reference(texts[:12] + extras, "otters zeppelin lighthouse")
    assert {str(r): s for r, s in got.items()}.keys() == want.keys()
    assert all(got[int(k)] == pytest.approx(v, rel=1e-5) for k, v in want.items())
    assert 13 in got  # the unseen word matches its extra text


def test_ranking_is_best_first_ties_by_position_and_matches_only() -> None:
    engine = PrefixBM25()
    engine.index(["otters", "otters", "cake", "otters otters"])
    assert [r for r, _ in engine.search("otters", 4, 10)] == [3, 0, 1]
    assert engine.search("otters", 0, 10) == [] and engine.search("nothing here", 4, 10) == []
    with pytest.raises(ValueError):
        engine.search("otters", 5, 1)


def test_methods_that_score_missing_terms_are_refused() -> None:
    with pytest.raises(UsageError, match="bm25l"):
        PrefixBM25({"method": "bm25l"})

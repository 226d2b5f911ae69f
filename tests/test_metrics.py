"""ragjudge.metrics: each ranking and classification function on hand-computed values, the edge cases (nothing
relevant, k beyond the ranking, an empty ranking), the array versions equal to the per-query ones, and every
per-query function equal to ranx (trec_eval's definitions) on random runs."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from ragjudge.metrics import classification as C
from ragjudge.metrics import ranking as R

RANKING = ["d3", "d1", "d7", "d2", "d9"]
RELEVANT = {"d1", "d2", "d4"}  # d4 is never retrieved


def test_ranking_metrics_by_hand() -> None:
    assert R.precision_at(RANKING, RELEVANT, 2) == 1 / 2
    assert R.precision_at(RANKING, RELEVANT, 10) == 2 / 10  # a short ranking is not padded out of the penalty
    assert R.recall_at(RANKING, RELEVANT, 4) == 2 / 3
    assert R.hit_at(RANKING, RELEVANT, 1) == 0.0 and R.hit_at(RANKING, RELEVANT, 2) == 1.0
    assert R.reciprocal_rank(RANKING, RELEVANT) == 1 / 2
    assert R.reciprocal_rank(RANKING, RELEVANT, k=1) == 0.0
    assert R.average_precision(RANKING, RELEVANT) == pytest.approx((1 / 2 + 2 / 4) / 3)
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    ideal = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert R.ndcg_at(RANKING, dict.fromkeys(RELEVANT, 1), 5) == pytest.approx(dcg / ideal)
    graded = {"d1": 2, "d2": 1, "d4": 3}  # linear gain: the grade itself
    assert R.ndcg_at(RANKING, graded, 5) == pytest.approx(
        (2 / math.log2(3) + 1 / math.log2(5)) / (3 + 2 / math.log2(3) + 1 / math.log2(4)))


def test_ranking_edge_cases() -> None:
    for metric in (lambda r, g: R.recall_at(r, g, 5), lambda r, g: R.average_precision(r, g),
                   lambda r, g: R.ndcg_at(r, dict.fromkeys(g, 1), 5), lambda r, g: R.reciprocal_rank(r, g),
                   lambda r, g: R.hit_at(r, g, 5), lambda r, g: R.precision_at(r, g, 5)):
        assert metric(RANKING, set()) == 0.0  # nothing relevant
        assert metric([], RELEVANT) == 0.0  # nothing retrieved


def test_the_array_versions_equal_the_per_query_ones() -> None:
    rng = np.random.default_rng(3)
    labels = (rng.random((50, 30)) < 0.15).astype(float)
    for row in labels:
        ranking = [f"d{i}" for i in range(len(row))]
        relevant = {f"d{i}" for i, v in enumerate(row) if v}
        one = row[None, :]
        assert R.average_precision_rows(one)[0] == pytest.approx(R.average_precision(ranking, relevant))
        assert R.ndcg_rows(one, 5)[0] == pytest.approx(R.ndcg_at(ranking, dict.fromkeys(relevant, 1), 5))
        assert R.reciprocal_rank_rows(one)[0] == pytest.approx(R.reciprocal_rank(ranking, relevant))


def test_every_per_query_function_equals_ranx_on_random_runs() -> None:
    rnd = random.Random(11)
    docs = [f"doc{i}" for i in range(40)]
    rankings, qrels = {}, {}
    for q in range(25):
        key = f"q{q}"
        rankings[key] = rnd.sample(docs, rnd.randint(0, 20))
        qrels[key] = {d: rnd.randint(1, 3) for d in rnd.sample(docs, rnd.randint(1, 6))}
    keys = list(rankings)
    for k in (1, 3, 10, 25):
        ours = {
            f"precision@{k}": [R.precision_at(rankings[q], qrels[q], k) for q in keys],
            f"recall@{k}": [R.recall_at(rankings[q], qrels[q], k) for q in keys],
            f"hit_rate@{k}": [R.hit_at(rankings[q], qrels[q], k) for q in keys],
            f"mrr@{k}": [R.reciprocal_rank(rankings[q], qrels[q], k) for q in keys],
            f"ndcg@{k}": [R.ndcg_at(rankings[q], qrels[q], k) for q in keys],
            f"map@{k}": [R.average_precision(rankings[q], qrels[q], k) for q in keys],
        }
        theirs = R.ranx_scores(rankings, qrels, list(ours), keys)
        for name, values in ours.items():
            np.testing.assert_allclose(values, theirs[name], rtol=1e-9, atol=1e-12, err_msg=name)


def test_classification_by_hand() -> None:
    gold = ["a", "a", "b", "c"]
    pred = ["a", "b", "b", "x"]
    assert C.accuracy(gold, pred) == 2 / 4
    per = C.per_label(gold, pred, ["a", "b", "c"])
    assert per["a"] == {"precision": 1.0, "recall": 0.5, "f1": pytest.approx(2 / 3), "support": 2}
    assert per["b"] == {"precision": 0.5, "recall": 1.0, "f1": pytest.approx(2 / 3), "support": 1}
    assert per["c"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 1}
    assert C.macro_f1(gold, pred) == pytest.approx((2 / 3 + 2 / 3 + 0) / 3)  # "x" is no class of its own
    assert C.macro_f1([], []) is None and C.accuracy([], []) is None
    assert C.prf(2, 4, 0) == {"precision": 0.5, "recall": None, "f1": None}
    assert C.f1_of(0.0, 0.0) == 0.0
    with pytest.raises(ValueError):
        C.accuracy(gold, pred[:2])

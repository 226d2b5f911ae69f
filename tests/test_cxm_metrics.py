"""CXMArena metrics on hand-computed fixtures: every expected number below is worked out in the comments."""

from __future__ import annotations

import numpy as np
import pytest

from ragjudge.bench.cxm import metrics as M
from ragjudge.bench.cxm.metrics import QuestionOutcome as Q

# -- intent ---------------------------------------------------------------------------------------------

GOLD = ["billing", "billing", "roaming", "router", "esim", "porting"]
PRED = ["billing", M.UNPARSABLE, "roaming", "esim", "Activating eSIM", "porting"]


def test_intent_accuracy_and_confusion() -> None:
    assert M.accuracy(GOLD, PRED) == pytest.approx(3 / 6)
    conf = M.confusion(GOLD, PRED)
    assert conf["billing"] == {"billing": 1, M.UNPARSABLE: 1}
    assert conf["router"] == {"esim": 1}
    with pytest.raises(ValueError):
        M.accuracy(GOLD, PRED[:-1])


def test_macro_f1_over_gold_labels_by_hand() -> None:
    # billing: P 1/1, R 1/2 -> F1 2/3; roaming 1; porting 1; router: 0 (never predicted);
    # esim: predicted once (for router) and wrong, its own case answered out of taxonomy -> P 0, R 0 -> 0.
    # The out-of-taxonomy answer and <unparsable> are not classes of their own: they only cost recall.
    expected = (2 / 3 + 1 + 1 + 0 + 0) / 5
    assert M.macro_f1(GOLD, PRED) == pytest.approx(expected)
    per = M.per_label(GOLD, PRED, ["billing", "esim"])
    assert per["billing"] == pytest.approx({"precision": 1.0, "recall": 0.5, "f1": 2 / 3, "support": 2})
    assert per["esim"] == pytest.approx({"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 1})
    assert M.macro_f1([], []) is None


def test_level1_of_two_level_labels() -> None:
    assert M.level1("Billing:Double charge") == "Billing" and M.level1("Roaming") == "Roaming"
    gold = ["Billing:Double charge", "Technical:eSIM"]
    pred = ["Billing:Refund status", "Technical:eSIM"]
    assert M.accuracy(gold, pred) == 0.5
    assert M.accuracy([M.level1(g) for g in gold], [M.level1(p) for p in pred]) == 1.0


# -- agent quality adherence ----------------------------------------------------------------------------

# Case A: 3 questions, all right. Case B: 2 of 3 right. Case C: 1 of 2 right (one unreadable).
OUTCOMES = [
    Q("A", True, True, ("1",), ("1",)),
    Q("A", True, True, ("3",), ("3", "4")),
    Q("A", False, False),
    Q("B", True, True, ("1",), ("2",)),
    Q("B", None, False),  # gold NA, predicted False: wrong
    Q("B", False, False),
    Q("C", True, M.UNPARSABLE, ("6",)),
    Q("C", None, None),  # NA predicted as NA: right
]


def test_question_level_differs_from_case_level() -> None:
    assert M.question_accuracy(OUTCOMES) == pytest.approx(6 / 8)
    assert M.case_accuracy(OUTCOMES) == pytest.approx(1 / 3)  # only case A has every question right


def test_question_f1_of_true_answers() -> None:
    # gold True: A1 A2 B1 C1 = 4; predicted True: A1 A2 B1 = 3; both: 3 -> P 1, R 3/4, F1 6/7
    prf = M.binary_prf(OUTCOMES)
    assert prf["precision"] == pytest.approx(1.0)
    assert prf["recall"] == pytest.approx(0.75)
    assert prf["f1"] == pytest.approx(6 / 7)


def test_evidence_precision_recall_micro() -> None:
    # Questions with gold evidence: A1 {1}/{1}, A2 {3}/{3,4}, B1 {1}/{2}, C1 {6}/{} -> hits 2, cited 4, gold 4
    ev = M.evidence_prf(OUTCOMES)
    assert ev["questions"] == 4
    assert ev["precision"] == pytest.approx(2 / 4) and ev["recall"] == pytest.approx(2 / 4)
    assert M.evidence_prf([Q("X", False, False)])["precision"] is None  # nothing to measure


# -- tool calls -----------------------------------------------------------------------------------------

def test_tool_selection_compares_sorted_sets() -> None:
    assert M.tool_selection_correct(["b", "a"], ["a", "b"])
    assert M.tool_selection_correct(["a"], ["a", "a"])  # repeating a call is the same set
    assert not M.tool_selection_correct(["a", "b"], ["a"])
    assert not M.tool_selection_correct(["a"], ["a", "c"])
    assert not M.tool_selection_correct(["a"], [])


def test_argument_match() -> None:
    gold = [("refund", {"invoice": "INV-1", "amount": 30})]
    assert M.arguments_match(gold, [("refund", {"amount": 30.0, "invoice": " inv-1 "})])  # case, space, 30 == 30.0
    assert not M.arguments_match(gold, [("refund", {"invoice": "INV-2", "amount": 30})])
    assert not M.arguments_match(gold, [("refund", {"invoice": "INV-1"})])  # a missing argument
    assert not M.arguments_match(gold, [("other", {"invoice": "INV-1", "amount": 30})])
    assert M.arguments_match([("a", None)], [("a", {})]) is None  # the gold names the tool only
    # two gold calls of the same tool need two distinct matching predicted calls
    twice = [("t", {"x": 1}), ("t", {"x": 2})]
    assert M.arguments_match(twice, [("t", {"x": 2}), ("t", {"x": 1})])
    assert not M.arguments_match(twice, [("t", {"x": 1})])
    assert M.argument_value_accuracy(gold, [("refund", {"invoice": "INV-1", "amount": 31})]) == (1, 2)


def test_accuracy_vs_number_of_offered_tools_curve() -> None:
    rows = [(16, True), (16, True), (32, True), (32, False), (128, False), (128, False), (64, True)]
    curve = M.accuracy_by_size(rows)
    assert list(curve) == [16, 32, 64, 128]  # ascending sizes
    assert curve[16] == {"accuracy": 1.0, "n": 2}
    assert curve[32] == {"accuracy": 0.5, "n": 2}
    assert curve[64] == {"accuracy": 1.0, "n": 1}
    assert curve[128] == {"accuracy": 0.0, "n": 2}


# -- answer classification ------------------------------------------------------------------------------

def test_distribution_keeps_the_four_classes_in_order() -> None:
    dist = M.distribution(["Correct", "Refusal", "Correct", "Hallucination"],
                          ("Correct", "Incorrect", "Hallucination", "Refusal"))
    assert list(dist) == ["Correct", "Incorrect", "Hallucination", "Refusal"]
    assert dist["Correct"] == {"count": 2, "share": 0.5}
    assert dist["Incorrect"] == {"count": 0, "share": 0.0}
    assert M.distribution([], ("Correct",))["Correct"]["share"] is None


# -- KB refinement --------------------------------------------------------------------------------------

def P(a: str, b: str) -> frozenset[str]:
    return frozenset((a, b))


def test_pairs_are_unordered() -> None:
    gold = {P("a", "b"), P("c", "d"), P("e", "f")}
    pred = {P("b", "a"), P("d", "c"), P("a", "c"), P("x", "y")}  # (b, a) is (a, b)
    s = M.pair_prf(gold, pred)
    assert (s["tp"], s["predicted"], s["gold"]) == (2, 4, 3)
    assert s["precision"] == pytest.approx(0.5) and s["recall"] == pytest.approx(2 / 3)
    assert s["f1"] == pytest.approx(2 * 0.5 * (2 / 3) / (0.5 + 2 / 3))
    empty = M.pair_prf(gold, set())
    assert empty["precision"] is None and empty["recall"] == 0.0 and empty["f1"] is None


def test_sweep_over_sorted_candidates_by_hand() -> None:
    # candidates by descending similarity: ab .9 (gold), cd .8, bc .7 (gold), ac .6; 2 gold pairs in all
    sim = np.array([0.9, 0.8, 0.7, 0.6], dtype=np.float32)
    flags = np.array([True, False, True, False])
    rows = M.sweep_sorted(sim, flags, 2, [0.5, 0.75, 0.95])
    # 0.5: all four -> tp 2 of 4; 0.75: ab cd -> tp 1 of 2; 0.95: nothing
    assert [(r["predicted"], r["tp"]) for r in rows] == [(4, 2), (2, 1), (0, 0)]
    assert rows[0]["f1"] == pytest.approx(2 * 0.5 * 1.0 / 1.5)
    assert rows[1]["f1"] == pytest.approx(0.5)
    assert rows[2]["precision"] is None
    assert M.best_row(rows)["threshold"] == 0.5


def test_nearest_pairs_equal_brute_force_in_blocks() -> None:
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(50, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    sim = vectors @ vectors.T
    first, second, s = M.nearest_pairs(vectors, 3, block=7)  # blocks that do not divide 50
    expected = {}
    for i in range(50):
        for j in sorted((j for j in range(50) if j != i), key=lambda j: -sim[i, j])[:3]:
            expected[(min(i, j), max(i, j))] = sim[i, j]
    assert set(zip(first.tolist(), second.tolist())) == set(expected)
    assert list(s) == sorted(s, reverse=True) and all(a < b for a, b in zip(first, second))
    assert np.allclose(s, [expected[(a, b)] for a, b in zip(first.tolist(), second.tolist())], atol=1e-6)


def test_official_knn_pairs_lose_relations_seen_only_from_the_higher_index() -> None:
    """CXMArena's predictor keeps (i, j) only when i < j finds j among its own top k (itself included): here
    article 2's nearest other is 0, but 0's top 2 are itself and 1, so (0, 2) is lost. ragjudge keeps it."""
    vectors = np.array([[1.0, 0.0], [0.99, 0.141], [0.95, -0.312]], dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    assert M.official_knn_pairs(vectors, 2, threshold=0.5) == {(0, 1)}
    first, second, _ = M.nearest_pairs(vectors, 1)
    assert set(zip(first.tolist(), second.tolist())) == {(0, 1), (0, 2)}


# -- article search -------------------------------------------------------------------------------------

def test_precision_recall_mrr_by_hand() -> None:
    ranking, relevant = ["d3", "d1", "d7", "d2"], ["d1", "d2"]
    assert M.precision_at_k(ranking, relevant, 1) == 0.0
    assert M.precision_at_k(ranking, relevant, 2) == 0.5
    assert M.recall_at_k(ranking, relevant, 2) == 0.5
    assert M.recall_at_k(ranking, relevant, 4) == 1.0
    assert M.precision_at_k(["d1"], relevant, 5) == pytest.approx(1 / 5)  # a short ranking is not padded away
    assert M.reciprocal_rank(ranking, relevant) == 0.5
    assert M.reciprocal_rank(["d1", "d1", "d2"], ["d2"]) == 0.5  # a repeated id counts once
    assert M.reciprocal_rank(["x"], relevant) == 0.0
    scores = M.search_scores([(ranking, relevant), (["d9", "d8", "d5"], ["d5"])], [1, 3])
    # query 1: P@1 0, R@1 0, P@3 1/3, R@3 1/2, RR 1/2; query 2: P@1 0, P@3 1/3, R@3 1, RR 1/3
    # hit@k (the paper's "precision"): a relevant article in the top k: 0 of 2 at k=1, 2 of 2 at k=3
    assert scores == pytest.approx({"P@1": 0.0, "R@1": 0.0, "hit@1": 0.0, "P@3": 1 / 3, "R@3": 0.75, "hit@3": 1.0,
                                    "MRR": (0.5 + 1 / 3) / 2})

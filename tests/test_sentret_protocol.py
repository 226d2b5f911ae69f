"""Sentence retrieval: tuning on validation halves only, test-half figures, permutation tests, corrections."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from ragjudge.bench.sentence_retrieval import protocol
from ragjudge.bench.sentence_retrieval.data import Split
from ragjudge.bench.sentence_retrieval.significance import (
    bonferroni,
    holm,
    paired_permutation_test,
)

IDS = [f"d{i}" for i in range(8)]
VAL, TEST = IDS[:4], IDS[4:]


def _scores() -> np.ndarray:
    """Setting 0 is better on the validation dialogues, setting 1 on the test dialogues."""
    ap = np.array([[0.9, 0.8, 0.9, 0.8, 0.1, 0.2, 0.1, 0.2],
                   [0.5, 0.5, 0.5, 0.5, 0.9, 0.9, 0.9, 0.9]])
    return np.stack([ap, ap / 2, ap / 3], axis=2)  # (settings, dialogues, metrics)


def test_tuning_sees_only_the_validation_half() -> None:
    masks = protocol.split_masks([Split(val=VAL, test=TEST)], IDS)
    types = np.array(["ungrounded", "grounded"] * 4)
    outcome = protocol.evaluate(_scores(), masks, types)
    assert outcome.picks.tolist() == [0]  # validation prefers setting 0 ...
    assert outcome.test[0] == pytest.approx([0.15, 0.075, 0.05])  # ... and the test half is scored with it
    assert _scores()[1, 4:, 0].mean() == pytest.approx(0.9)  # though the test half would have preferred setting 1
    # changing the test half's scores never changes a pick
    changed = _scores()
    changed[0, 4:, :] = 0.0
    assert protocol.evaluate(changed, masks, types).picks.tolist() == [0]
    # swapping the halves swaps the preference
    swapped = protocol.split_masks([Split(val=TEST, test=VAL)], IDS)
    assert protocol.evaluate(_scores(), swapped, types).picks.tolist() == [1]


def test_by_type_and_per_dialogue_scores() -> None:
    splits = [Split(val=VAL, test=TEST), Split(val=TEST, test=VAL)]
    masks = protocol.split_masks(splits, IDS)
    types = np.array(["ungrounded", "grounded"] * 4)
    o = protocol.evaluate(_scores(), masks, types)
    assert o.picks.tolist() == [0, 1]
    assert o.by_type["ungrounded"][0, 0] == pytest.approx(np.mean([0.1, 0.1]))  # d4, d6 at setting 0
    assert o.by_type["grounded"][1, 0] == pytest.approx(np.mean([0.5, 0.5]))  # d1, d3 at setting 1
    # each dialogue is in exactly one test half: its score at that half's pick
    assert o.per_dialogue[:, 0].tolist() == pytest.approx([0.5] * 4 + [0.1, 0.2, 0.1, 0.2])
    assert protocol.mean_std(o.test[:, 0]) == pytest.approx((0.325, np.std([0.15, 0.5], ddof=1)))


def test_ties_between_settings_go_to_the_first_and_halves_must_hold_scored_dialogues() -> None:
    flat = np.ones((3, 4, 3))
    masks = protocol.split_masks([Split(val=["a", "b"], test=["c", "d"])], ["a", "b", "c", "d"])
    assert protocol.evaluate(flat, masks, np.array(["grounded"] * 4)).picks.tolist() == [0]
    with pytest.raises(Exception, match="no_splits"):
        protocol.split_masks([Split(val=["a", "x"], test=["y"], line=3)], ["a", "b"], source="splits.json")


def test_permutation_test_is_deterministic_per_seed_and_symmetric() -> None:
    rng = np.random.default_rng(1)
    a, b = rng.random(50), rng.random(50) * 0.95
    p1 = paired_permutation_test(a, b, permutations=2000, seed=7)
    assert p1 == paired_permutation_test(a, b, permutations=2000, seed=7)
    assert p1 == paired_permutation_test(b, a, permutations=2000, seed=7)  # two-tailed
    assert p1 != paired_permutation_test(a, b, permutations=2000, seed=8)
    # several tests at once give each the p-value it gets alone (one shared stream of signs)
    both = paired_permutation_test(np.stack([a, b], 1), np.stack([b, a * 0.5], 1), permutations=2000, seed=7)
    assert both[0] == p1
    assert both[1] == paired_permutation_test(b, a * 0.5, permutations=2000, seed=7)


def test_smallest_p_is_one_over_permutations_plus_one() -> None:
    a = np.linspace(0.5, 0.9, 50)
    p = paired_permutation_test(a, a - 0.2, permutations=10_000, seed=0)
    assert p == pytest.approx(1 / 10_001)
    assert paired_permutation_test(a, a, permutations=500, seed=0) == 1.0  # no difference at all


def test_exact_test_when_there_are_few_sign_patterns_matches_scipy() -> None:
    rng = np.random.default_rng(3)
    a, b = rng.random(9), rng.random(9)
    ours = paired_permutation_test(a, b, permutations=10_000)
    ref = stats.permutation_test((a, b), lambda x, y: np.mean(x - y), permutation_type="samples",
                                 alternative="two-sided", n_resamples=10_000)
    assert ours == pytest.approx(ref.pvalue)
    same_sign = paired_permutation_test(a + 1, a, permutations=10_000)
    assert same_sign == pytest.approx(2 / 2 ** 9)  # only all-plus and all-minus are as extreme


def test_bonferroni_clips_at_one_and_holm_steps_down() -> None:
    p = np.array([0.01, 0.04, 0.03, 0.5])
    assert bonferroni(p).tolist() == pytest.approx([0.04, 0.16, 0.12, 1.0])
    assert bonferroni(np.array([0.3]), n_hypotheses=10).tolist() == [1.0]
    # Holm: sorted 0.01, 0.03, 0.04, 0.5 -> 4*0.01, 3*0.03, max(0.09, 2*0.04), max(0.09, 1*0.5)
    assert holm(p).tolist() == pytest.approx([0.04, 0.09, 0.09, 0.5])
    assert holm(np.array([0.6, 0.5])).tolist() == pytest.approx([1.0, 1.0])

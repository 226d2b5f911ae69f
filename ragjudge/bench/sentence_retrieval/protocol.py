"""The paper's protocol (Section 5.1): for each of the 50 splits, pick each system's parameters by MAP on the
validation half and score the test half with them; mean and std of the 50 test-half figures, overall and by type.

One array per system, `scores[setting, dialogue, metric]`, and boolean split masks; `pick_settings` gets the
validation mask only, so the test half cannot influence a pick. A tie goes to the first setting in grid order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ragjudge.bench.sentence_retrieval.data import Split
from ragjudge.errors import InputError


@dataclass(frozen=True)
class SplitMasks:
    val: np.ndarray
    """(splits, dialogues) bool."""
    test: np.ndarray
    dropped: int = 0
    """Split ids that are not among the scored dialogues (e.g. with --limit)."""


def split_masks(splits: Sequence[Split], ids: Sequence[str], source: str | None = None) -> SplitMasks:
    """Masks over `ids`; ids of a split that were not scored are left out (and counted)."""
    position = {d: i for i, d in enumerate(ids)}
    val = np.zeros((len(splits), len(ids)), dtype=bool)
    test = np.zeros_like(val)
    dropped = 0
    for s, split in enumerate(splits):
        for mask, half in ((val, split.val), (test, split.test)):
            found = [position[d] for d in half if d in position]
            dropped += len(half) - len(found)
            mask[s, found] = True
        if not val[s].any() or not test[s].any():
            raise InputError("a half of this split has none of the scored dialogues (with --limit, use "
                             "-T no_splits=true)", file=source, line=split.line)
    return SplitMasks(val, test, dropped)


def all_at_once(n_dialogues: int) -> SplitMasks:
    """`no_splits`: one 'split' whose both halves are every dialogue (parameters tuned on what is scored)."""
    full = np.ones((1, n_dialogues), dtype=bool)
    return SplitMasks(full, full.copy())


def half_means(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean over each split's dialogues: values (settings, dialogues) -> (settings, splits)."""
    return values @ mask.T.astype(np.float64) / mask.sum(axis=1)


def pick_settings(tune: np.ndarray, val: np.ndarray) -> np.ndarray:
    """Per split, the setting with the best validation-half mean of `tune` (settings, dialogues); first wins ties."""
    return half_means(tune, val).argmax(axis=0)


@dataclass(frozen=True)
class SystemOutcome:
    picks: np.ndarray
    """(splits,) index of the setting picked on each validation half."""
    test: np.ndarray
    """(splits, metrics) test-half means at the picked settings."""
    by_type: dict[str, np.ndarray]
    """type -> (splits, metrics): the test half's dialogues of that type only."""
    per_dialogue: np.ndarray
    """(dialogues, metrics): each dialogue's mean over the splits whose test half holds it (NaN if none)."""


def evaluate(scores: np.ndarray, masks: SplitMasks, types: np.ndarray, tune_metric: int = 0) -> SystemOutcome:
    """Tune on each validation half, score each test half: `scores` is (settings, dialogues, metrics)."""
    picks = pick_settings(scores[:, :, tune_metric], masks.val)
    chosen = scores[picks]  # (splits, dialogues, metrics)
    test = masks.test[:, :, None]
    test_means = (chosen * test).sum(axis=1) / masks.test.sum(axis=1)[:, None]
    by_type = {}
    for t in np.unique(types):
        sub = test & (types == t)[None, :, None]
        counts = sub[:, :, 0].sum(axis=1)[:, None]
        by_type[str(t)] = np.divide((chosen * sub).sum(axis=1), counts, out=np.full(test_means.shape, np.nan),
                                    where=counts > 0)
    times = masks.test.sum(axis=0)[:, None]
    per_dialogue = np.divide((chosen * test).sum(axis=0), times, out=np.full(scores.shape[1:], np.nan),
                             where=times > 0)
    return SystemOutcome(picks, test_means, by_type, per_dialogue)


def mean_std(values: np.ndarray) -> tuple[float, float | None]:
    """Mean and sample standard deviation (ddof=1) over splits; no deviation from a single split."""
    values = values[~np.isnan(values)]
    if not len(values):
        return float("nan"), None
    return float(values.mean()), (float(values.std(ddof=1)) if len(values) > 1 else None)

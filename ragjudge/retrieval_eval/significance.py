"""Paired significance test between two runs scored on the same queries: the two-sided paired t-test.

Not ranx's Fisher randomization test: its numba threads ignore the seed, so the same runs give a different p-value
on every call; the t-test is deterministic, symmetric, and agrees closely with it on IR metrics over tens of
queries or more (Smucker et al., CIKM 2007). Each metric is tested on its own, with no correction for several.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ragjudge.retrieval_eval.metrics import Evaluation

TEST_NAME = "paired t-test (two-sided)"


def paired_test(a: Evaluation, b: Evaluation, *, alpha: float = 0.05) -> dict[str, dict[str, Any]]:
    """metric -> {"a", "b", "diff" (b - a), "p_value", "significant"}; both must cover the same queries."""
    if a.keys != b.keys:
        raise ValueError("paired test needs both runs scored on the same queries, in the same order")
    out: dict[str, dict[str, Any]] = {}
    for metric in a.metrics:
        x, y = a.scores[metric], b.scores[metric]
        diff = y - x
        p_value = paired_p_value(x, y)
        out[metric] = {"a": float(x.mean()), "b": float(y.mean()), "diff": float(diff.mean()),
                       "p_value": p_value, "significant": p_value is not None and p_value < alpha}
    return out


def paired_p_value(x: np.ndarray, y: np.ndarray) -> float | None:
    """Two-sided paired t-test p-value of per-item scores `x` and `y` (None for fewer than two pairs): scipy's
    `ttest_rel` (what ranx's `paired_student_t_test` calls), computed from Student's t in scipy.special, since importing
    ranx or scipy.stats takes seconds a report should not pay. A test checks the values against `ttest_rel`."""
    from scipy.special import stdtr

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    diff = y - x
    if len(x) < 2:
        return None
    if np.allclose(diff, diff[0]):
        # No spread in the differences: identical runs (p = 1) or a constant shift t cannot size.
        return 1.0 if math.isclose(float(diff[0]), 0.0, abs_tol=1e-12) else 0.0
    t = diff.mean() / (diff.std(ddof=1) / math.sqrt(len(diff)))
    return float(min(1.0, 2 * stdtr(len(diff) - 1, -abs(t))))


def t_quantile(q: float, dof: int) -> float:
    """Student's t quantile (scipy.special, see `paired_p_value` for why not scipy.stats)."""
    from scipy.special import stdtrit

    return float(stdtrit(dof, q))

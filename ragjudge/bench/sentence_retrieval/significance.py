"""Two-tailed paired permutation (randomization) tests and corrections for multiple hypotheses.

The paper's test ("two tailed permutation (randomization) test with 10,000 random permutations" over the 50 test
sets, Bonferroni): each permutation flips the sign of each paired difference at random (labels exchangeable under
the null); p = (1 + #{|perm| >= |obs|}) / (1 + permutations). Also run over dialogues, because the 50 test halves
overlap and overstate significance (docs/benches/sentence-retrieval.md). One stream of random signs per seed is
shared by every test of a run, so a p-value does not depend on which other tests ran. With 2^n <= permutations all
sign patterns are enumerated: the exact test, as scipy does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

import numpy as np

from ragjudge.bench.sentence_retrieval.metrics import METRICS

CHUNK = 1000


def paired_permutation_test(a: np.ndarray, b: np.ndarray, *, permutations: int = 10_000, seed: int = 0
                            ) -> np.ndarray:
    """p-values of the columns of `a` against those of `b` (paired by row): (n,) or (n, tests) arrays."""
    diff = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    single = diff.ndim == 1
    diff = diff.reshape(len(diff), -1)
    n = len(diff)
    if n == 0:
        raise ValueError("no paired values to test")
    if permutations < 1:
        raise ValueError("permutations must be at least 1")
    observed = np.abs(diff.mean(axis=0))
    tolerance = 1e-12 * np.maximum(1.0, observed)  # a permutation equal to the observed counts as extreme
    if n < 63 and 2 ** n <= permutations:
        patterns = (np.arange(2 ** n)[:, None] >> np.arange(n)[None, :]) & 1
        stats = np.abs((patterns * 2.0 - 1.0) @ diff) / n
        p = (stats >= observed - tolerance).sum(axis=0) / 2 ** n
        return p[0] if single else p
    rng = np.random.default_rng(seed)
    at_least = np.zeros(diff.shape[1], dtype=np.int64)
    for start in range(0, permutations, CHUNK):
        size = min(CHUNK, permutations - start)
        signs = rng.integers(0, 2, size=(size, n), dtype=np.int8).astype(np.float64) * 2.0 - 1.0
        stats = np.abs(signs @ diff) / n
        at_least += (stats >= observed - tolerance).sum(axis=0)
    p = (at_least + 1) / (permutations + 1)
    return p[0] if single else p


def bonferroni(p: np.ndarray, n_hypotheses: int | None = None) -> np.ndarray:
    """p x m, clipped at 1 (m: the number of hypotheses tested, by default the number of p-values)."""
    p = np.asarray(p, dtype=np.float64)
    m = len(p) if n_hypotheses is None else n_hypotheses
    return np.minimum(1.0, p * m)


def holm(p: np.ndarray) -> np.ndarray:
    """Holm's step-down adjustment: sorted p_(i) -> max_{j<=i} min(1, (m - j + 1) p_(j)), in input order."""
    p = np.asarray(p, dtype=np.float64)
    m = len(p)
    order = np.argsort(p, kind="stable")
    stepped = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(stepped)
    return adjusted


def compare_every_pair(names: Sequence[str], unit: str, values: Mapping[str, np.ndarray], *, permutations: int,
                    seed: int, alpha: float) -> dict[str, Any]:
    """Every pair of systems on every metric (MAP, nDCG@5, MRR), tested together as one family (its size recorded):
    `values` holds each system's (units, metrics) figures, paired by unit (splits or dialogues)."""
    pairs = list(combinations(names, 2))
    tests = [(a, b, m) for a, b in pairs for m in range(len(METRICS))]
    n = len(next(iter(values.values()))) if values else 0
    if not tests:  # one system: nothing to test, but the unit and its size are still said
        return {"unit": unit, "n": n, "n_hypotheses": 0, "tests": []}
    a = np.stack([values[t[0]][:, t[2]] for t in tests], axis=1)
    b = np.stack([values[t[1]][:, t[2]] for t in tests], axis=1)
    p = np.atleast_1d(paired_permutation_test(a, b, permutations=permutations, seed=seed))
    p_bonf, p_holm = bonferroni(p), holm(p)
    rows = [{"a": x, "b": y, "metric": METRICS[m], "diff": float(a[:, i].mean() - b[:, i].mean()),
             "p": float(p[i]), "p_bonferroni": float(p_bonf[i]), "p_holm": float(p_holm[i]),
             "significant": bool(p_bonf[i] <= alpha)} for i, (x, y, m) in enumerate(tests)]
    return {"unit": unit, "n": n, "n_hypotheses": len(tests), "tests": rows}

"""Which samples to label: a seeded uniform random draw (what PPI's validity needs), optionally stratified.

With strata each stratum gets n × its share of samples (largest remainders, ties by stratum name) and a uniform draw
inside it: every sample still equally likely up to rounding, and every stratum represented.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np


def draw(ids: Sequence[str], n: int, seed: int, strata: Mapping[str, str] | None = None) -> list[str]:
    """n ids of `ids` (all of them when n >= len), in the order drawn; `strata`: id → its stratum."""
    if n <= 0:
        raise ValueError(f"n must be at least 1, got {n}")
    if len(set(ids)) != len(ids):
        raise ValueError("sample ids are not unique")
    rng = np.random.default_rng(seed)
    if strata is None:
        order = rng.permutation(len(ids))
        return [ids[i] for i in order[:n]]
    groups: dict[str, list[str]] = {}
    for sample_id in ids:
        groups.setdefault(strata[sample_id], []).append(sample_id)
    names = sorted(groups)
    total = len(ids)
    quota = {g: min(n, total) * len(groups[g]) / total for g in names}
    take = {g: int(quota[g]) for g in names}
    left = min(n, total) - sum(take.values())
    for g in sorted(names, key=lambda g: (-(quota[g] - take[g]), g))[:left]:
        take[g] += 1
    drawn: list[str] = []
    for g in names:
        members = groups[g]
        drawn += [members[i] for i in rng.permutation(len(members))[:take[g]]]
    return drawn

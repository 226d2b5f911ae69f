"""How the embedding baseline (the paper's method, Table 2: docs/benches/cxmarena.md, KB refinement) and a predicted
pair are scored. The threshold sweep, held-out pick and oracle are an *analysis* (`baseline_analysis`), never the
baseline's result. All of it works on the k-nearest-neighbour candidate pairs, sorted once (`Candidates`). A
predicted pair is right when it is a gold pair of its kind (`gold_kinds`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragjudge.bench.cxm import metrics as M
from ragjudge.bench.cxm.paper import KB_K, KB_THRESHOLD

DEFAULT_THRESHOLDS = tuple(round(float(t), 2) for t in np.arange(0.3, 0.96, 0.05))
PAPER_THRESHOLD, PAPER_K = KB_THRESHOLD, KB_K
Pairs = dict[str, set[frozenset[str]]]
"""Unordered article pairs by kind (similar, contradictory)."""


def gold_kinds(pair: frozenset[str], gold: Pairs) -> list[str]:
    """The kinds the gold data gives a pair (none, one, in principle both)."""
    return [kind for kind, pairs in gold.items() if pair in pairs]


@dataclass
class Candidates:
    """The k-nearest-neighbour pairs of a KB (indices into `ids`), by descending similarity."""

    ids: list[str]
    first: np.ndarray
    second: np.ndarray
    similarity: np.ndarray

    def pairs(self, threshold: float, keep: np.ndarray | None = None) -> set[frozenset[str]]:
        mask = self.similarity >= threshold
        if keep is not None:
            mask &= keep
        return {frozenset((self.ids[a], self.ids[b])) for a, b in zip(self.first[mask].tolist(),
                                                                         self.second[mask].tolist())}

    def gold_flags(self, gold: set[frozenset[str]]) -> np.ndarray:
        return np.fromiter((frozenset((self.ids[a], self.ids[b])) in gold
                            for a, b in zip(self.first.tolist(), self.second.tolist())), dtype=bool,
                           count=len(self.first))


def baseline_analysis(candidates: Candidates, gold: set[frozenset[str]], thresholds: Sequence[float],
                      seed: int = 0) -> dict[str, Any]:
    """The sweep on all pairs, the oracle pick, and a threshold picked on a random half of the articles (dev)
    and scored on the other half (test); pairs across the halves are left out of both."""
    flags = candidates.gold_flags(gold)
    sweep = M.sweep_sorted(candidates.similarity, flags, len(gold), thresholds)
    index = {a: i for i, a in enumerate(candidates.ids)}
    half = np.random.default_rng(seed).permutation(len(candidates.ids)) < (len(candidates.ids) + 1) // 2
    out: dict[str, Any] = {"sweep": sweep, "oracle": M.best_row(sweep)}
    for name, side in (("dev", half), ("test", ~half)):
        keep = side[candidates.first] & side[candidates.second]
        n_gold = sum(1 for p in gold if all(a in index and side[index[a]] for a in p))
        out[name] = {"gold": n_gold,
                     "sweep": M.sweep_sorted(candidates.similarity[keep], flags[keep], n_gold, thresholds)}
    picked = M.best_row(out["dev"]["sweep"]) if out["dev"]["gold"] else None
    out["held_out"] = None if picked is None else {
        "threshold": picked["threshold"], "dev_f1": picked["f1"],
        **next(r for r in out["test"]["sweep"] if r["threshold"] == picked["threshold"]),
        "test_gold": out["test"]["gold"]}
    return out

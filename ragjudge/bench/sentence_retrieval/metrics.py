"""AP, nDCG@5 and reciprocal rank of rankings of one dialogue's candidates, many rankings at once.

The paper's measures (Section 5.1.1): MAP, NDCG of the 5 highest ranked sentences (the paper's NDCG@5, named
`nDCG@5` here as in every ragjudge retrieval figure), MRR of the highest ranked relevant sentence. Relevance is binary, so NDCG's gain is the label (linear and exponential gains
agree); AP divides by the number of relevant candidates; MRR has no cut-off. Every relevant sentence of a
dialogue is among its candidates, so these equal trec_eval's / ranx's figures on the same ranking (a test
scores our TREC runs with `ragjudge retrieval-eval` to show it). Written in numpy rather than through
ranx because tuning scores every grid setting of every dialogue: one array operation for all of them.
"""

from __future__ import annotations

import numpy as np

METRICS = ("MAP", "nDCG@5", "MRR")
"""Names of the means over dialogues; per dialogue they are AP, nDCG@5 and RR."""
NDCG_DEPTH = 5


def ranked_labels(labels: np.ndarray, rankings: np.ndarray) -> np.ndarray:
    """(settings, candidates) 0/1: the label of the candidate at each rank, best first."""
    return np.asarray(labels, dtype=np.float64)[np.asarray(rankings)]


def average_precision(rel: np.ndarray) -> np.ndarray:
    """Mean of precision@k over the ranks k of relevant candidates; one value per row of `rel`."""
    rel = np.atleast_2d(rel)
    ranks = np.arange(1, rel.shape[1] + 1)
    precision = np.cumsum(rel, axis=1) / ranks
    n_rel = rel.sum(axis=1)
    return np.divide((precision * rel).sum(axis=1), n_rel, out=np.zeros(len(rel)), where=n_rel > 0)


def ndcg_at(rel: np.ndarray, k: int = NDCG_DEPTH) -> np.ndarray:
    """DCG@k / ideal DCG@k with gain = label and discount 1/log2(rank + 1)."""
    rel = np.atleast_2d(rel)
    discounts = 1.0 / np.log2(np.arange(2, k + 2))
    top = rel[:, :k]
    dcg = (top * discounts[: top.shape[1]]).sum(axis=1)
    n_rel = rel.sum(axis=1).astype(int)
    ideal = np.concatenate([[0.0], np.cumsum(discounts)])[np.minimum(n_rel, k)]
    return np.divide(dcg, ideal, out=np.zeros(len(rel)), where=ideal > 0)


def reciprocal_rank(rel: np.ndarray) -> np.ndarray:
    """1 / rank of the first relevant candidate (0 when none is relevant)."""
    rel = np.atleast_2d(rel)
    hit = rel > 0
    first = hit.argmax(axis=1) + 1
    return np.where(hit.any(axis=1), 1.0 / first, 0.0)


def measure(labels: np.ndarray, rankings: np.ndarray) -> np.ndarray:
    """(settings, 3): AP, nDCG@5 and RR of each ranking (a permutation of candidate positions)."""
    rel = ranked_labels(labels, np.atleast_2d(rankings))
    return np.stack([average_precision(rel), ndcg_at(rel), reciprocal_rank(rel)], axis=1)

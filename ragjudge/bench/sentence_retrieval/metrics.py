"""AP, nDCG@5 and reciprocal rank of rankings of one dialogue's candidates, many rankings at once.

The paper's measures (Section 5.1.1). Relevance is binary, so linear and exponential gains agree; AP divides by the
relevant candidates; MRR has no cut-off. Every relevant sentence is a candidate, so these equal trec_eval's / ranx's
figures (a test checks it with `ragjudge retrieval-eval`). `ragjudge.metrics.ranking`'s array functions, not ranx,
because tuning scores every grid setting of every dialogue: one array operation for all.
"""

from __future__ import annotations

import numpy as np

from ragjudge.metrics.ranking import average_precision_rows, ndcg_rows, reciprocal_rank_rows

METRICS = ("MAP", "nDCG@5", "MRR")
"""Names of the means over dialogues; per dialogue they are AP, nDCG@5 and RR."""
NDCG_DEPTH = 5


def ranked_labels(labels: np.ndarray, rankings: np.ndarray) -> np.ndarray:
    """(settings, candidates) 0/1: the label of the candidate at each rank, best first."""
    return np.asarray(labels, dtype=np.float64)[np.asarray(rankings)]


def measure(labels: np.ndarray, rankings: np.ndarray) -> np.ndarray:
    """(settings, 3): AP, nDCG@5 and RR of each ranking (a permutation of candidate positions)."""
    rel = ranked_labels(labels, np.atleast_2d(rankings))
    return np.stack([average_precision_rows(rel), ndcg_rows(rel, NDCG_DEPTH), reciprocal_rank_rows(rel)], axis=1)

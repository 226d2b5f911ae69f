"""BM25 and the Dirichlet-smoothed unigram language model as rerankers of one dialogue's candidates.

Pure functions over small dense arrays: `tf` is (candidates, query terms), a whole parameter grid scored at once by
broadcasting. A query is a weighted mixture of term distributions, one per part (the paper's Eq. 2), and both scores
are linear in the parts. LM (Section 4.1): -CE(q || p_s^Dir) = sum_w q(w) log((tf(w,s) + mu p(w|C)) / (|s| + mu));
query words absent from the collection (p(w|C) = 0, every score -inf) are dropped, as Indri does, without
renormalising (keeps linearity, changes no ranking). BM25 (Okapi): sum_w q(w) idf(w) tf / (k1 (1 - b + b |s| / avg|s|)
+ tf), with bm25s's idf and tf (Lucene's by default); for one part this ranks as summing over the query's tokens.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ragjudge.bench.sentence_retrieval.text import PoolStats

def query_terms(parts: Sequence[tuple[float, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """(sorted term ids, weight of each) of sum_i w_i p_MLE(. | part_i); empty parts contribute nothing."""
    terms, weights = [], []
    for weight, ids in parts:
        if len(ids) == 0 or weight == 0:
            continue
        t, counts = np.unique(ids, return_counts=True)
        terms.append(t)
        weights.append(weight * counts / len(ids))
    if not terms:
        return np.zeros(0, dtype=np.int32), np.zeros(0)
    all_terms = np.concatenate(terms)
    unique, inverse = np.unique(all_terms, return_inverse=True)
    return unique.astype(np.int32), np.bincount(inverse, weights=np.concatenate(weights), minlength=len(unique))


def term_matrix(docs: Sequence[np.ndarray], terms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(tf: candidates x terms, length of each candidate) for sorted `terms`."""
    lengths = np.fromiter((len(d) for d in docs), dtype=np.float64, count=len(docs))
    tf = np.zeros((len(docs), len(terms)))
    if len(terms) == 0 or not len(docs):
        return tf, lengths
    ids = np.concatenate(docs)
    rows = np.repeat(np.arange(len(docs)), lengths.astype(np.int64))
    pos = np.searchsorted(terms, ids)
    hit = pos < len(terms)
    hit[hit] = terms[pos[hit]] == ids[hit]
    np.add.at(tf, (rows[hit], pos[hit]), 1.0)
    return tf, lengths


@dataclass(frozen=True)
class Collection:
    """What BM25 and the LM need to know about the collection, for the query's terms only."""

    n_docs: int
    avg_len: float
    df: np.ndarray
    p: np.ndarray
    """p(w|C): the term's share of all collection tokens."""


def dialogue_collection(tf: np.ndarray, lengths: np.ndarray) -> Collection:
    """Statistics of the dialogue's own candidates."""
    total = lengths.sum()
    return Collection(n_docs=len(lengths), avg_len=float(lengths.mean()) if len(lengths) else 0.0,
                      df=(tf > 0).sum(axis=0).astype(np.float64), p=tf.sum(axis=0) / total if total else tf.sum(0))


def pool_collection(pool: PoolStats, terms: np.ndarray) -> Collection:
    """Statistics of every distinct candidate of the loaded dialogues."""
    df, cf = pool.lookup(terms)
    return Collection(n_docs=pool.n_docs, avg_len=pool.avg_len, df=df,
                      p=cf / pool.total_len if pool.total_len else cf)


def idf(df: np.ndarray, n_docs: int, method: str = "lucene") -> np.ndarray:
    """bm25s's idf of each term; 0 for a term no document has (it matches nothing anyway)."""
    from bm25s.scoring import _select_idf_scorer

    scorer = _select_idf_scorer(method)
    return np.array([scorer(d, N=n_docs) if d > 0 else 0.0 for d in df.tolist()], dtype=np.float64)


def bm25_scores(tf: np.ndarray, lengths: np.ndarray, weights: np.ndarray, coll: Collection,
                k1: Sequence[float], b: Sequence[float], method: str = "lucene") -> np.ndarray:
    """(settings, candidates): BM25 for each (k1[i], b[i]) pair."""
    from bm25s.scoring import _select_tfc_scorer

    k1_ = np.asarray(k1, dtype=np.float64)[:, None, None]
    b_ = np.asarray(b, dtype=np.float64)[:, None, None]
    if tf.shape[1] == 0 or coll.avg_len == 0:
        return np.zeros((len(k1_), tf.shape[0]))
    tfc = _select_tfc_scorer(method)(tf_array=tf[None], l_d=lengths[None, :, None], l_avg=coll.avg_len, k1=k1_, b=b_)
    return tfc @ (weights * idf(coll.df, coll.n_docs, method))


def lm_scores(tf: np.ndarray, lengths: np.ndarray, weights: np.ndarray, coll: Collection,
              mu: Sequence[float]) -> np.ndarray:
    """(settings, candidates): -CE(query || Dirichlet-smoothed candidate model) for each mu."""
    mu_ = np.asarray(mu, dtype=np.float64)
    keep = coll.p > 0
    tf, p, w = tf[:, keep], coll.p[keep], weights[keep]
    if len(w) == 0:
        return np.zeros((len(mu_), len(lengths)))
    smoothed = np.log(tf[None] + mu_[:, None, None] * p[None, None, :])
    return smoothed @ w - w.sum() * np.log(lengths[None, :] + mu_[:, None])


def rank_order(scores: np.ndarray) -> np.ndarray:
    """Candidate positions best first, per row; equal scores keep the initial ranker's order."""
    return np.argsort(-np.atleast_2d(scores), axis=1, kind="stable")

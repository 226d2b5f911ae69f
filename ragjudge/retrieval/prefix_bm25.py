"""BM25 over a growing collection: tokenise once, search any prefix exactly.

A question asked at memory item n may see only the items before it (plus, say, the current session so far);
rebuilding an index per utterance, as DialSim's official simulator does, costs O(n^2) tokenising. Here the collection
is tokenised once into postings, and a search computes document frequencies, average length and scores for exactly
the sub-collection: equal to a `bm25` index over just those items (same tokenizer options and bm25s's formulas;
tests/test_prefix_bm25.py checks against bm25s).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from ragjudge.errors import UsageError
from ragjudge.retrieval.bm25 import BM25Retriever, Vocabulary

Hit = tuple[int, float]
"""(row, score): rows >= n are the extra texts, in the order given."""


class PrefixBM25:
    def __init__(self, options: dict[str, Any] | None = None, *, source: str | None = None):
        reference = BM25Retriever(options, source=source)  # validates the options and the stemmer
        self.options = reference.options
        if self.options.method not in ("lucene", "robertson", "atire"):
            raise UsageError(f"bm25 method {self.options.method!r} scores documents that lack a query term, which "
                             "prefix search does not support: use lucene, robertson or atire")
        from bm25s.scoring import _select_idf_scorer, _select_tfc_scorer

        self._idf = _select_idf_scorer(self.options.method)
        self._tfc = _select_tfc_scorer(self.options.method)
        tokenizer = reference._new_tokenizer()
        self._split, self._lower = tokenizer.splitter, tokenizer.lower
        self._ids = Vocabulary(tokenizer)  # word -> term id, as the bm25 index tokenises (stop words -1, stemmed)
        self._indptr = np.zeros(1, dtype=np.int64)
        self._rows = np.zeros(0, dtype=np.int64)
        self._tf = np.zeros(0, dtype=np.float32)
        self._lengths = np.zeros(0, dtype=np.float64)
        self._cum_lengths = np.zeros(1, dtype=np.float64)

    def __len__(self) -> int:
        return len(self._lengths)

    def terms(self, text: str) -> list[int]:
        """The ids of a text's indexed terms (stop words out, stemmed)."""
        return [t for t in map(self._ids.__getitem__, self._split(text.lower() if self._lower else text)) if t >= 0]

    def index(self, texts: Sequence[str]) -> None:
        """Tokenise the whole collection once; rows are texts in order."""
        rows: list[int] = []
        cols: list[int] = []
        freqs: list[int] = []
        lengths = np.zeros(len(texts), dtype=np.float64)
        for row, text in enumerate(texts):
            counts = Counter(self.terms(text))
            lengths[row] = max(sum(counts.values()), 1)  # bm25s gives an empty document one (empty) token
            for term, tf in counts.items():
                rows.append(row)
                cols.append(term)
                freqs.append(tf)
        col_arr = np.asarray(cols, dtype=np.int64)
        order = np.lexsort((np.asarray(rows, dtype=np.int64), col_arr))  # by term, then row
        self._rows = np.asarray(rows, dtype=np.int64)[order]
        self._tf = np.asarray(freqs, dtype=np.float32)[order]
        self._indptr = np.concatenate([[0], np.cumsum(np.bincount(col_arr))]).astype(np.int64)
        self._lengths = lengths
        self._cum_lengths = np.concatenate([[0.0], np.cumsum(lengths)])

    def search(self, query: str, n: int, k: int, extras: Sequence[str] = ()) -> list[Hit]:
        """Top-k of the sub-collection (rows 0..n-1, then `extras`) by BM25, best first; ties: lower row
        first; documents sharing no term with the query are not returned."""
        if not 0 <= n <= len(self):
            raise ValueError(f"prefix {n} is outside the collection of {len(self)} texts")
        total = n + len(extras)
        if total == 0 or k < 1:
            return []
        extra_counts = [Counter(self.terms(t)) for t in extras]
        extra_lengths = np.asarray([max(sum(c.values()), 1) for c in extra_counts], dtype=np.float64)
        avg = (self._cum_lengths[n] + extra_lengths.sum()) / total
        k1, b = self.options.k1, self.options.b
        scores = np.zeros(total, dtype=np.float64)
        for term in self.terms(query):  # a repeated query term counts again, as in bm25s
            rows = tfs = None
            df = 0
            if term < len(self._indptr) - 1:  # a term of the collection (its postings may be empty)
                start, end = self._indptr[term], self._indptr[term + 1]
                stop = start + int(np.searchsorted(self._rows[start:end], n))
                rows, tfs = self._rows[start:stop], self._tf[start:stop]
                df = len(rows)
            in_extras = [j for j, c in enumerate(extra_counts) if term in c]
            df += len(in_extras)
            if df == 0:
                continue
            idf = self._idf(df, N=total)
            if rows is not None and len(rows):
                scores[rows] += idf * self._tfc(tf_array=tfs.astype(np.float32), l_d=self._lengths[rows].astype(
                    np.float32), l_avg=np.float32(avg), k1=k1, b=b)
            for j in in_extras:
                tf = np.float32(extra_counts[j][term])
                scores[n + j] += idf * float(self._tfc(tf_array=tf, l_d=np.float32(extra_lengths[j]),
                                                       l_avg=np.float32(avg), k1=k1, b=b))
        hits = np.flatnonzero(scores > 0)
        best = hits[np.lexsort((hits, -scores[hits]))][:k]
        return [(int(r), float(scores[r])) for r in best]

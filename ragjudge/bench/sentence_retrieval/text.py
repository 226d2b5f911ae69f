"""Words for the lexical rerankers: tokens, stop words, stems, and the collection statistics they score with.

Tokens and stems are the `bm25` retriever's, so a reranker and a retriever see the same words (how they differ from
the paper's: docs/benches/sentence-retrieval.md, Systems). Each stem is an integer id; texts are int32 arrays. Stop
words are dropped from the dialogue only, as the paper does: a candidate keeps its own, which count in its length.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any, Literal

import numpy as np

from ragjudge.retrieval import bm25

WORDS = re.compile(bm25.WORDS)


def _stopword_list(stopwords: Literal["en", "none"] | list[str]) -> set[str]:
    if stopwords == "none":
        return set()
    if stopwords == "en":
        from bm25s.stopwords import STOPWORDS_EN

        return set(STOPWORDS_EN)
    return {w.lower() for w in stopwords}


class _WordIds(dict):
    """word -> term id; an unseen word is stemmed and numbered on first lookup (`__missing__`), so the
    lookups of known words, nearly all of them, run in C through `map(ids.__getitem__, words)`."""

    def __init__(self, analyzer: Analyzer):
        super().__init__()
        self.analyzer = analyzer

    def __missing__(self, word: str) -> int:
        a = self.analyzer
        stop = word in a._stop
        term = ("\x00" + word) if stop else (a._stem.stemWord(word) if a._stem else word)
        tid = a._term_ids.get(term)
        if tid is None:
            tid = a._term_ids[term] = len(a._term_ids)
            a._stop_flags.append(stop)
        self[word] = tid
        return tid


class Analyzer:
    """Text -> term ids. Stop words get ids too (flagged in `is_stop`), so one pass serves queries (which
    drop them) and candidates (which may keep them)."""

    def __init__(self, stemmer: str | None = "english", stopwords: Literal["en", "none"] | list[str] = "en"):
        self._stem = bm25._stemmer(stemmer)
        self._stop = _stopword_list(stopwords)
        self._word_ids = _WordIds(self)
        self._term_ids: dict[str, int] = {}
        self._stop_flags: list[bool] = []
        self._stop_array = np.zeros(0, dtype=bool)

    @property
    def n_terms(self) -> int:
        return len(self._term_ids)

    @property
    def is_stop(self) -> np.ndarray:
        """Whether each term id is a stop word (rebuilt only when the vocabulary has grown)."""
        if len(self._stop_array) != len(self._stop_flags):
            self._stop_array = np.asarray(self._stop_flags, dtype=bool)
        return self._stop_array

    def ids(self, text: str, *, drop_stopwords: bool = True) -> np.ndarray:
        return self.many([text], drop_stopwords=drop_stopwords)[0]

    def many(self, texts: Sequence[str], *, drop_stopwords: bool) -> list[np.ndarray]:
        """Every text at once: one C-level lookup over all words, one stop-word mask, then split per text."""
        found = [WORDS.findall(t.lower()) for t in texts]
        counts = np.fromiter(map(len, found), dtype=np.int64, count=len(found))
        ids = np.fromiter(map(self._word_ids.__getitem__, chain.from_iterable(found)), dtype=np.int32,
                          count=int(counts.sum()))
        if drop_stopwords and len(ids):
            keep = ~self.is_stop[ids]
            rows = np.repeat(np.arange(len(texts)), counts)
            ids = ids[keep]
            counts = np.bincount(rows[keep], minlength=len(texts))
        return np.split(ids, np.cumsum(counts)[:-1]) if len(texts) else []


@dataclass
class PoolStats:
    """Statistics of a sentence collection, indexed by term id (ids beyond the arrays have count 0)."""

    n_docs: int
    avg_len: float
    total_len: int
    df: np.ndarray
    cf: np.ndarray
    digest: str = ""

    def lookup(self, terms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(document frequency, collection frequency) of each term."""
        inside = terms < len(self.df)
        df = np.zeros(len(terms), dtype=np.float64)
        cf = np.zeros(len(terms), dtype=np.float64)
        df[inside] = self.df[terms[inside]]
        cf[inside] = self.cf[terms[inside]]
        return df, cf


def pool_stats(token_arrays: Sequence[np.ndarray], n_terms: int, digest: str = "") -> PoolStats:
    """df, cf and lengths over the given sentences (each counted once)."""
    lengths = np.fromiter((len(t) for t in token_arrays), dtype=np.int64, count=len(token_arrays))
    ids = np.concatenate(token_arrays) if token_arrays else np.zeros(0, dtype=np.int32)
    rows = np.repeat(np.arange(len(token_arrays)), lengths)
    cf = np.bincount(ids, minlength=n_terms).astype(np.float64)
    pairs = np.unique(rows.astype(np.int64) * max(n_terms, 1) + ids)
    df = np.bincount(pairs % max(n_terms, 1), minlength=n_terms).astype(np.float64)
    n = len(token_arrays)
    return PoolStats(n_docs=n, avg_len=float(lengths.mean()) if n else 0.0, total_len=int(lengths.sum()),
                     df=df, cf=cf, digest=digest)


class CandidateTokens:
    """Every scored dialogue's candidates as term ids, and the pool statistics over them. The digest of the
    pool (its candidates' ids and texts) is known at once, for fingerprints; the tokenising waits until a
    dialogue is actually ranked, so a resumed run whose rankings are all journaled tokenises nothing."""

    def __init__(self, dialogues: Sequence[Any], analyzer: Analyzer, *, keep_stopwords: bool, with_title: bool):
        self.analyzer = analyzer
        self.keep_stopwords = keep_stopwords
        self.with_title = with_title
        self._dialogues = list(dialogues)
        digest = hashlib.sha256(f"{keep_stopwords}/{with_title}".encode())
        seen: set[str] = set()
        for d in self._dialogues:
            for c in d.candidates:
                if c.id not in seen:
                    seen.add(c.id)
                    digest.update(f"{c.id}\x00{candidate_text(c, with_title)}\x01".encode())
        self.digest = digest.hexdigest()[:16]
        self._by_dialogue: dict[str, list[np.ndarray]] | None = None
        self._pool: PoolStats | None = None

    def _analyse(self) -> None:
        texts = [candidate_text(c, self.with_title) for d in self._dialogues for c in d.candidates]
        arrays = self.analyzer.many(texts, drop_stopwords=not self.keep_stopwords)
        by_dialogue, unique, start = {}, {}, 0
        for d in self._dialogues:
            by_dialogue[d.id] = arrays[start:start + len(d.candidates)]
            for c, arr in zip(d.candidates, by_dialogue[d.id], strict=True):
                unique.setdefault(c.id, arr)
            start += len(d.candidates)
        self._by_dialogue = by_dialogue
        self._pool = pool_stats(list(unique.values()), self.analyzer.n_terms, self.digest)

    def of(self, dialogue_id: str) -> list[np.ndarray]:
        if self._by_dialogue is None:
            self._analyse()
        assert self._by_dialogue is not None
        return self._by_dialogue[dialogue_id]

    @property
    def pool(self) -> PoolStats:
        """Statistics over every distinct candidate (by id) of the scored dialogues."""
        if self._pool is None:
            self._analyse()
        assert self._pool is not None
        return self._pool


def candidate_text(candidate: Any, with_title: bool) -> str:
    return f"{candidate.title}\n{candidate.body}" if with_title and candidate.title else candidate.body

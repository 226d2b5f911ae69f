"""Words for the lexical rerankers: tokens, stop words, stems, and the collection statistics they score with.

Tokenisation is the `bm25` retriever's (bm25s's splitter: runs of two or more word characters, lowercased;
bm25s's English stop words; Snowball stemming through PyStemmer), so a reranker and a retriever see the
same words. Each word is stemmed once and mapped to an integer id; texts become int32 arrays.

The paper removes stop words from the dialogue only, not from sentences ("stopword removal only for
dialogues"): by default a candidate keeps its stop words, which count in its length (BM25's |d|, the
LM's |s|), while queries drop theirs. The paper stems with Krovetz, which has no maintained Python
package; Snowball is the documented difference.

Collection statistics (document frequency, collection term frequency, average length) come either from
the candidate pool (every distinct candidate sentence of the loaded dialogues, by id) or from the 50
candidates of each dialogue; the paper's own statistics are those of its Wikipedia sentence index, which
is not public.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from ragjudge.errors import UsageError

WORDS = re.compile(r"\w\w+")


def _stopword_list(stopwords: Literal["en", "none"] | list[str]) -> set[str]:
    if stopwords == "none":
        return set()
    if stopwords == "en":
        from bm25s.stopwords import STOPWORDS_EN

        return set(STOPWORDS_EN)
    return {w.lower() for w in stopwords}


def _stemmer(language: str | None) -> Any:
    if language is None:
        return None
    import Stemmer

    try:
        return Stemmer.Stemmer(language)
    except KeyError:
        raise UsageError(f"unknown stemmer language {language!r} (available: {', '.join(Stemmer.algorithms())})"
                         ) from None


class Analyzer:
    """Text -> term ids. Stop words get ids too (flagged in `is_stop`), so one pass serves queries (which
    drop them) and candidates (which may keep them)."""

    def __init__(self, stemmer: str | None = "english", stopwords: Literal["en", "none"] | list[str] = "en"):
        self._stem = _stemmer(stemmer)
        self._stop = _stopword_list(stopwords)
        self._word_ids: dict[str, int] = {}
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

    def _word_id(self, word: str) -> int:
        found = self._word_ids.get(word)
        if found is not None:
            return found
        stop = word in self._stop
        term = ("\x00" + word) if stop else (self._stem.stemWord(word) if self._stem else word)
        tid = self._term_ids.get(term)
        if tid is None:
            tid = self._term_ids[term] = len(self._term_ids)
            self._stop_flags.append(stop)
        self._word_ids[word] = tid
        return tid

    def ids(self, text: str, *, drop_stopwords: bool = True) -> np.ndarray:
        words = WORDS.findall(text.lower())
        ids = np.fromiter(map(self._word_id, words), dtype=np.int32, count=len(words))
        if drop_stopwords and len(ids):
            ids = ids[~self.is_stop[ids]]
        return ids

    def many(self, texts: Sequence[str], *, drop_stopwords: bool) -> list[np.ndarray]:
        words = [WORDS.findall(t.lower()) for t in texts]
        out = [np.fromiter(map(self._word_id, w), dtype=np.int32, count=len(w)) for w in words]
        if drop_stopwords:
            stop = self.is_stop
            out = [ids[~stop[ids]] if len(ids) else ids for ids in out]
        return out


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


@dataclass
class CandidateTokens:
    """Every loaded dialogue's candidates as term ids, analysed once; and the pool statistics over them."""

    analyzer: Analyzer
    by_dialogue: dict[str, list[np.ndarray]] = field(default_factory=dict)
    pool: PoolStats | None = None


def analyse_candidates(dialogues: Sequence[Any], analyzer: Analyzer, *, keep_stopwords: bool,
                       with_title: bool) -> CandidateTokens:
    """Tokenise every candidate once; pool statistics count each distinct candidate id once."""
    out = CandidateTokens(analyzer)
    unique: dict[str, np.ndarray] = {}
    digest = hashlib.sha256()
    for d in dialogues:
        texts = [candidate_text(c, with_title) for c in d.candidates]
        arrays = analyzer.many(texts, drop_stopwords=not keep_stopwords)
        out.by_dialogue[d.id] = arrays
        for cand, text, arr in zip(d.candidates, texts, arrays, strict=True):
            if cand.id not in unique:
                unique[cand.id] = arr
                digest.update(f"{cand.id}\x00{text}\x01".encode())
    out.pool = pool_stats(list(unique.values()), analyzer.n_terms, digest.hexdigest()[:16])
    return out


def candidate_text(candidate: Any, with_title: bool) -> str:
    return f"{candidate.title}\n{candidate.body}" if with_title and candidate.title else candidate.body

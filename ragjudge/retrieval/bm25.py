"""`bm25`: embedded, in-process BM25 on bm25s, persisted on disk. Why bm25s, and its defaults (Lucene's, the MTRAG
baseline's): docs/pipelines.md. bm25s also saves numpy files that load memory-mapped and needs only numpy/scipy
(numba optional); stemming raises clapnq Recall@10 by about 3 points on the MTRAG pools.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from itertools import chain
from pathlib import Path
from typing import Any, Literal

import numpy as np

from ragjudge.errors import UsageError
from ragjudge.models import Passage
from ragjudge.progress import ProgressBars
from ragjudge.retrieval.base import PassageStore, Retriever, RetrieverOptions, StaleIndex, index_text


# bm25s's default splitter is `(?u)\b\w\w+\b`. With findall both patterns match exactly the runs of two
# or more word characters (a greedy run always ends at a word boundary); this one is about 25% faster.
WORDS = r"\w\w+"


class BM25Options(RetrieverOptions):
    k1: float = 1.2
    b: float = 0.75
    method: Literal["lucene", "robertson", "atire", "bm25l", "bm25+"] = "lucene"
    stopwords: Literal["en", "none"] | list[str] = "en"
    stemmer: str | None = "english"
    """A Snowball language for PyStemmer (english, french, ...), or null for no stemming."""
    title: bool = True
    """Index the title with the text (skipped when the text already starts with it, as in MTRAG)."""
    backend: Literal["numpy", "numba", "auto"] = "numpy"
    threads: int = 0
    """Threads for scoring query batches (0: in the calling thread)."""


def _stemmer(language: str | None) -> Any:
    if language is None:
        return None
    try:
        import Stemmer
    except ImportError:
        raise UsageError(f"bm25 stemmer {language!r} needs PyStemmer (pip install PyStemmer), "
                         f"or set stemmer: null in the pipeline spec") from None
    try:
        return Stemmer.Stemmer(language)
    except KeyError:
        raise UsageError(f"unknown stemmer language {language!r} "
                         f"(available: {', '.join(Stemmer.algorithms())})") from None


class BM25Retriever(Retriever):
    kind = "bm25"
    Options = BM25Options
    options: BM25Options

    def __init__(self, options: dict[str, Any] | None = None, *, source: str | None = None):
        super().__init__(options, source=source)
        self._stem = _stemmer(self.options.stemmer)  # fail on a bad stemmer before indexing anything
        self._tokenizer: Any = None
        self._bm25: Any = None
        self.store = PassageStore()

    def _new_tokenizer(self) -> Any:
        from bm25s.tokenization import Tokenizer

        stopwords = [] if self.options.stopwords == "none" else self.options.stopwords
        return Tokenizer(lower=True, splitter=WORDS, stopwords=stopwords, stemmer=self._stem)

    def _new_engine(self) -> Any:
        import bm25s

        return bm25s.BM25(k1=self.options.k1, b=self.options.b, method=self.options.method,
                          backend=self.options.backend)

    def index(self, passages: Sequence[Passage], bars: ProgressBars | None = None) -> None:
        tokenizer = self._new_tokenizer()
        engine = self._new_engine()
        advance = bars.bar("bm25 index", total=len(passages)) if bars else None
        texts = [index_text(p, self.options.title) for p in passages]
        if self.options.method in ("bm25l", "bm25+"):  # need bm25s's non-occurrence arrays: library path
            engine.index(tokenizer.tokenize(texts, return_as="tuple", show_progress=False), show_progress=False)
            if advance:
                advance(len(texts))
        else:
            token_ids, doc_ids, lengths = tokenize_corpus(tokenizer, texts, advance)
            build_index(engine, tokenizer.get_vocab_dict(), token_ids, doc_ids, lengths)
        self._tokenizer, self._bm25, self.store = tokenizer, engine, PassageStore(passages)

    def save(self, folder: Path) -> None:
        self._require_index()
        engine_dir = str(folder / "bm25s")
        self._bm25.save(engine_dir, show_progress=False)
        self._tokenizer.save_vocab(engine_dir)
        self._tokenizer.save_stopwords(engine_dir)
        self.store.save(folder)

    def load(self, folder: Path) -> None:
        import bm25s

        engine_dir = folder / "bm25s"
        if not (engine_dir / "params.index.json").exists():
            raise StaleIndex(f"{engine_dir} has no bm25s index")
        try:
            engine = bm25s.BM25.load(str(engine_dir), mmap=True, show_progress=False,
                                     override_params={"backend": self.options.backend})
            tokenizer = self._new_tokenizer()
            tokenizer.load_vocab(str(engine_dir))
            tokenizer.load_stopwords(str(engine_dir))
        except (OSError, ValueError, KeyError, json.JSONDecodeError) as exc:
            raise StaleIndex(f"{engine_dir}: {exc}") from None
        self.store = PassageStore.load(folder)
        self._tokenizer, self._bm25 = tokenizer, engine

    def _require_index(self) -> None:
        if self._bm25 is None:
            raise UsageError("the bm25 retriever has no index: call index() or load() first")

    def _search_many(self, queries: list[str], k: int) -> list[list[Passage]]:
        self._require_index()
        k = min(k, len(self.store))
        query_ids = self._tokenizer.tokenize(queries, update_vocab=False, return_as="ids", show_progress=False)
        rows, scores = self._bm25.retrieve(query_ids, k=k, show_progress=False, n_threads=self.options.threads)
        # bm25s pads with zero-score passages when fewer than k share a term: those are not matches.
        return [[self.store.hit(r, s) for r, s in zip(row_list, score_list) if s > 0]
                for row_list, score_list in zip(rows.tolist(), scores.tolist(), strict=True)]


# -- fast indexing: bm25s loops in Python per word and per document (2-3x its search time for 1,000 queries over
# 200k passages). These give exactly its `Tokenizer.tokenize` + `BM25.index` output (tests/test_retrieval_bm25.py
# checks), with the word lookups in C (`map`) and the matrix by array operations; the rest stays bm25s's.

class Vocabulary(dict):
    """word -> token id (-1 for a stop word); a new word gets its id on first lookup, which is what lets
    one C-level `map` over all words both assign ids in order of first use and look them up."""

    def __init__(self, tokenizer: Any):
        super().__init__()
        self.stop = set(tokenizer.stopwords or ())
        self.stemmer = tokenizer.stemmer
        self.word_to_id, self.word_to_stem, self.stem_to_sid = (tokenizer.word_to_id, tokenizer.word_to_stem,
                                                                tokenizer.stem_to_sid)

    def __missing__(self, word: str) -> int:
        if word in self.stop:
            token = -1
        elif self.stemmer is None:
            token = self.word_to_id[word] = len(self.word_to_id)
        else:
            stem = self.word_to_stem[word] = self.stemmer(word)
            token = self.stem_to_sid.get(stem, -1)
            if token < 0:
                token = self.stem_to_sid[stem] = len(self.stem_to_sid)
            self.word_to_id[word] = token
        self[word] = token
        return token


def tokenize_corpus(tokenizer: Any, texts: Sequence[str], advance: Callable[[int], None] | None = None,
                    chunk: int = 8192) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(token ids, document row of each token, tokens per document) for a fresh bm25s Tokenizer,
    filling its vocabulary as `tokenize(texts, update_vocab=True)` would (ids in order of first use)."""
    if tokenizer.word_to_id:
        raise ValueError("tokenize_corpus needs a tokenizer with an empty vocabulary")
    tokenizer.word_to_id[""] = 0  # bm25s's empty token: documents without any indexable word get it
    if tokenizer.stemmer is not None:
        tokenizer.word_to_stem[""] = ""
        tokenizer.stem_to_sid[""] = 0
    vocabulary = Vocabulary(tokenizer)
    split = tokenizer.splitter
    ids_parts, doc_parts, lengths = [], [], np.zeros(len(texts), dtype=np.int64)
    for start in range(0, len(texts), chunk):
        block = texts[start : start + chunk]
        found = list(map(split, map(str.lower, block) if tokenizer.lower else block))
        counts = np.fromiter(map(len, found), dtype=np.int64, count=len(found))
        words = list(chain.from_iterable(found))
        ids = np.fromiter(map(vocabulary.__getitem__, words), dtype=np.int32, count=len(words))
        rows = np.repeat(np.arange(start, start + len(block), dtype=np.int32), counts)
        keep = ids >= 0
        ids, rows = ids[keep], rows[keep]
        kept = np.bincount(rows - start, minlength=len(block))
        empty = np.flatnonzero(kept == 0).astype(np.int32) + start
        ids_parts += [ids, np.zeros(len(empty), dtype=np.int32)]
        doc_parts += [rows, empty]
        lengths[start : start + len(block)] = np.maximum(kept, 1)
        if advance:
            advance(len(block))
    return np.concatenate(ids_parts), np.concatenate(doc_parts), lengths


def build_index(engine: Any, vocab: dict[str, int], token_ids: np.ndarray, doc_ids: np.ndarray,
                lengths: np.ndarray) -> None:
    """Fill `engine` (a bm25s.BM25) as `engine.index((ids, vocab))` would, with array operations."""
    from bm25s.scoring import _select_idf_scorer, _select_tfc_scorer

    n_docs, n_vocab = len(lengths), len(vocab)
    keys = doc_ids.astype(np.int64) * n_vocab + token_ids
    pairs, tf = np.unique(keys, return_counts=True)  # sorted by document, then token
    rows = (pairs // n_vocab).astype(engine.int_dtype)
    cols = (pairs % n_vocab).astype(engine.int_dtype)
    df = np.bincount(cols, minlength=n_vocab)
    idf_of = _select_idf_scorer(engine.idf_method)
    idf = np.zeros(n_vocab, dtype=engine.dtype)
    present = np.flatnonzero(df)
    idf[present] = [idf_of(int(d), N=n_docs) for d in df[present]]
    tfc = _select_tfc_scorer(engine.method)(tf_array=tf.astype(engine.dtype), l_d=lengths[rows],
                                            l_avg=lengths.mean(), k1=engine.k1, b=engine.b, delta=engine.delta)
    scores = (idf[cols] * tfc).astype(engine.dtype)
    data, indices, indptr = engine._np_csc(data=scores, rows=rows, cols=cols, shape=(n_docs, n_vocab))
    engine.scores = {"data": data.astype(engine.dtype), "indices": indices, "indptr": indptr, "num_docs": n_docs}
    engine.nonoccurrence_array = None
    engine.vocab_dict = dict(vocab)
    engine.unique_token_ids_set = set(engine.vocab_dict.values())


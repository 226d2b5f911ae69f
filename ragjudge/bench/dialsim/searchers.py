"""Search over a prefix of a memory (items heard before the question) plus a few extra texts: `bm25` through
`ragjudge.retrieval.prefix_bm25`, `dense` through a pipeline (any of its encoders; vectors kept in the index folder,
a prefix a slice of the matrix, extra texts encoded on the fly).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ragjudge.errors import UsageError
from ragjudge.formats.files import atomic_output
from ragjudge.progress import ProgressBars
from ragjudge.retrieval.prefix_bm25 import Hit, PrefixBM25
from ragjudge.retrieval.spec import PipelineSpec, load_pipeline

SUPPORTED = ("bm25", "dense")


class PrefixSearcher(Protocol):
    def index(self, texts: Sequence[str], bars: ProgressBars | None = None) -> None: ...

    def search(self, query: str, n: int, k: int, extras: Sequence[str] = ()) -> list[Hit]: ...


class BM25Searcher:
    def __init__(self, spec: PipelineSpec):
        self.engine = PrefixBM25(spec.retriever.options, source=spec.source)

    def index(self, texts: Sequence[str], bars: ProgressBars | None = None) -> None:
        self.engine.index(texts)

    def search(self, query: str, n: int, k: int, extras: Sequence[str] = ()) -> list[Hit]:
        return self.engine.search(query, n, k, extras)


class DenseSearcher:
    def __init__(self, spec: PipelineSpec, index_dir: Path | None, extra_dirs: list[str]):
        from ragjudge.retrieval.pipeline import Pipeline

        self.pipeline = Pipeline(spec, extra_dirs=list(extra_dirs), index_dir=index_dir)
        self.retriever: Any = self.pipeline.retriever

    def index(self, texts: Sequence[str], bars: ProgressBars | None = None) -> None:
        """Write the items as a corpus file named by its content and let the pipeline index it (or load the
        index a previous run built over the same items with the same encoder)."""
        lines = "".join(json.dumps({"_id": str(i), "text": t}, ensure_ascii=False) + "\n" for i, t in enumerate(texts))
        digest = hashlib.sha256(lines.encode()).hexdigest()[:24]
        corpus = self.pipeline.index_dir / "dialsim-memory" / f"{digest}.jsonl"
        if not corpus.exists():
            with atomic_output(corpus) as tmp:
                tmp.write_text(lines, encoding="utf-8")
        if texts:
            self.pipeline.open(corpus, bars)
        self.retriever.encode_queries(["warm-up"])  # load the model now, not inside the first answer's latency

    def search(self, query: str, n: int, k: int, extras: Sequence[str] = ()) -> list[Hit]:
        from ragjudge.retrieval.dense import top_k

        vector = self.retriever.encode_queries([query])
        hits: list[Hit] = top_k(vector, self.retriever.matrix[:n], k)[0] if n else []
        if extras:
            prefix = self.retriever.options.passage_prefix
            extra = self.retriever.encoder.encode([prefix + t for t in extras]) @ vector[0]
            hits += [(n + j, float(s)) for j, s in enumerate(np.asarray(extra).tolist())]
        return sorted(hits, key=lambda h: (-h[1], h[0]))[:k]

    def describe(self) -> dict[str, Any]:
        return self.pipeline.record()

    def close(self) -> None:
        self.pipeline.close()


def retriever_spec(name: str, extra_dirs: list[str]) -> PipelineSpec:
    spec = load_pipeline(name, extra_dirs)
    if spec.retriever.name not in SUPPORTED:
        raise UsageError(f"-T retriever={name}: its retriever is {spec.retriever.name}; DialSim memories search with "
                         f"{' or '.join(SUPPORTED)} (a pipeline spec such as bm25, dense, bge, or your own YAML)")
    return spec


def build_searcher(spec: PipelineSpec, index_dir: Path | None, extra_dirs: list[str]) -> PrefixSearcher:
    if spec.retriever.name == "bm25":
        return BM25Searcher(spec)
    return DenseSearcher(spec, index_dir, extra_dirs)

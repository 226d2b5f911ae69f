"""`dense`: embed passages once, keep the matrix on disk (`embeddings.npy`, memory-mapped), score queries by dot
product (cosine). Exact search: up to a few hundred thousand passages a matrix product is fast enough and loses no
recall; beyond that, the `elasticsearch` retriever's knn mode.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import Field

from ragjudge.embeddings.device import Device
from ragjudge.errors import UsageError
from ragjudge.models import Passage
from ragjudge.progress import ProgressBars
from ragjudge.retrieval.base import PassageStore, Retriever, RetrieverOptions, StaleIndex, index_text
from ragjudge.retrieval.encoders import LiteLLMEncoder, SentenceTransformerEncoder


class EncoderOptions(RetrieverOptions):
    encoder: Literal["sentence-transformers", "litellm"] = "sentence-transformers"
    model: str = "minilm"
    """`minilm` (bundled, offline), a sentence-transformers model name or folder (BAAI/bge-base-en-v1.5),
    or with encoder=litellm a litellm embedding model (openai/text-embedding-3-small)."""
    query_prefix: str = ""
    """Instruction put before each query (BGE: "Represent this sentence for searching relevant passages: ")."""
    passage_prefix: str = ""
    batch_size: int | None = Field(None, ge=1)
    """Texts per model call or API request; not given: 32 on the CPU and for an API, 512 on a GPU."""
    max_seq_length: int | None = None
    normalize: bool = True
    device: Device = "auto"
    """Where a local model runs: `auto` (CUDA, else Apple MPS, else CPU), `cpu`, `cuda`, `cuda:N` or `mps`."""
    backend: Literal["auto", "torch", "onnx"] = "auto"
    """What runs a local model: `onnx` (ONNX Runtime on the CPU, `pip install 'ragjudge[onnx]'`), `torch`, or `auto`:
    ONNX Runtime when it is installed and the model runs on the CPU, else PyTorch."""
    precision: Literal["auto", "fp32", "tf32", "bf16x3", "fp16", "int8"] = "auto"
    """What a local model computes in: `auto` (bf16x3 on a CUDA GPU that runs it as one matmul, else fp32), `fp32`,
    `bf16x3` (float32 with each matmul as three bfloat16 products: fp32's rankings, faster), `tf32` (float32 with
    TF32 matmuls: faster still, some rankings change), both on a CUDA GPU of compute capability 8.0 or newer, `fp16`
    (a GPU) or `int8` (ONNX Runtime's dynamic quantisation on the CPU: faster, cosine to fp32 ~0.99; opt-in)."""
    api_base: str | None = None
    api_key_env: str | None = None
    dimensions: int | None = None
    concurrency: int = 4


def build_encoder(options: EncoderOptions) -> SentenceTransformerEncoder | LiteLLMEncoder:
    if options.encoder == "litellm":
        return LiteLLMEncoder(options.model, api_base=options.api_base, api_key_env=options.api_key_env,
                              dimensions=options.dimensions, batch_size=options.batch_size or 32,
                              concurrency=options.concurrency, normalize=options.normalize)
    return SentenceTransformerEncoder(options.model, batch_size=options.batch_size,
                                      max_seq_length=options.max_seq_length, device=options.device,
                                      normalize=options.normalize, backend=options.backend,
                                      precision=options.precision)


def encoder_identity(options: EncoderOptions) -> dict[str, Any]:
    """What changes the vectors (not batch size, device, concurrency or where the API lives)."""
    return options.model_dump(mode="json", include={"encoder", "model", "query_prefix", "passage_prefix",
                                                     "max_seq_length", "normalize", "dimensions"})


def encoder_facts(encoder: SentenceTransformerEncoder | LiteLLMEncoder) -> dict[str, Any]:
    """What a run records of how it encoded: the device and backend of a local model (`auto` resolved)."""
    if not isinstance(encoder, SentenceTransformerEncoder):
        return {}
    return {"device": encoder.device, "backend": encoder.backend, "precision": encoder.precision}


class DenseOptions(EncoderOptions):
    title: bool = True
    query_batch: int = 64
    """Queries scored per matrix product (bounds memory: query_batch x passages floats)."""


class DenseRetriever(Retriever):
    kind = "dense"
    Options = DenseOptions
    options: DenseOptions

    def __init__(self, options: dict[str, Any] | None = None, *, source: str | None = None):
        super().__init__(options, source=source)
        self.encoder = build_encoder(self.options)
        self.matrix: np.ndarray | None = None
        self.vectors_from_store: int | None = None
        self.store = PassageStore()

    def identity(self) -> dict[str, Any]:
        # ONNX Runtime's, fp16 and int8 vectors are other indexes: never mixed with PyTorch's fp32 ones
        kind = self.encoder.vector_kind() if isinstance(self.encoder, SentenceTransformerEncoder) else {}
        return {"retriever": self.kind, "options": {**encoder_identity(self.options), "title": self.options.title,
                                                    **kind}}

    def describe(self) -> dict[str, Any]:
        return {"retriever": self.kind, "options": self.options.model_dump(mode="json", exclude_none=True),
                "model": self.encoder.model_name, **encoder_facts(self.encoder)}

    def index(self, passages: Sequence[Passage], bars: ProgressBars | None = None) -> None:
        texts = [self.options.passage_prefix + index_text(p, self.options.title) for p in passages]
        advance = bars.bar("encode passages", total=len(texts)) if bars else None
        before = self.encoder.encoded
        self.matrix = self.encoder.encode(texts, advance)
        self.vectors_from_store = len(set(texts)) - (self.encoder.encoded - before)  # a resumed or repeated build
        self.store = PassageStore(passages)

    def save(self, folder: Path) -> None:
        assert self.matrix is not None, "index() first"
        np.save(folder / "embeddings.npy", np.ascontiguousarray(self.matrix, dtype=np.float32))
        self.store.save(folder)

    def load(self, folder: Path) -> None:
        path = folder / "embeddings.npy"
        if not path.exists():
            raise StaleIndex(f"{path} is missing")
        try:
            matrix = np.load(path, mmap_mode="r")
        except (OSError, ValueError) as exc:
            raise StaleIndex(f"{path}: {exc}") from None
        store = PassageStore.load(folder)
        if matrix.ndim != 2 or matrix.shape[0] != len(store):
            raise StaleIndex(f"{path}: {matrix.shape} does not match {len(store)} passages")
        self.matrix, self.store = matrix, store

    def encode_queries(self, queries: list[str]) -> np.ndarray:
        return self.encoder.encode([self.options.query_prefix + q for q in queries])

    def _search_many(self, queries: list[str], k: int) -> list[list[Passage]]:
        if self.matrix is None:
            raise UsageError("the dense retriever has no index: call index() or load() first")
        vectors = self.encode_queries(queries)
        if vectors.shape[1] != self.matrix.shape[1]:  # e.g. an API model whose output size changed
            raise UsageError(f"{self.encoder.model_name} gives {vectors.shape[1]}-dimensional query vectors but the "
                             f"index holds {self.matrix.shape[1]}-dimensional ones: remove the index folder to rebuild")
        return [[self.store.hit(r, s) for r, s in hits] for hits in top_k(vectors, self.matrix, k,
                                                                         self.options.query_batch)]


def top_k(queries: np.ndarray, matrix: np.ndarray, k: int, batch: int = 64) -> list[list[tuple[int, float]]]:
    """Exact top-k rows of `matrix` by dot product with each query, best first (ties: lower row first)."""
    k = min(k, matrix.shape[0])
    out: list[list[tuple[int, float]]] = []
    for start in range(0, len(queries), batch):
        scores = queries[start : start + batch] @ matrix.T
        for row, cand in zip(scores, np.argpartition(-scores, k - 1, axis=1)[:, :k], strict=True):
            best = cand[np.lexsort((cand, -row[cand]))]
            out.append([(int(i), float(row[i])) for i in best])
    return out

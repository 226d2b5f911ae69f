"""Neural rerankers: a dense encoder (cosine of query and sentence vectors) and a cross-encoder (one score per pair);
a query of several weighted parts scores as the weighted sum of its parts' scores, as for the lexical models.

The dense side reuses `ragjudge.retrieval.encoders` (through the run's gateway for litellm: cached). Vectors are kept
per text for the run: a sentence that is a candidate of several dialogues is encoded once.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragjudge.bench.sentence_retrieval.queries import QueryParts
from ragjudge.embeddings.device import resolve_device
from ragjudge.errors import UsageError
from ragjudge.llm import LLMGateway
from ragjudge.retrieval.encoders import LiteLLMEncoder, SentenceTransformerEncoder


class DenseScorer:
    """Cosine similarity with one encoder; `options` are a spec's DenseOptions."""

    def __init__(self, options: Any, gateway: LLMGateway | None = None):
        self.options = options
        if options.encoder == "litellm":
            self.encoder: Any = LiteLLMEncoder(options.model, api_base=options.api_base,
                                               api_key_env=options.api_key_env, dimensions=options.dimensions,
                                               batch_size=options.batch_size or 32, concurrency=options.concurrency,
                                               normalize=options.normalize, gateway=gateway)
        else:
            self.encoder = SentenceTransformerEncoder(options.model, batch_size=options.batch_size,
                                                      max_seq_length=options.max_seq_length, device=options.device,
                                                      normalize=options.normalize, backend=options.backend,
                                                      precision=options.precision)
        self._vectors: dict[str, np.ndarray] = {}

    @property
    def model_name(self) -> str:
        return str(self.encoder.model_name)

    @property
    def device(self) -> str | None:
        """Where the local model runs (`auto` resolved); None for an embeddings API."""
        return self.encoder.device if isinstance(self.encoder, SentenceTransformerEncoder) else None

    async def encode(self, texts: Sequence[str]) -> None:
        """Encode the texts not seen yet (one batch call)."""
        missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        if not missing:
            return
        matrix = await self.encoder.aencode(missing)  # a local model's with other turns' texts (one model call)
        self._vectors.update(zip(missing, matrix, strict=True))

    def query_text(self, text: str) -> str:
        return self.options.query_prefix + text

    def passage_text(self, text: str) -> str:
        return self.options.passage_prefix + text

    def scores(self, parts: QueryParts, candidates: Sequence[str]) -> np.ndarray:
        """(candidates,) sum_i w_i cos(part_i, candidate); zeros for an empty query. Texts must be encoded."""
        matrix = np.stack([self._vectors[self.passage_text(c)] for c in candidates])
        out = np.zeros(len(candidates))
        for weight, text in parts:
            out += weight * (matrix @ self._vectors[self.query_text(text)])
        return out


class CrossEncoderScorer:
    """A sentence-transformers CrossEncoder loaded from a local folder (nothing is downloaded)."""

    def __init__(self, options: Any):
        if not options.model:
            raise UsageError("the cross_encoder reranker needs a local model folder: set reranker.options.model "
                             "in its spec or pass -T cross_encoder=PATH")
        if not Path(options.model).is_dir():
            raise UsageError(f"cross-encoder model folder not found: {options.model} (ragjudge ships none; give a "
                             f"local folder holding a sentence-transformers CrossEncoder)")
        self.options = options
        self.model_name = str(options.model)
        self._device: str | None = None
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def device(self) -> str:
        """Where the model runs (`auto` resolved once, on first need: it imports torch)."""
        if self._device is None:
            self._device = resolve_device(self.options.device)
        return self._device

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                from ragjudge.embeddings.quiet_loading import quiet_model_loading

                try:
                    with quiet_model_loading():
                        from sentence_transformers import CrossEncoder

                        self._model = CrossEncoder(self.options.model, max_length=self.options.max_length,
                                                   device=self.device)
                except Exception as exc:
                    raise UsageError(f"cannot load cross-encoder {self.options.model!r}: "
                                     f"{str(exc).splitlines()[0][:200]}") from None
        return self._model

    def predict(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        if not pairs:
            return np.zeros(0)
        model = self._load()
        scores = model.predict(pairs, batch_size=self.options.batch_size, show_progress_bar=False,
                               convert_to_numpy=True)
        return np.asarray(scores, dtype=np.float64).reshape(len(pairs), -1)[:, -1]

    async def scores_many(self, queries: list[QueryParts], candidates: list[list[str]]) -> list[np.ndarray]:
        """For each (query, candidate list): sum_i w_i score(part_i, candidate), in one batched prediction."""
        pairs: list[tuple[str, str]] = []
        for parts, cands in zip(queries, candidates, strict=True):
            pairs += [(text, c) for _, text in parts for c in cands]
        flat = await asyncio.to_thread(self.predict, pairs)
        out, start = [], 0
        for parts, cands in zip(queries, candidates, strict=True):
            total = np.zeros(len(cands))
            for weight, _ in parts:
                total += weight * flat[start:start + len(cands)]
                start += len(cands)
            out.append(total)
        return out

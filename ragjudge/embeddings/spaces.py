"""Embedding spaces: what a stored vector depends on, and typed reads and writes of one space's entries.

A space's key names everything that changes the numbers (the model's files by name, size and time, the layer or
pooling, normalisation, truncation, library versions), so a changed model or library is a new space, never
stale vectors. Batch size, device threads and concurrency are not in it: they do not change what is computed
beyond float rounding.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ragjudge.embeddings.store import EmbeddingStore, EmbeddingStoreWarning, pack, pack_vectors, unpack
from ragjudge.embeddings.token_encoder import TokenEmbeddings


class _Space:
    """One space's entries in the store; a damaged entry is a miss (recomputed and overwritten)."""

    entry: str
    with_ids: bool

    def __init__(self, store: EmbeddingStore, key: dict[str, Any], label: str):
        self.store, self.key, self.label = store, {"entry": self.entry, **key}, label
        self.hits = 0
        self.writes = 0

    def _entries(self, texts: Sequence[str]) -> Iterator[tuple[str, tuple[bytes, bytes, int, int]]]:
        for text, blob in self.store.get_many(self.key, self.label, texts).items():
            parts = unpack(blob, with_ids=self.with_ids)
            if parts is None or (not self.with_ids and parts[2] != 1):
                _corrupt(self.store)
                continue
            self.hits += 1
            yield text, parts

    def _put(self, items: list[tuple[str, bytes]]) -> None:
        self.store.put_many(self.key, self.label, items)
        self.writes += len(items) if self.store.writable else 0


class VectorSpace(_Space):
    """One vector per text (pooled sentence embeddings, embeddings-API vectors), float32."""

    entry, with_ids = "vector", False

    def get(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        return {text: np.frombuffer(vectors, dtype="<f4").astype(np.float32)
                for text, (_, vectors, _, _) in self._entries(texts)}

    def put(self, texts: Sequence[str], matrix: np.ndarray) -> None:
        block, size = pack_vectors(matrix)
        self.store.put_block(self.key, self.label, texts, block, size)
        self.writes += len(texts) if self.store.writable else 0


class TokenSpace(_Space):
    """Token ids and one vector per token (BERTScore's layer states), float32, exact."""

    entry, with_ids = "tokens", True

    def get(self, texts: Sequence[str]) -> dict[str, TokenEmbeddings]:
        return {text: TokenEmbeddings(ids=np.frombuffer(ids, dtype="<i4").astype(np.int32),
                                      vectors=np.frombuffer(vectors, dtype="<f4").reshape(rows, dim).copy())
                for text, (ids, vectors, rows, dim) in self._entries(texts)}

    def put(self, texts: Sequence[str], embeddings: Sequence[TokenEmbeddings]) -> None:
        self._put([(text, pack(np.ascontiguousarray(emb.ids, dtype="<i4").tobytes(),
                               np.ascontiguousarray(emb.vectors, dtype="<f4").tobytes(), *emb.vectors.shape))
                   for text, emb in zip(texts, embeddings, strict=True)])


def _corrupt(store: EmbeddingStore) -> None:
    """A damaged entry is a miss (recomputed and overwritten), reported once per store."""
    store.corrupt_entries += 1
    if store.corrupt_entries == 1:
        warnings.warn(f"{store.path}: a damaged embedding entry (checksum mismatch) is recomputed",
                      EmbeddingStoreWarning, stacklevel=5)  # get()'s caller

"""Embedding spaces: what a stored vector depends on, and typed reads and writes of one space's entries.

A space's key names everything that changes the numbers (the model's files by name, size and time, the layer or
pooling, normalisation, truncation, library versions), so a changed model or library is a new space, never
stale vectors. Batch size, device threads and concurrency are not in it: they do not change what is computed
beyond float rounding.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from ragjudge.embeddings.store import EmbeddingStore, EmbeddingStoreWarning, pack, unpack
from ragjudge.embeddings.token_encoder import TokenEmbeddings


class VectorSpace:
    """One vector per text (pooled sentence embeddings, embeddings-API vectors), float32."""

    def __init__(self, store: EmbeddingStore, key: dict[str, Any], label: str):
        self.store, self.key, self.label = store, {"entry": "vector", **key}, label
        self.hits = 0
        self.writes = 0

    def get(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        for text, blob in self.store.get_many(self.key, self.label, texts).items():
            parts = unpack(blob, with_ids=False)
            if parts is None or parts[2] != 1:
                _corrupt(self.store)
                continue
            found[text] = np.frombuffer(parts[1], dtype="<f4").astype(np.float32)
        self.hits += len(found)
        return found

    def put(self, texts: Sequence[str], matrix: np.ndarray) -> None:
        rows = np.ascontiguousarray(matrix, dtype="<f4")
        self.store.put_many(self.key, self.label, [(t, pack(b"", row.tobytes(), 1, row.shape[0]))
                                                   for t, row in zip(texts, rows, strict=True)])
        self.writes += len(texts) if self.store.writable else 0


class TokenSpace:
    """Token ids and one vector per token (BERTScore's layer states), float32, exact."""

    def __init__(self, store: EmbeddingStore, key: dict[str, Any], label: str):
        self.store, self.key, self.label = store, {"entry": "tokens", **key}, label
        self.hits = 0
        self.writes = 0

    def get(self, texts: Sequence[str]) -> dict[str, TokenEmbeddings]:
        found: dict[str, TokenEmbeddings] = {}
        for text, blob in self.store.get_many(self.key, self.label, texts).items():
            parts = unpack(blob, with_ids=True)
            if parts is None:
                _corrupt(self.store)
                continue
            ids, vectors, rows, dim = parts
            found[text] = TokenEmbeddings(ids=np.frombuffer(ids, dtype="<i4").astype(np.int32),
                                          vectors=np.frombuffer(vectors, dtype="<f4").reshape(rows, dim).copy())
        self.hits += len(found)
        return found

    def put(self, texts: Sequence[str], embeddings: Sequence[TokenEmbeddings]) -> None:
        items = []
        for text, emb in zip(texts, embeddings, strict=True):
            rows, dim = emb.vectors.shape
            items.append((text, pack(np.ascontiguousarray(emb.ids, dtype="<i4").tobytes(),
                                     np.ascontiguousarray(emb.vectors, dtype="<f4").tobytes(), rows, dim)))
        self.store.put_many(self.key, self.label, items)
        self.writes += len(items) if self.store.writable else 0


def _corrupt(store: EmbeddingStore) -> None:
    """A damaged entry is a miss (recomputed and overwritten), reported once per store."""
    store.corrupt_entries += 1
    if store.corrupt_entries == 1:
        warnings.warn(f"{store.path}: a damaged embedding entry (checksum mismatch) is recomputed",
                      EmbeddingStoreWarning, stacklevel=3)

"""One encode call through the store: what it already holds is read back, the rest is encoded and kept."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np

from ragjudge.embeddings.spaces import VectorSpace


class StoredEncoding:
    """The vectors of `texts`: found in `space`, or `add`ed batch by batch as an encoder computes them.

    Each distinct text is looked up and encoded once however often it repeats. Progress counts texts as
    asked (a repeated text counts each time), so a caller's bar over `len(texts)` ends full; what the store
    already held advances it at once."""

    def __init__(self, texts: Sequence[str], space: VectorSpace | None,
                 on_progress: Callable[[int], None] | None = None):
        self.texts = texts
        self.counts = Counter(texts)
        self.space = space
        self.on_progress = on_progress
        self.vectors: dict[str, np.ndarray] = space.get(list(self.counts)) if space is not None else {}
        self.missing = [t for t in self.counts if t not in self.vectors]
        """Distinct texts still to encode, in first-seen order."""
        if on_progress and self.vectors:
            on_progress(sum(self.counts[t] for t in self.vectors))

    def add(self, batch: Sequence[str], matrix: np.ndarray) -> None:
        """An encoded batch: stored (durably) before it counts as done."""
        if self.space is not None:
            self.space.put(batch, matrix)
        self.vectors.update(zip(batch, matrix, strict=True))
        if self.on_progress:
            self.on_progress(sum(self.counts[t] for t in batch))

    def matrix(self, empty_dimension: int | None = None) -> np.ndarray:
        """(len(texts), dim) float32, in the order asked."""
        if not self.texts:
            return np.zeros((0, empty_dimension or 0), dtype=np.float32)
        return np.stack([self.vectors[t] for t in self.texts]).astype(np.float32, copy=False)

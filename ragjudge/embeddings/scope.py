"""Which embedding store a run uses: its `--cache-dir`, or none with `--no-cache`.

Encoders are made deep inside pipelines and benches; rather than thread the choice through every constructor,
a run declares it once (`embedding_store_scope`) and encoders ask their `StoreHandle` when they encode. The choice is
a context variable, so it follows the run into its tasks and `asyncio.to_thread` workers and never leaks into
another run in the same process. Outside any run (a notebook building a retriever by hand) the default store
is used: `$RAGJUDGE_CACHE_DIR` or `~/.cache/ragjudge`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from ragjudge.embeddings.store import EmbeddingStore

_UNSET = object()
_ACTIVE: ContextVar[object] = ContextVar("ragjudge_embedding_store", default=_UNSET)
_BACKEND: ContextVar[str | None] = ContextVar("ragjudge_encoder_backend", default=None)


def open_store(cache_dir: str | Path | None = None) -> EmbeddingStore:
    from ragjudge.llm.cache import default_cache_dir

    return EmbeddingStore(Path(cache_dir) if cache_dir else default_cache_dir())


@contextmanager
def embedding_store_scope(cache_dir: str | Path | None, enabled: bool = True,
                          backend: str | None = None) -> Iterator[EmbeddingStore | None]:
    """Within the block, encoders use the store in `cache_dir` (None: the default folder), or none at all; with
    `backend` (`--encoder-backend`), every local encoder runs on it, whatever its spec says."""
    store = open_store(cache_dir) if enabled else None
    if store is not None:
        store.verify()
    token = _ACTIVE.set(store)
    chosen = _BACKEND.set(backend)
    try:
        yield store
    finally:
        _BACKEND.reset(chosen)
        _ACTIVE.reset(token)
        if store is not None:
            store.close()


def backend_override() -> str | None:
    """The run's `--encoder-backend` (`auto`, `torch` or `onnx`), or None: each encoder's own option holds."""
    return _BACKEND.get()


class StoreHandle:
    """An encoder's way to its store: the run's when inside one (None if it said --no-cache), else a default
    store opened once for this encoder."""

    def __init__(self) -> None:
        self._own: EmbeddingStore | None = None

    def get(self) -> EmbeddingStore | None:
        current = _ACTIVE.get()
        if current is not _UNSET:
            return current  # type: ignore[return-value]
        if self._own is None:
            self._own = open_store()
        return self._own

"""A pipeline = a spec's retriever over one corpus, its index built once and reused, plus its query strategy.

An index lives in `<index dir>/<retriever>-<key>`, the key hashing the corpus bytes, the chunking and the retriever
options that shape the index; it is written under a temporary name and renamed when complete, so a killed run never
leaves a half index a later run would trust.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from ragjudge.errors import UsageError
from ragjudge.formats.files import writing
from ragjudge.llm import LLMGateway
from ragjudge.llm.cache import default_cache_dir
from ragjudge.models import Passage, Task
from ragjudge.progress import ProgressBars
from ragjudge.retrieval.base import Retriever, StaleIndex
from ragjudge.retrieval.corpus import file_digest, load_passages
from ragjudge.retrieval.queries import BuiltQuery, QueryBuilder, strip_speaker_tags
from ragjudge.retrieval.registry import build_retriever
from ragjudge.retrieval.spec import PipelineSpec

INDEX_FORMAT = 1
MANIFEST = "manifest.json"


def fingerprint(*parts: object) -> str:
    blob = json.dumps(parts, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def default_index_dir() -> Path:
    return default_cache_dir() / "indexes"


@dataclass
class IndexInfo:
    folder: Path | None
    reused: bool
    passages: int
    seconds: float
    members: list[str] | None = None
    """A hybrid's member index folders (each shared with the member's own pipeline)."""
    build_seconds: float | None = None
    """How long building the index took, when it was built (also when it is reused: kept in its manifest)."""
    from_store: int | None = None
    """Passage vectors the embedding store already held when the index was built (an encoder's index only)."""

    def as_dict(self) -> dict[str, Any]:
        out = {"folder": str(self.folder) if self.folder else None, "reused": self.reused,
               "passages": self.passages, "seconds": round(self.seconds, 2),
               "build_seconds": None if self.build_seconds is None else round(self.build_seconds, 2)}
        if self.members is not None:
            out["members"] = self.members
        if self.from_store is not None:
            out["from_store"] = self.from_store
        return out


@dataclass
class TaskRetrieval:
    """Per task (by normalised key): the query used and the ranked passages."""

    queries: dict[str, BuiltQuery]
    passages: dict[str, list[Passage]]
    query_summary: dict[str, Any] = field(default_factory=dict)


def _leaves(retriever: Retriever) -> list[Retriever]:
    """The retrievers that own an index: a hybrid's members (recursively), else the retriever itself."""
    members = getattr(retriever, "members", None)
    if members is None:
        return [retriever]
    return [leaf for member in members for leaf in _leaves(member)]


class Pipeline:
    def __init__(self, spec: PipelineSpec, *, extra_dirs: list[str | Path] | None = None,
                 index_dir: str | Path | None = None, gateway: LLMGateway | None = None,
                 rewrite_model: str | None = None):
        if rewrite_model:
            spec = spec.model_copy(update={"query": spec.query.model_copy(update={"model": rewrite_model})})
        self.spec = spec
        self.retriever: Retriever = build_retriever(spec.retriever, source=spec.source, extra_dirs=extra_dirs)
        self.index_dir = Path(index_dir) if index_dir else default_index_dir()
        self.gateway = gateway
        self.info: IndexInfo | None = None
        self.corpus: str | None = None
        self.key: str | None = None

    @property
    def llm_models(self) -> list[str]:
        """Models the query strategy calls (the caller builds the gateway with them)."""
        return [self.spec.query.model] if self.spec.query.strategy == "rewrite" and self.spec.query.model else []

    def index_key(self, corpus_digest: str, retriever: Retriever | None = None) -> str:
        """The retriever's (default: the pipeline's) index over this corpus with this chunking."""
        return fingerprint(INDEX_FORMAT, (retriever or self.retriever).identity(), self._chunking(), corpus_digest)

    def _chunking(self) -> dict[str, Any] | None:
        return self.spec.chunking.model_dump() if self.spec.chunking else None

    def open(self, corpus: str | Path | None, bars: ProgressBars | None = None) -> IndexInfo:
        """Load this corpus's index if one was built with the same settings, else build and save it."""
        started = time.perf_counter()
        if corpus is None:
            attach = getattr(self.retriever, "attach", None)
            if attach is None:
                raise UsageError(f"--corpus is required: the {self.retriever.kind} retriever indexes it itself")
            attach()
            self.info = IndexInfo(None, True, 0, time.perf_counter() - started)
            return self.info
        corpus = Path(corpus)
        if corpus.is_dir():
            raise UsageError(f"--corpus {corpus} is a folder, expected a BEIR corpus JSONL file")
        if not corpus.is_file():
            raise UsageError(f"corpus file not found: {corpus}")
        self.corpus = str(corpus)  # read (and chunked) at most once, and only if some index must be built
        return self._open_all(file_digest(corpus), cache(lambda: load_passages(corpus, self.spec.chunking)), bars,
                              started)

    def open_passages(self, passages: list[Passage], bars: ProgressBars | None = None) -> IndexInfo:
        """The same, for passages already in memory (split by the caller): the index key hashes their ids,
        titles and texts, so the same passages find the same index."""
        started = time.perf_counter()
        digest = hashlib.sha256()
        for p in passages:
            digest.update(json.dumps([p.document_id, p.title, p.text]).encode())
        return self._open_all(digest.hexdigest(), lambda: passages, bars, started)

    def _open_all(self, digest: str, passages: Callable[[], list[Passage]], bars: ProgressBars | None,
                  started: float) -> IndexInfo:
        self.key = self.index_key(digest)
        parts = [self._open_leaf(leaf, digest, passages, bars) for leaf in _leaves(self.retriever)]
        builds = [p[3] for p in parts if p[3] is not None]
        build_seconds = sum(builds) if builds else None
        if len(parts) == 1:
            folder, reused, count, _ = parts[0]
            self.info = IndexInfo(folder, reused, count, time.perf_counter() - started, build_seconds=build_seconds,
                                  from_store=None if reused else getattr(self.retriever, "vectors_from_store", None))
        else:  # hybrid: each member's index is its own pipeline's index, shared with it (built once, by key)
            self.info = IndexInfo(None, all(p[1] for p in parts), max(p[2] for p in parts),
                                  time.perf_counter() - started, members=[str(p[0]) for p in parts],
                                  build_seconds=build_seconds)
        return self.info

    def _open_leaf(self, retriever: Retriever, digest: str, passages: Callable[[], list[Passage]],
                   bars: ProgressBars | None) -> tuple[Path, bool, int, float | None]:
        """Load `retriever`'s index from `<index dir>/<kind>-<key>` if it was built, else build and save it.
        The key depends on the retriever alone (not on a hybrid around it), so `dense` and a hybrid with a
        dense member share one index."""
        key = self.index_key(digest, retriever)
        if hasattr(retriever, "index_key"):
            retriever.index_key = key  # type: ignore[attr-defined]
        folder = self.index_dir / f"{retriever.kind}-{key}"
        manifest = folder / MANIFEST
        if manifest.exists():
            try:
                retriever.load(folder)
                saved = json.loads(manifest.read_text())
                return folder, True, saved.get("passages", 0), saved.get("build_seconds")
            except (StaleIndex, ValueError):
                shutil.rmtree(folder, ignore_errors=True)
        loaded = passages()
        if not loaded:
            raise UsageError("nothing to index: no passages")
        build_started = time.perf_counter()
        retriever.index(loaded, bars)
        tmp = folder.with_name(f"{folder.name}.tmp-{os.getpid()}")
        with writing(folder, "write the index"):
            try:
                shutil.rmtree(tmp, ignore_errors=True)
                tmp.mkdir(parents=True)
                retriever.save(tmp)
                build_seconds = round(time.perf_counter() - build_started, 3)
                (tmp / MANIFEST).write_text(json.dumps({
                    "ragjudge_index": INDEX_FORMAT, "key": key, "identity": retriever.identity(),
                    "chunking": self._chunking(), "corpus_sha256": digest, "passages": len(loaded),
                    "created": time.time(), "build_seconds": build_seconds,
                }, indent=2) + "\n")
            except OSError:
                shutil.rmtree(tmp, ignore_errors=True)  # no half index left behind on a full disk
                raise
        if not manifest.exists():  # a leftover without a manifest is incomplete or stale
            shutil.rmtree(folder, ignore_errors=True)
        try:
            os.replace(tmp, folder)
        except OSError:  # another process finished the same index (same key, same content) first: keep it
            shutil.rmtree(tmp, ignore_errors=True)
        return folder, False, len(loaded), build_seconds

    def index_identity(self) -> dict[str, Any]:
        """What the results depend on besides the spec: the index key (corpus + settings) and retriever."""
        return {"key": self.key, "retriever": self.retriever.identity()}

    def prepare(self, text: str) -> str:
        return strip_speaker_tags(text) if self.spec.strip_speaker_tags else text.strip()

    def search(self, queries: list[str], k: int | None = None) -> list[list[Passage]]:
        """Ranked passages for ready-made query texts (BEIR queries)."""
        if self.info is None:
            raise UsageError("open() the pipeline's index before searching")
        prepared = [self.prepare(q) for q in queries]
        for i, (raw, text) in enumerate(zip(queries, prepared, strict=True)):
            if not text:
                raise UsageError(f"query {i + 1} is empty{' once speaker tags are removed' if raw.strip() else ''}")
        return self.retriever.search_many(prepared, k or self.spec.k)

    async def retrieve_tasks(self, tasks: list[Task], k: int | None = None) -> TaskRetrieval:
        """Apply the spec's query strategy to each task, then search."""
        import asyncio

        if self.info is None:
            raise UsageError("open() the pipeline's index before searching")
        builder = QueryBuilder(self.spec.query, gateway=self.gateway, strip_tags=self.spec.strip_speaker_tags)
        built = await builder.build(tasks)
        results = await asyncio.to_thread(self.retriever.search_many, [q.text for q in built], k or self.spec.k)
        return TaskRetrieval(queries={t.key: q for t, q in zip(tasks, built, strict=True)},
                             passages={t.key: r for t, r in zip(tasks, results, strict=True)},
                             query_summary=builder.summary())

    def record(self) -> dict[str, Any]:
        """The spec, the retriever as built and the index used: recorded with runs and results."""
        return {"spec": self.spec.record(), "retriever": self.retriever.describe(),
                "index": self.info.as_dict() if self.info else None, "corpus": self.corpus}

    def close(self) -> None:
        self.retriever.close()

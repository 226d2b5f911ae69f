"""`retrieve`: a pipeline's retriever over a corpus for a file of queries, written as a run file (`ragjudge retrieve`
is this call and a rendering of its result).

Queries are BEIR queries (`{"_id", "text"}`, as MTRAG publishes its retrieval tasks) or MTRAG tasks, to which the
pipeline's query strategy is applied. The index is built once per corpus and settings and reused.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack

from ragjudge.api.settings import RunSettings, check_settings
from ragjudge.engine.bench_options import PYTHON, Spelling
from ragjudge.errors import InputError, UsageError

if TYPE_CHECKING:
    from ragjudge.formats.runs import Hit
    from ragjudge.models import Passage
    from ragjudge.retrieval.pipeline import IndexInfo

TREC_SUFFIXES = (".trec", ".txt", ".run")


@dataclass
class RetrieveResult:
    """What a retrieval wrote and how: the run file, its queries, the pipeline and its index."""

    name: str
    """The pipeline's name."""
    out: Path
    queries: int
    k: int
    pipeline: dict[str, Any]
    query_strategy: dict[str, Any]
    seconds: float
    index: IndexInfo
    notes: list[str] = field(default_factory=list)
    """Lines for the user (a query strategy that did not apply, rewrites that fell back)."""

    def summary(self) -> dict[str, Any]:
        """The record written beside the run file (`NAME.pipeline.json`) and printed by `--format json`."""
        return {"out": str(self.out), "queries": self.queries, "k": self.k, "pipeline": self.pipeline,
                "query_strategy": self.query_strategy, "seconds": self.seconds}


def retrieve(queries: str | Path, *, pipeline: str, out: str | Path, corpus: str | Path | None = None,
             k: int | None = None, index_dir: str | Path | None = None,
             pipeline_dir: list[str] | None = None, rewrite_model: str | None = None, chunk: bool = False,
             show_progress: bool = True, spelling: Spelling = PYTHON,
             **settings: Unpack[RunSettings]) -> RetrieveResult:
    """Retrieve the top `k` passages for every query of `queries` with `pipeline`; write an MTRAG retrieval run
    (`out` ending .jsonl) or a TREC run (.trec/.txt/.run), with `NAME.pipeline.json` (and, for MTRAG tasks,
    `NAME.queries.jsonl`: the query each task was searched with) beside it. `chunk`: the corpus lines are documents,
    split into 512-token passages with a 100-token overlap (unless the spec sets chunking)."""
    from ragjudge.embeddings.scope import embedding_store_scope
    from ragjudge.engine.outputs import OutputLock
    from ragjudge.formats.beir import read_queries
    from ragjudge.formats.files import output_file, writing
    from ragjudge.formats.jsonl import write_jsonl
    from ragjudge.formats.mtrag import read_tasks, require_questions
    from ragjudge.formats.runs import Run, write_mtrag_run, write_trec_run
    from ragjudge.progress import progress_bars
    from ragjudge.retrieval.corpus import ChunkingSpec
    from ragjudge.retrieval.pipeline import Pipeline
    from ragjudge.retrieval.queries import rewrite_warning
    from ragjudge.retrieval.spec import load_pipeline

    settings = check_settings("retrieve", settings)  # type: ignore[assignment]
    queries, out = Path(queries), Path(out)
    limit, cache_dir, use_cache = settings.get("limit"), settings.get("cache_dir"), settings.get("use_cache", True)
    encoder_backend = settings.get("encoder_backend")
    if encoder_backend is not None:
        from ragjudge.embeddings.onnx_encoder import check_backend

        encoder_backend = check_backend(encoder_backend, spelling.flag("encoder_backend"))
    started = time.perf_counter()
    notes: list[str] = []
    output_file(out, f"run file ({spelling.flag('out')})")  # before any indexing
    with OutputLock(sibling(out, ".lock"), owner=out):  # a second retrieve on this out would pay twice
        spec = load_pipeline(pipeline, pipeline_dir)
        if chunk and spec.chunking is None:
            spec = spec.model_copy(update={"chunking": ChunkingSpec()})
        kind = queries_kind(queries)
        tasks = read_tasks(queries)[:limit] if kind == "tasks" else None
        beir = read_queries(queries)[:limit] if kind == "beir" else None
        strategy = spec.query.strategy
        if rewrite_model and strategy != "rewrite":
            raise UsageError(f"{spelling.flag('rewrite_model')} is for pipelines whose query strategy is rewrite; "
                             f"{spec.name} uses {strategy}")
        pipe = Pipeline(spec, extra_dirs=pipeline_dir, index_dir=index_dir, rewrite_model=rewrite_model)
        if tasks is not None:
            require_questions(tasks, queries)
        if kind == "tasks" and strategy == "rewrite" and not pipe.spec.query.model:  # before any indexing
            raise UsageError(f"pipeline {spec.name} rewrites queries: pass {spelling.flag('rewrite_model')} MODEL "
                             "(or set query.model)")
        if beir is not None:
            for query in beir:  # an empty query is an input error naming the file, not a silent miss
                if not pipe.prepare(query.text):
                    raise InputError(f"query {query.id!r} is empty once speaker tags are removed", file=str(queries),
                                     field="text")
        if kind == "tasks":
            pipe.gateway = _rewrite_gateway(pipe.llm_models, settings, spelling)
        with embedding_store_scope(cache_dir, use_cache, encoder_backend):  # queries are encoded through it too
            try:
                with progress_bars(show_progress) as bars:
                    info = pipe.open(corpus, bars)
                run = Run(name=spec.name, source=str(queries))
                query_summary: dict[str, Any]
                if tasks is not None:
                    retrieval = asyncio.run(pipe.retrieve_tasks(tasks, k))
                    for task in tasks:
                        run.add(task.task_id, to_hits(retrieval.passages[task.key]), collection=task.collection)
                    query_summary = retrieval.query_summary
                    write_jsonl(sibling(out, ".queries.jsonl"),
                                (_query_record(retrieval.queries[t.key]) for t in tasks))
                else:
                    assert beir is not None
                    results = pipe.search([q.text for q in beir], k)
                    for query, passages in zip(beir, results, strict=True):
                        run.add(query.id, to_hits(passages))
                    query_summary = {"strategy": "as given (BEIR queries)"}
                    if strategy != "last_turn":
                        notes.append(f"note: {queries} holds ready-made queries; the pipeline's {strategy} query "
                                     "strategy applies to MTRAG tasks only")
            finally:
                pipe.close()
        if out.suffix in TREC_SUFFIXES:
            write_trec_run(run, out, tag=spec.name)
        else:
            write_mtrag_run(run, out)
        result = RetrieveResult(name=spec.name, out=out, queries=len(run), k=k or spec.k, pipeline=pipe.record(),
                                query_strategy=query_summary, seconds=round(time.perf_counter() - started, 2),
                                index=info, notes=notes)
        with writing(sibling(out, ".pipeline.json")):
            sibling(out, ".pipeline.json").write_text(json.dumps(result.summary(), indent=2, default=str) + "\n")
        if (warning := rewrite_warning(query_summary)) is not None:
            notes.append(warning)
        return result


def queries_kind(path: Path) -> str:
    """`tasks` when the first record looks like an MTRAG task (task_id + input), else `beir`."""
    from ragjudge.formats.jsonl import read_jsonl

    for _, record in read_jsonl(path):
        return "tasks" if "input" in record and "task_id" in record else "beir"
    raise UsageError(f"queries file {path} is empty")


def to_hits(passages: list[Passage]) -> list[Hit]:
    from ragjudge.formats.runs import Hit

    return [Hit(doc_id=p.document_id, score=float(p.score or 0.0), text=p.text, title=p.title) for p in passages]


def sibling(out: Path, suffix: str) -> Path:
    """A file beside the run file: `run.jsonl` → `run.pipeline.json`, `run.queries.jsonl`, `run.lock`."""
    stem = out.name
    for ext in (".jsonl", ".json", *TREC_SUFFIXES):
        if stem.endswith(ext):
            stem = stem[: -len(ext)]
            break
    return out.with_name(stem + suffix)


def _rewrite_gateway(models: list[str], settings: dict[str, Any], spelling: Spelling) -> Any:
    """The rewrite model's gateway, checked as a run's models are (credentials, then one free request to its
    endpoint) before any indexing: a missing key is exit 2, an endpoint that cannot be reached exit 3."""
    if not models:
        return None
    from ragjudge.engine.context import build_gateway
    from ragjudge.engine.prepare import engine_options

    llm = {k: v for k, v in settings.items() if k not in ("limit", "encoder_backend")}
    return build_gateway(engine_options(llm, bench_name="retrieve", uses_llm=True, spelling=spelling), models)


def _query_record(query: Any) -> dict[str, Any]:
    record = {"_id": query.task_id, "text": query.text, "strategy": query.strategy}
    if query.question_class:
        record["class"] = query.question_class
    if query.fallback:
        record["fallback"] = query.fallback
    return record

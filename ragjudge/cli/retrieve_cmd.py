"""`ragjudge retrieve`: run a pipeline's retriever over a corpus for a file of queries, write a run file.

Queries are either ready-made (BEIR queries JSONL, `{"_id", "text"}`, as MTRAG publishes its retrieval
tasks) or MTRAG tasks (conversations), to which the pipeline's query strategy is applied. The index is
built on the first run and reused by every later run over the same corpus and settings.
"""

import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ragjudge.cli import common
from ragjudge.llm.defaults import DEFAULT_CONCURRENCY
from ragjudge.errors import InputError, UsageError

if TYPE_CHECKING:
    from ragjudge.formats.runs import Hit
    from ragjudge.models import Passage

PipelineOpt = Annotated[str, typer.Option("--pipeline", help="Pipeline spec name (see pipelines/) or a path to a "
                                          "spec YAML file.")]
PipelineDirOpt = Annotated[list[str] | None, typer.Option("--pipeline-dir", metavar="<dir>", help="Extra folder of pipeline specs "
                                                          "(repeatable); overrides built-in specs of the same name.")]
IndexDirOpt = Annotated[Path | None, typer.Option("--index-dir", help="Where indexes are kept and reused "
                                                  "(default: <cache dir>/indexes).")]
RewriteModelOpt = Annotated[str | None, typer.Option("--rewrite-model", help="litellm model for the rewrite query "
                                                     "strategy (overrides the spec's query.model).")]


def queries_kind(path: Path) -> str:
    """`tasks` when the first record looks like an MTRAG task (task_id + input), else `beir`."""
    from ragjudge.formats.jsonl import read_jsonl

    for _, record in read_jsonl(path):
        return "tasks" if "input" in record and "task_id" in record else "beir"
    raise UsageError(f"queries file {path} is empty")


def to_hits(passages: "list[Passage]") -> "list[Hit]":
    from ragjudge.formats.runs import Hit

    return [Hit(doc_id=p.document_id, score=float(p.score or 0.0), text=p.text, title=p.title) for p in passages]


def build_rewrite_gateway(models: list[str], options: Any) -> Any:
    """The rewrite model's gateway, checked as a run's models are (credentials, then one free request to its
    endpoint) before any indexing: a missing key is exit 2, an endpoint that cannot be reached exit 3."""
    if not models:
        return None
    from ragjudge.engine.context import build_gateway

    return build_gateway(options, models)


def retrieve_command(
    queries: Annotated[Path, typer.Option("--queries", help="BEIR queries JSONL ({_id, text}) or MTRAG tasks.")],
    pipeline: PipelineOpt,
    out: Annotated[Path, typer.Option("--out", help="Run file: MTRAG retrieval predictions (.jsonl) or a TREC run "
                                      "(.trec/.txt/.run).")],
    corpus: Annotated[Path | None, typer.Option("--corpus", help="BEIR corpus JSONL ({_id, title, text} a line). "
                                                "Optional only for an existing Elasticsearch index.")] = None,
    k: Annotated[int | None, typer.Option("--k", min=1, help="Passages per query (default: the spec's k, 10).")] = None,
    index_dir: IndexDirOpt = None,
    pipeline_dir: PipelineDirOpt = None,
    rewrite_model: RewriteModelOpt = None,
    chunk: Annotated[bool, typer.Option("--chunk", metavar="", help="Corpus lines are documents: split them into 512-token "
                                        "passages with a 100-token overlap (unless the spec sets chunking).")] = False,
    limit: common.LimitOpt = None,
    fmt: common.FormatOpt = "table",
    concurrency: common.ConcurrencyOpt = DEFAULT_CONCURRENCY,
    cache_dir: common.CacheDirOpt = None,
    no_cache: common.NoCacheOpt = False,
    encoder_backend: common.EncoderBackendOpt = None,
    api_base: common.ApiBaseOpt = None,
    models: common.ModelsOpt = None,
    rpm: common.RpmOpt = None,
    tpm: common.TpmOpt = None,
    no_preflight: common.NoPreflightOpt = False,
) -> None:
    """Retrieve passages for every query with a pipeline; write an MTRAG or TREC run file."""
    # imported here, not at the top: `ragjudge --help` and argument errors stay instant
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

    if fmt not in ("table", "json"):
        raise UsageError(f"--format must be table or json, got {fmt!r}")
    if encoder_backend is not None:
        from ragjudge.embeddings.onnx_encoder import check_backend

        encoder_backend = check_backend(encoder_backend, "--encoder-backend")
    started = time.perf_counter()
    output_file(out, "run file (--out)")  # before any indexing
    with OutputLock(_sibling(out, ".lock"), owner=out):  # a second retrieve on this --out would pay twice
        spec = load_pipeline(pipeline, pipeline_dir)
        if chunk and spec.chunking is None:
            spec = spec.model_copy(update={"chunking": ChunkingSpec()})
        kind = queries_kind(queries)
        tasks = read_tasks(queries)[:limit] if kind == "tasks" else None
        beir = read_queries(queries)[:limit] if kind == "beir" else None
        strategy = spec.query.strategy
        if rewrite_model and strategy != "rewrite":
            raise UsageError(f"--rewrite-model is for pipelines whose query strategy is rewrite; "
                             f"{spec.name} uses {strategy}")
        pipe = Pipeline(spec, extra_dirs=pipeline_dir, index_dir=index_dir, rewrite_model=rewrite_model)
        if tasks is not None:
            require_questions(tasks, queries)
        if kind == "tasks" and strategy == "rewrite" and not pipe.spec.query.model:  # before any indexing
            raise UsageError(f"pipeline {spec.name} rewrites queries: pass --rewrite-model MODEL (or set query.model)")
        if beir is not None:
            for query in beir:  # an empty query is an input error naming the file, not a silent miss
                if not pipe.prepare(query.text):
                    raise InputError(f"query {query.id!r} is empty once speaker tags are removed", file=str(queries),
                                     field="text")
        if kind == "tasks":
            from ragjudge.engine.prepare import engine_options

            pipe.gateway = build_rewrite_gateway(pipe.llm_models, engine_options(common.run_settings(
                limit=None, concurrency=concurrency, cache_dir=cache_dir, no_cache=no_cache, api_base=api_base,
                max_retries=None, timeout=None, models=models, rpm=rpm, tpm=tpm, no_preflight=no_preflight),
                bench_name="retrieve", uses_llm=True))
        with embedding_store_scope(cache_dir, not no_cache, encoder_backend):  # queries are encoded through it too
            try:
                with progress_bars(fmt == "table") as bars:
                    info = pipe.open(corpus, bars)
                run = Run(name=spec.name, source=str(queries))
                query_summary: dict[str, Any]
                if tasks is not None:
                    import asyncio

                    retrieval = asyncio.run(pipe.retrieve_tasks(tasks, k))
                    for task in tasks:
                        run.add(task.task_id, to_hits(retrieval.passages[task.key]), collection=task.collection)
                    query_summary = retrieval.query_summary
                    write_jsonl(_sibling(out, ".queries.jsonl"), (_query_record(retrieval.queries[t.key]) for t in tasks))
                else:
                    assert beir is not None
                    results = pipe.search([q.text for q in beir], k)
                    for query, passages in zip(beir, results, strict=True):
                        run.add(query.id, to_hits(passages))
                    query_summary = {"strategy": "as given (BEIR queries)"}
                    if strategy != "last_turn":
                        typer.echo(f"note: {queries} holds ready-made queries; the pipeline's {strategy} query strategy "
                                   f"applies to MTRAG tasks only", err=True)
            finally:
                pipe.close()
        if out.suffix in (".trec", ".txt", ".run"):
            write_trec_run(run, out, tag=spec.name)
        else:
            write_mtrag_run(run, out)
        summary = {"out": str(out), "queries": len(run), "k": k or spec.k, "pipeline": pipe.record(),
                   "query_strategy": query_summary, "seconds": round(time.perf_counter() - started, 2)}
        with writing(_sibling(out, ".pipeline.json")):
            _sibling(out, ".pipeline.json").write_text(json.dumps(summary, indent=2, default=str) + "\n")
        if (warning := rewrite_warning(query_summary)) is not None:
            typer.echo(warning, err=True)
        if fmt == "json":
            typer.echo(json.dumps(summary, default=str))
            return
        reused = "reused" if info.reused else "built"
        where = f" ({info.folder})" if info.folder else ""
        print(f"{spec.name}: top-{k or spec.k} for {len(run)} queries -> {out}", file=sys.stdout)
        stored = f" ({info.from_store} passage vectors from the embedding store)" if info.from_store else ""
        print(f"index {reused}{where}: {info.passages} passages, {info.seconds:.1f}s{stored}", file=sys.stdout)
        if query_summary.get("strategy") == "rewrite":
            print("rewrite: " + ", ".join(f"{key} {value}" for key, value in query_summary.items()
                                          if key not in ("strategy",)), file=sys.stdout)


def _sibling(out: Path, suffix: str) -> Path:
    stem = out.name
    for ext in (".jsonl", ".json", ".trec", ".txt", ".run"):
        if stem.endswith(ext):
            stem = stem[: -len(ext)]
            break
    return out.with_name(stem + suffix)


def _query_record(query: Any) -> dict[str, Any]:
    record = {"_id": query.task_id, "text": query.text, "strategy": query.strategy}
    if query.question_class:
        record["class"] = query.question_class
    if query.fallback:
        record["fallback"] = query.fallback
    return record

"""`ragjudge retrieve`: parses the flags for `ragjudge.api.retrieve` and renders the result.
"""

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from ragjudge.cli import common
from ragjudge.cli.retrieval_flags import CorpusOpt, IndexDirOpt, PipelineDirOpt, PipelineOpt, RewriteModelOpt
from ragjudge.defaults import DEFAULT_CONCURRENCY


def retrieve_command(
    queries: Annotated[Path, typer.Option("--queries", help="BEIR queries JSONL ({_id, text}) or MTRAG tasks.")],
    pipeline: PipelineOpt,
    out: Annotated[Path, typer.Option("--out", help="Run file: MTRAG retrieval predictions (.jsonl) or a TREC run "
                                      "(.trec/.txt/.run).")],
    corpus: CorpusOpt = None,
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
    from ragjudge.api import retrieve
    from ragjudge.engine.bench_options import CLI

    fmt = common.check_format(fmt)
    result = retrieve(queries, pipeline=pipeline, out=out, corpus=corpus, k=k, index_dir=index_dir,
                      pipeline_dir=pipeline_dir, rewrite_model=rewrite_model, chunk=chunk,
                      show_progress=fmt == "table", spelling=CLI, **common.run_settings(
                          limit=limit, concurrency=concurrency, cache_dir=cache_dir, no_cache=no_cache,
                          api_base=api_base, models=models, rpm=rpm, tpm=tpm, no_preflight=no_preflight,
                          encoder_backend=encoder_backend))
    for note in result.notes:
        typer.echo(note, err=True)
    if fmt == "json":
        typer.echo(json.dumps(result.summary(), default=str))
        return
    info = result.index
    where = f" ({info.folder})" if info.folder else ""
    print(f"{result.name}: top-{result.k} for {result.queries} queries -> {out}", file=sys.stdout)
    stored = f" ({info.from_store} passage vectors from the embedding store)" if info.from_store else ""
    print(f"index {'reused' if info.reused else 'built'}{where}: {info.passages} passages, {info.seconds:.1f}s{stored}",
          file=sys.stdout)
    if result.query_strategy.get("strategy") == "rewrite":
        print("rewrite: " + ", ".join(f"{key} {value}" for key, value in result.query_strategy.items()
                                      if key != "strategy"), file=sys.stdout)

"""What the benches that search the knowledge base share (article search, multi-turn retrieval, answer
classification): retrieval options, pipeline, the index over the articles, and what it adds to the summary (via
`ctx.facts["index"]`, where `summarize` and `run_info` read it)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Generic, TypeVar

from pydantic import Field

from ragjudge.bench.cxm.bench import CxmBench, CxmOptions
from ragjudge.bench.cxm.retrieve import (CHUNK_HELP, OVERLAP_HELP, Chunk, KbIndex, check_standalone, chunking_for,
                                         index_notes, pipeline_for)

if TYPE_CHECKING:
    from ragjudge.bench.cxm.summary import TaskReport
    from ragjudge.engine.context import RunContext

INDEX = "index"
"""The key of `ctx.facts` that holds the index's description (`KbIndex.open`)."""


class RetrievalOptions(CxmOptions):
    pipeline: str = Field("bm25", description="Retrieval pipeline (name or YAML path, e.g. bm25, dense, hybrid, "
                          "dense_ada002 for the paper's text-embedding-ada-002); a name that is no pipeline is a "
                          "sentence-transformers embedding model. Its `chunking:` is honoured.")
    chunk: Chunk = Field("pipeline", description=CHUNK_HELP + " Table 6: 500 or 1000.")
    chunk_overlap: int | None = Field(None, ge=0, description=OVERLAP_HELP)
    pipeline_dir: list[str] = Field(default_factory=list, description="Extra folders of pipeline specs.")
    index_dir: str | None = Field(None, description="Where indexes are kept and reused (default: "
                                  "<cache>/indexes).")


R = TypeVar("R", bound=RetrievalOptions)
Cutoffs = list[Annotated[int, Field(ge=1)]]
"""`-T ks`: retrieval cut-offs, whole numbers >= 1."""


class KbRetrievalBench(CxmBench[R], Generic[R]):
    """A CXMArena bench whose system under test is a retrieval pipeline over the knowledge base (`-T chunk`
    splitting its articles)."""

    def __init__(self, options: R, *, label: str | None = None):
        super().__init__(options, label=label)
        self.spec = pipeline_for(options.pipeline, options.pipeline_dir)
        check_standalone(self.spec, options.pipeline)
        self.chunking = chunking_for(self.spec, options.chunk, options.chunk_overlap)

    def open_index(self, ctx: RunContext) -> KbIndex:
        """The index over the run's articles (`ctx.data.articles`: built once, then reused), described in
        `ctx.facts["index"]`."""
        index = KbIndex(self.spec, ctx.data.articles, chunking=self.chunking, index_dir=self.options.index_dir,
                        extra_dirs=self.options.pipeline_dir, gateway=ctx.gateway)
        ctx.facts[INDEX] = index.open(ctx.bars)
        return index

    def add_index(self, report: TaskReport, ctx: RunContext) -> bool:
        """Adds what the run's index adds to the report (passages an encoder cut, what was indexed); whether the run
        opened one."""
        if (index := ctx.facts.get(INDEX)) is None:
            return False
        if index["truncation"]:  # passages a local encoder cut (none for BM25)
            report.metrics["passages truncated by the encoder"] = sum(t["truncated"] for t in index["truncation"])
        report.notes += index_notes(index)
        return True


def embedding_models(spec: Any) -> list[str]:
    """API embedding models a pipeline calls (they go through the run's gateway and its cache)."""
    options = spec.retriever.options
    if spec.retriever.name == "dense" and options.get("encoder") == "litellm":
        return [str(options.get("model"))]
    if spec.retriever.name == "hybrid":
        members = options.get("retrievers") or []
        return [str(m["options"]["model"]) for m in members if isinstance(m, dict) and m.get("retriever") == "dense"
                and (m.get("options") or {}).get("encoder") == "litellm"]
    return []

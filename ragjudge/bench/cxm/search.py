"""`cxm-article-search`: rank knowledge-base articles for a customer's question with a retrieval pipeline."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Annotated, Any, Generic, TypeVar

from pydantic import Field

from ragjudge.engine.bench import MetricInfo, Record, SampleResult, Solver
from ragjudge.bench.cxm import loaders, reference, setups
from ragjudge.bench.cxm import score as S
from ragjudge.bench.cxm.base import CxmBench, CxmOptions, FileRowsSolver, optional_articles
from ragjudge.bench.cxm.models import Article, SearchQuery
from ragjudge.bench.cxm.report import TaskReport
from ragjudge.bench.cxm.retrieve import (CHUNK_HELP, OVERLAP_HELP, Chunk, KbIndex, check_standalone, chunking_for,
                                         index_notes, pipeline_for)

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext


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
"""`-T ks`: retrieval cut-offs, whole numbers >= 1 (`cxm score --ks`)."""


class KbRetrievalBench(CxmBench[R], Generic[R]):
    """A CXMArena bench whose system under test is a retrieval pipeline over the knowledge base."""

    def __init__(self, options: R, *, label: str | None = None):
        super().__init__(options, label=label)
        self.spec = pipeline_for(options.pipeline, options.pipeline_dir)
        check_standalone(self.spec, options.pipeline)
        self.articles: dict[str, Article] | None = None
        self.index_info: dict[str, Any] | None = None

    def open_index(self, ctx: RunContext) -> KbIndex:
        assert self.articles is not None
        index = KbIndex(self.spec, self.articles, chunking=self.chunking, index_dir=self.options.index_dir,
                        extra_dirs=self.options.pipeline_dir, gateway=ctx.gateway)
        self.index_info = index.open(ctx.bars)
        return index


class SearchOptions(RetrievalOptions):
    ks: Cutoffs = Field(default_factory=lambda: [1, 3, 5, 10], min_length=1,
                        description="Cut-offs for P@k, R@k and hit@k, each >= 1.")


class SearchSolver(Solver[SearchQuery]):
    """Ranks every query at once (one index, one batch search); cheap to redo, so not journaled."""

    journaled = False

    def __init__(self, bench: ArticleSearchBench):
        self.bench = bench
        self.name = bench.options.pipeline

    def fingerprint(self, sample: SearchQuery) -> str:
        return self.name

    async def solve(self, samples: Sequence[SearchQuery], ctx: RunContext) -> AsyncIterator[tuple[str, Record]]:
        index = self.bench.open_index(ctx)
        try:
            hits = index.search([q.query for q in samples], max(self.bench.options.ks))
        finally:
            index.close()
        for q, h in zip(samples, hits, strict=True):
            row: Record = {"query_id": q.query_id, "ranking": h.ranking, "retriever": self.name}
            if index.chunking is not None:
                row["chunk_articles"] = h.chunk_articles
            yield q.query_id, row


class ArticleSearchBench(KbRetrievalBench[SearchOptions]):
    name = "cxm-article-search"
    task = "article-search"
    description = "CXMArena article search: rank KB articles for a question; P@k, R@k, hit@k, MRR."
    Options = SearchOptions
    data_help = setups.data_help(setups.TABLE6)
    llm = "optional"  # a pipeline may embed through an API (litellm)
    metrics = (
        MetricInfo("hit@* (official*", "the same on CXMArena's predictor's ranking (the top-k passages with repeats "
                   "removed, so often fewer than k articles): the paper's Table 6 \"precision\" at k=10",
                   counts="queries ranked"),
        MetricInfo("P@*", "relevant articles among the top k, over k", counts="queries ranked"),
        MetricInfo("R@*", "share of the query's relevant articles in the top k", counts="queries ranked"),
        MetricInfo("hit@*", "a relevant article in the top k: the paper's retrieval \"precision\"",
                   counts="queries ranked"),
        MetricInfo("MRR", "reciprocal rank of the first relevant article", counts="queries ranked"),
        MetricInfo("queries", "queries in the data", None, "count"),
        MetricInfo("ranked", "queries with a ranking", None, "count"),
        MetricInfo("missing", "queries without a ranking", False, "count"),
        MetricInfo("passages truncated by the encoder", "passages longer than a local encoder reads (cut when "
                   "embedded; chunk the articles to avoid it)", False, "count"),
    )
    breakdowns = ()
    unit = "queries"

    def __init__(self, options: SearchOptions, *, label: str | None = None):
        super().__init__(options, label=label)
        self.chunking = chunking_for(self.spec, options.chunk, options.chunk_overlap)
        self.queries: list[SearchQuery] = []

    def sample_id(self, sample: Any) -> str:
        return str(getattr(sample, "query_id", None) or sample.id)

    def load(self) -> list[Any]:
        self.queries = loaders.load_search(self.data)
        if self.predictions_path is not None:
            self.articles = optional_articles(self.data, "article-search")
            return self.file_rows()
        self.articles = loaders.load_articles(self.data, "article-search")
        return list(self.queries)

    def llm_models(self) -> list[str]:
        return embedding_models(self.spec) if self.predictions_path is None else []

    def solver(self, ctx: RunContext) -> Solver[Any]:
        return FileRowsSolver() if self.predictions_path is not None else SearchSolver(self)

    def report(self, results: Sequence[SampleResult[Any]]) -> TaskReport:
        queries = self.queries if self.predictions_path is not None else [r.sample for r in results]
        report = S.score_search(queries, self.prediction_rows(results), self.options.ks, self.predictions_path,
                                self.articles)
        if self.index_info is not None:
            report.metrics.update(index_metrics(self.index_info))
            report.notes += index_notes(self.index_info)
        return self.cite(report, reference.search(self.spec, self.chunking, self.options.ks,
                                                  self.predictions_path is not None, self.partial, report.metrics))

    def run_info(self, ctx: RunContext) -> dict[str, Any]:
        return {**super().run_info(ctx), "index": self.index_info,
                "models": {"pipeline": self.options.pipeline} if self.predictions_path is None else {}}

    def out_slug(self) -> list[str]:
        if self.predictions_path:
            return ["predictions"]
        return [self.options.pipeline] + ([f"chunk{self.chunking.size}"] if self.chunking else [])


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


def index_metrics(info: dict[str, Any]) -> dict[str, Any]:
    """What the index adds to the metrics: passages a local encoder cut (none for BM25)."""
    out: dict[str, Any] = {}
    for t in info["truncation"]:
        out["passages truncated by the encoder"] = out.get("passages truncated by the encoder", 0) + t["truncated"]
    return out

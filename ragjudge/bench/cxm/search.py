"""`cxm-article-search`: rank knowledge-base articles for a customer's question with a retrieval pipeline."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import Field

from ragjudge.bench.base import MetricInfo, Record, SampleResult, Solver
from ragjudge.bench.cxm import loaders
from ragjudge.bench.cxm import score as S
from ragjudge.bench.cxm.base import CxmBench, CxmOptions, FileRowsSolver, optional_articles
from ragjudge.bench.cxm.models import Article, SearchQuery
from ragjudge.bench.cxm.report import TaskReport
from ragjudge.bench.cxm.retrieve import rank
from ragjudge.errors import UsageError

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext


class SearchOptions(CxmOptions):
    pipeline: str = Field("bm25", description="Retrieval pipeline (name or YAML path, e.g. bm25, dense, hybrid); a "
                          "name that is no pipeline is a dense embedding model.")
    ks: list[int] = Field(default_factory=lambda: [1, 3, 5, 10], description="Cut-offs for P@k and R@k.")
    pipeline_dir: list[str] = Field(default_factory=list, description="Extra folders of pipeline specs.")


class SearchSolver(Solver[SearchQuery]):
    """Ranks every query in `prepare` (one index, one batch search); cheap to redo, so not journaled."""

    journaled = False

    def __init__(self, pipeline: str, articles: dict[str, Article], k: int, pipeline_dirs: list[str]):
        self.name = pipeline
        self.pipeline = pipeline
        self.articles = articles
        self.k = k
        self.pipeline_dirs = pipeline_dirs
        self.rankings: dict[str, list[str]] = {}

    async def prepare(self, samples: Sequence[SearchQuery], ctx: RunContext) -> None:
        rankings = rank(self.pipeline, self.articles, [q.query for q in samples], self.k, self.pipeline_dirs)
        self.rankings = {q.query_id: r for q, r in zip(samples, rankings, strict=True)}

    def fingerprint(self, sample: SearchQuery) -> str:
        return self.pipeline

    async def solve(self, samples: Sequence[SearchQuery], ctx: RunContext) -> AsyncIterator[tuple[str, Record]]:
        for q in samples:
            yield q.query_id, {"query_id": q.query_id, "ranking": self.rankings[q.query_id], "retriever": self.pipeline}


class ArticleSearchBench(CxmBench[SearchOptions]):
    name = "cxm-article-search"
    task = "article-search"
    description = "CXMArena article search: rank KB articles for a question; Precision@k, Recall@k, MRR."
    Options = SearchOptions
    llm = "optional"  # a pipeline may embed through an API (litellm)
    metrics = (MetricInfo("P@k", "relevant articles among the top k, over k"),
               MetricInfo("R@k", "share of the relevant articles in the top k"),
               MetricInfo("MRR", "reciprocal rank of the first relevant article"))
    breakdowns = ("cut-off k",)

    def __init__(self, options: SearchOptions, *, label: str | None = None):
        super().__init__(options, label=label)
        if not options.ks or any(k < 1 for k in options.ks):
            raise UsageError(f"-T ks must be positive whole numbers, got {options.ks}")
        self.queries: list[SearchQuery] = []
        self.articles: dict[str, Article] | None = None

    def sample_id(self, sample: Any) -> str:
        return str(getattr(sample, "query_id", None) or sample.id)

    def load(self) -> list[Any]:
        self.queries = loaders.load_search(self.data)
        if self.predictions_path is not None:
            self.articles = optional_articles(self.data, "article-search")
            return self.file_rows()
        self.articles = loaders.load_articles(self.data, "article-search")
        return list(self.queries)

    def solver(self, ctx: RunContext) -> Solver[Any]:
        if self.predictions_path is not None:
            return FileRowsSolver()
        assert self.articles is not None
        return SearchSolver(self.options.pipeline, self.articles, max(self.options.ks), self.options.pipeline_dir)

    def reports(self, results: Sequence[SampleResult[Any]]) -> list[TaskReport]:
        queries = self.queries if self.predictions_path is not None else [r.sample for r in results]
        return [S.score_search(queries, self.prediction_rows(results), self.options.ks, self.predictions_path,
                               self.articles)]

    def out_slug(self) -> list[str]:
        return ["predictions" if self.predictions_path else self.options.pipeline]

"""`cxm-article-search`: rank knowledge-base articles for a customer's question with a retrieval pipeline."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import Field

from ragjudge.bench.cxm.article_search import data, paper
from ragjudge.bench.cxm.article_search.samples import search_sample
from ragjudge.bench.cxm.article_search.solver import SearchSolver
from ragjudge.bench.cxm.article_search.summary import score_search
from ragjudge.bench.cxm.bench import DATA_HELP, CxmData
from ragjudge.bench.cxm.data import load_articles, optional_articles
from ragjudge.bench.cxm.kb_retrieval import INDEX, Cutoffs, KbRetrievalBench, RetrievalOptions, embedding_models
from ragjudge.bench.cxm.rows import FileRow
from ragjudge.bench.cxm.summary import TaskReport
from ragjudge.engine.bench import Loaded, MetricInfo, SampleResult, Solver
from ragjudge.formats.samples import Sample

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext


class SearchOptions(RetrievalOptions):
    ks: Cutoffs = Field(default_factory=lambda: [1, 3, 5, 10], min_length=1,
                        description="Cut-offs for P@k, R@k and hit@k, each >= 1.")


class ArticleSearchBench(KbRetrievalBench[SearchOptions]):
    name = "cxm-article-search"
    task = "article-search"
    Options = SearchOptions
    data_help = f"{DATA_HELP}\n\n{paper.SETUP}"
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
    key = "query_id"

    def load(self) -> Loaded[Any, CxmData]:
        """The queries (or a predictions file's rows), with the queries by id and the articles as `ctx.data`."""
        queries = {q.query_id: q for q in data.load_search(self.data)}
        if self.predictions_path is not None:
            return Loaded(self.file_rows(), CxmData(queries, optional_articles(self.data, "article-search")))
        return Loaded(list(queries.values()), CxmData(queries, load_articles(self.data, "article-search")))

    def llm_models(self) -> list[str]:
        return embedding_models(self.spec) if self.predictions_path is None else []

    def model_solver(self, ctx: RunContext) -> Solver[Any]:
        return SearchSolver(self.open_index, self.options.pipeline, max(self.options.ks))

    def report(self, results: Sequence[SampleResult[Any]], ctx: RunContext) -> TaskReport:
        report = score_search(self.scored(results, ctx), self.prediction_rows(results), self.options.ks,
                              self.predictions_path, ctx.data.articles)
        self.add_index(report, ctx)
        return report.cite(paper.beside(self.spec, self.chunking, self.options.ks, self.predictions_path is not None,
                                        ctx.cut_by_limit, report.metrics))

    def sample(self, result: SampleResult[Any], ctx: RunContext) -> Sample:
        if isinstance(result.sample, FileRow):
            return search_sample(result.sample.id, self.gold_of(result.output, ctx), result.output, self.options.ks)
        return search_sample(result.sample.query_id, result.sample, result.output, self.options.ks)

    def run_info(self, ctx: RunContext) -> dict[str, Any]:
        return {**super().run_info(ctx), "index": ctx.facts.get(INDEX),
                "models": {"pipeline": self.options.pipeline} if self.predictions_path is None else {}}

    def out_slug(self) -> list[str]:
        if self.predictions_path:
            return ["predictions"]
        return [self.options.pipeline] + ([f"chunk{self.chunking.size}"] if self.chunking else [])

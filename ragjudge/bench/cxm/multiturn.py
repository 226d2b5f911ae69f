"""`cxm-multiturn-retrieval`: the paper's Table 8. Each multi-turn RAG turn's conversation becomes a query (the
customer's last message, all of their messages, or a query an LLM writes, as the paper does), which retrieves
knowledge-base articles, chunked as the paper's (500 or 1000 characters); Recall@k of the turn's gold articles
at every k asked for, in one run. No generator and no judge."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import Field

from ragjudge.engine.bench import MetricInfo, Record, SampleResult, Solver
from ragjudge.bench.cxm import loaders, reference, setups
from ragjudge.bench.cxm import prompts as P
from ragjudge.bench.cxm import score as S
from ragjudge.bench.cxm.base import FileRowsSolver, optional_articles
from ragjudge.bench.cxm.models import RagCase
from ragjudge.bench.cxm.queries import (LLM_QUERY, ConversationQueryOptions, ConversationSearch, query_formation,
                                        query_strategy)
from ragjudge.bench.cxm.report import TaskReport
from ragjudge.bench.cxm.retrieve import CHUNK_HELP, Chunk, chunking_for, describe_chunking, index_notes
from ragjudge.bench.cxm.search import Cutoffs, KbRetrievalBench, embedding_models, index_metrics

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext

class MultiTurnOptions(ConversationQueryOptions):
    chunk: Chunk = Field(500, description=CHUNK_HELP + " Table 8: 500 (the default); CXMArena's predictor: 1000.")
    ks: Cutoffs = Field(default_factory=lambda: [10, 20], min_length=1,
                        description="Cut-offs for Recall@k, each >= 1 (one run, any list).")


class RetrievalSolver(Solver[RagCase]):
    """Queries for every turn, then one batch search (`queries.ConversationSearch`). Journaled: a rerun reuses
    the turns already ranked (and their LLM queries)."""

    def __init__(self, bench: MultiTurnRetrievalBench):
        self.bench = bench
        self.name = f"{bench.options.pipeline}/{bench.strategy}"
        self.search = ConversationSearch(bench, bench.strategy, bench.options.rewrite_model, bench.book)

    def key(self, sample: RagCase) -> str:
        return sample.case_id

    def fingerprint(self, sample: RagCase) -> str:
        return self.search.fingerprint(max(self.bench.options.ks))

    async def solve(self, samples: Sequence[RagCase], ctx: RunContext) -> AsyncIterator[tuple[str, Record]]:
        rows = await self.search.rank(samples, ctx, max(self.bench.options.ks))
        for case in samples:
            yield case.case_id, {"case_id": case.case_id, **rows[case.case_id]}


class MultiTurnRetrievalBench(KbRetrievalBench[MultiTurnOptions]):
    name = "cxm-multiturn-retrieval"
    task = "multiturn-retrieval"
    description = ("CXMArena multi-turn retrieval (Table 8): conversation → query (last turn, all user turns or "
                   "an LLM) → chunked KB search; Recall@k.")
    Options = MultiTurnOptions
    data_help = setups.data_help(setups.TABLE8)
    llm = "optional"
    metrics = (
        MetricInfo("R@* (paper protocol)", "CXMArena's evaluator (the paper's Table 8): the top-k passages with "
                   "repeats removed, turns without gold articles as 0", counts="turns ranked"),
        MetricInfo("R@*", "share of the turn's gold articles among the top k distinct articles",
                   counts="turns ranked that have gold articles"),
        MetricInfo("hit@*", "a gold article in the top k", counts="turns ranked that have gold articles"),
        MetricInfo("MRR", "reciprocal rank of the first gold article", counts="turns ranked that have gold articles"),
        MetricInfo("turns", "conversation turns in the data", None, "count"),
        MetricInfo("ranked", "turns with a ranking", None, "count"),
        MetricInfo("turns with gold articles", "ranked turns that have gold articles", None, "count"),
        MetricInfo("errors", "turns whose query or search failed", False, "count"),
        MetricInfo("missing", "turns without a ranking", False, "count"),
        MetricInfo("passages truncated by the encoder", "passages longer than a local encoder reads (cut when "
                   "embedded)", False, "count"),
    )
    breakdowns = ()
    unit = "turns"

    def __init__(self, options: MultiTurnOptions, *, label: str | None = None):
        super().__init__(options, label=label)
        o = options
        self.strategy = query_strategy(o, scoring_file=o.predictions is not None)
        self.chunking = chunking_for(self.spec, o.chunk, o.chunk_overlap)
        self.book = P.PromptBook(o.judge_dir)
        self.cases: list[RagCase] = []

    def sample_id(self, sample: Any) -> str:
        return str(getattr(sample, "case_id", None) or sample.id)

    def load(self) -> list[Any]:
        self.cases = loaders.load_rag(self.data)
        if self.predictions_path is not None:
            self.articles = optional_articles(self.data, "multi-turn")
            return self.file_rows()
        self.articles = loaders.load_articles(self.data, "multi-turn")
        return list(self.cases)

    def llm_models(self) -> list[str]:
        if self.predictions_path is not None:
            return []
        models = [self.options.rewrite_model] if self.strategy == LLM_QUERY and self.options.rewrite_model else []
        return models + embedding_models(self.spec)

    def solver(self, ctx: RunContext) -> Solver[Any]:
        return FileRowsSolver() if self.predictions_path is not None else RetrievalSolver(self)

    def report(self, results: Sequence[SampleResult[Any]]) -> TaskReport:
        cases = self.cases if self.predictions_path is not None else [r.sample for r in results]
        report = S.score_multiturn(cases, self.prediction_rows(results), self.options.ks, self.predictions_path,
                                   self.articles)
        if self.predictions_path is None:
            report.task = f"multi-turn retrieval ({self.options.pipeline}, {describe_chunking(self.chunking)}, " \
                          f"{self.strategy} queries)"
        if self.index_info is not None:
            report.metrics.update(index_metrics(self.index_info))
            report.notes += index_notes(self.index_info)
        return self.cite(report, reference.multiturn(self.spec, self.chunking, self.options.ks,
                                                     query_formation(self.strategy, self.book),
                                                     self.predictions_path is not None, self.partial, report.metrics))

    def run_info(self, ctx: RunContext) -> dict[str, Any]:
        o = self.options
        models = {"pipeline": o.pipeline, "query_writer": o.rewrite_model} if self.predictions_path is None else {}
        return {**super().run_info(ctx), "query": self.strategy, "index": self.index_info, "models": models}

    def out_slug(self) -> list[str]:
        if self.predictions_path:
            return ["predictions"]
        chunk = [f"chunk{self.chunking.size}"] if self.chunking else []
        return [self.options.pipeline, *chunk, self.strategy]

"""`cxm-multiturn-retrieval`: the paper's Table 8. Each turn's conversation becomes a query that retrieves chunked
knowledge-base articles; Recall@k of the turn's gold articles at every k asked for, in one run. No generator, no judge.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import Field

from ragjudge.bench.cxm import prompts as P
from ragjudge.bench.cxm.bench import DATA_HELP, CxmData
from ragjudge.bench.cxm.kb_retrieval import INDEX, Cutoffs, KbRetrievalBench, embedding_models
from ragjudge.bench.cxm.multiturn_retrieval import data, paper
from ragjudge.bench.cxm.multiturn_retrieval.samples import turn_sample
from ragjudge.bench.cxm.multiturn_retrieval.scorers import PaperProtocol, paper_protocol
from ragjudge.bench.cxm.multiturn_retrieval.solver import RetrievalSolver
from ragjudge.bench.cxm.multiturn_retrieval.summary import score_multiturn
from ragjudge.bench.cxm.queries import (LLM_QUERY, ConversationQueryOptions, ConversationSearch, query_formation,
                                        query_strategy)
from ragjudge.bench.cxm.retrieve import CHUNK_HELP, Chunk, describe_chunking
from ragjudge.bench.cxm.rows import FileRow
from ragjudge.bench.cxm.summary import TaskReport
from ragjudge.engine.bench import Loaded, MetricInfo, SampleResult, Solver
from ragjudge.formats.samples import Sample

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext


class MultiTurnOptions(ConversationQueryOptions):
    chunk: Chunk = Field(500, description=CHUNK_HELP + " Table 8: 500 (the default); CXMArena's predictor: 1000.")
    ks: Cutoffs = Field(default_factory=lambda: [10, 20], min_length=1,
                        description="Cut-offs for Recall@k, each >= 1 (one run, any list).")


@dataclass(frozen=True, kw_only=True)
class TurnData(CxmData):
    """`ctx.data`: the turns by id, the articles, and which paper-protocol recall the run reports."""

    protocol: PaperProtocol


class MultiTurnRetrievalBench(KbRetrievalBench[MultiTurnOptions]):
    name = "cxm-multiturn-retrieval"
    task = "multiturn-retrieval"
    Options = MultiTurnOptions
    data_help = f"{DATA_HELP}\n\n{paper.SETUP}"
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
        self.book = P.PromptBook(o.judge_dir)

    def load(self) -> Loaded[Any, TurnData]:
        """The turns (or a predictions file's rows), with the turns by id, the articles and which paper-protocol
        recall the run reports (the summary's rule) as `ctx.data`."""
        cases, articles = data.load(self.data, scoring_file=self.predictions_path is not None)
        by_id = {c.case_id: c for c in cases}
        if self.predictions_path is not None:
            rows = self.file_rows()
            scored = [(r.row, by_id.get(str(r.row.get("case_id")))) for r in rows if not r.row.get("error")]
            protocol = paper_protocol([row.get("chunk_articles") is not None for row, _ in scored],
                                      [bool(case and case.kb_ids) for _, case in scored])
            return Loaded(rows, TurnData(by_id, articles, protocol=protocol))
        protocol = paper_protocol([self.chunking is not None] * len(cases), [bool(c.kb_ids) for c in cases])
        return Loaded(cases, TurnData(by_id, articles, protocol=protocol))

    def llm_models(self) -> list[str]:
        if self.predictions_path is not None:
            return []
        models = [self.options.rewrite_model] if self.strategy == LLM_QUERY and self.options.rewrite_model else []
        return models + embedding_models(self.spec)

    def model_solver(self, ctx: RunContext) -> Solver[Any]:
        search = ConversationSearch(self, self.strategy, self.options.rewrite_model, self.book)
        return RetrievalSolver(search, self.options.pipeline, max(self.options.ks))

    def report(self, results: Sequence[SampleResult[Any]], ctx: RunContext) -> TaskReport:
        report = score_multiturn(self.scored(results, ctx), self.prediction_rows(results), self.options.ks,
                                 self.predictions_path, ctx.data.articles)
        if self.predictions_path is None:
            report.task = f"multi-turn retrieval ({self.options.pipeline}, {describe_chunking(self.chunking)}, " \
                          f"{self.strategy} queries)"
        self.add_index(report, ctx)
        return report.cite(paper.beside(self.spec, self.chunking, self.options.ks,
                                        query_formation(self.strategy, self.book), self.predictions_path is not None,
                                        ctx.cut_by_limit, report.metrics))

    def sample(self, result: SampleResult[Any], ctx: RunContext) -> Sample:
        run: TurnData = ctx.data
        if isinstance(result.sample, FileRow):
            return turn_sample(result.sample.id, self.gold_of(result.output, ctx), result.output, self.options.ks,
                               run.protocol)
        return turn_sample(result.sample.case_id, result.sample, result.output, self.options.ks, run.protocol)

    def run_info(self, ctx: RunContext) -> dict[str, Any]:
        o = self.options
        models = {"pipeline": o.pipeline, "query_writer": o.rewrite_model} if self.predictions_path is None else {}
        return {**super().run_info(ctx), "query": self.strategy, "index": ctx.facts.get(INDEX), "models": models}

    def out_slug(self) -> list[str]:
        if self.predictions_path:
            return ["predictions"]
        chunk = [f"chunk{self.chunking.size}"] if self.chunking else []
        return [self.options.pipeline, *chunk, self.strategy]

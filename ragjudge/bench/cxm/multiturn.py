"""`cxm-multiturn-retrieval`: the paper's Table 8. Each multi-turn RAG turn's conversation becomes a query (the
customer's last message, all of their messages, or a query an LLM writes, as the paper does), which retrieves
knowledge-base articles, chunked as the paper's (500 or 1000 characters); Recall@k of the turn's gold articles
at every k asked for, in one run. No generator and no judge."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import Field, field_validator

from ragjudge.bench.base import MetricInfo, Record, SampleResult, Solver
from ragjudge.bench.cxm import loaders
from ragjudge.bench.cxm import prompts as P
from ragjudge.bench.cxm import score as S
from ragjudge.bench.cxm.base import FileRowsSolver, optional_articles
from ragjudge.bench.cxm.models import RagCase
from ragjudge.bench.cxm.paper import TABLE8_RETRIEVAL
from ragjudge.bench.cxm.report import TaskReport
from ragjudge.bench.cxm.retrieve import CHUNK_HELP, Chunk, chunking_for, describe_chunking, index_notes
from ragjudge.bench.cxm.runners import QUERY_STRATEGIES, conversation_query, form_query
from ragjudge.bench.cxm.search import Cutoffs, KbRetrievalBench, RetrievalOptions, embedding_models, index_metrics
from ragjudge.engine.parallel import each_as_completed
from ragjudge.errors import UsageError

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext

LLM_QUERY = "llm"


class MultiTurnOptions(RetrievalOptions):
    chunk: Chunk = Field(500, description=CHUNK_HELP + " Table 8: 500 (the default); CXMArena's predictor: 1000.")
    ks: Cutoffs = Field(default_factory=lambda: [10, 20], min_length=1,
                        description="Cut-offs for Recall@k, each >= 1 (one run, any list).")
    query: str | None = Field(None, description="How a conversation becomes a query: last_turn, all_user_turns, "
                              "full_conversation, or llm (an LLM writes it, as in the paper; needs --rewrite-model). "
                              "Default: llm with --rewrite-model, else all_user_turns.")
    rewrite_model: str | None = Field(None, description="The LLM (litellm name) that writes queries (-T query=llm).")
    judge_dir: list[str] = Field(default_factory=list, description="Extra folders of prompt specs "
                                 "(cxm_query_formation).")

    @field_validator("query")
    @classmethod
    def _known_query(cls, value: str | None) -> str | None:
        if value is not None and value not in (*QUERY_STRATEGIES, LLM_QUERY):
            raise ValueError(f"unknown strategy {value!r} (available: {', '.join((*QUERY_STRATEGIES, LLM_QUERY))})")
        return value


class RetrievalSolver(Solver[RagCase]):
    """Queries for every turn (LLM ones concurrently, through the gateway and its cache), then one batch search.
    Journaled: a rerun reuses the turns already ranked (and their LLM queries)."""

    def __init__(self, bench: MultiTurnRetrievalBench):
        self.bench = bench
        o = bench.options
        self.name = f"{o.pipeline}/{bench.strategy}"
        self.spec = bench.book.spec(P.QUERY_FORMATION) if bench.strategy == LLM_QUERY else None
        self.identity = P.fingerprint_of(self.spec, o.rewrite_model) if self.spec else bench.strategy

    def key(self, sample: RagCase) -> str:
        return sample.case_id

    def fingerprint(self, sample: RagCase) -> str:
        spec = self.bench.spec.model_dump_json()  # a pipeline file edited since: not the same system
        return P.fingerprint_of(None, spec, describe_chunking(self.bench.chunking), self.identity,
                                max(self.bench.options.ks))

    async def _queries(self, samples: Sequence[RagCase], ctx: RunContext) -> dict[str, Record]:
        if self.spec is None:
            return {c.case_id: {"query": conversation_query(c, self.bench.strategy)} for c in samples}
        model = self.bench.options.rewrite_model
        assert model
        advance = ctx.bars.bar(f"query formation ({model})", total=len(samples))
        out: dict[str, Record] = {}
        async for case, formed in each_as_completed(samples, lambda c: form_query(ctx.require_gateway(), c, model,
                                                                                  self.spec)):
            out[case.case_id] = formed
            advance(1)
        return out

    async def solve(self, samples: Sequence[RagCase], ctx: RunContext) -> AsyncIterator[tuple[str, Record]]:
        formed = await self._queries(samples, ctx)
        ok = [c for c in samples if not formed[c.case_id].get("error")]
        hits = []
        if ok:
            index = self.bench.open_index(ctx)
            try:
                hits = index.search([formed[c.case_id]["query"] for c in ok], max(self.bench.options.ks))
            finally:
                index.close()
        ranked = dict(zip([c.case_id for c in ok], hits, strict=True))
        for case in samples:
            row: Record = {"case_id": case.case_id, "query_strategy": self.bench.strategy, **formed[case.case_id]}
            if case.case_id in ranked:
                row["ranking"] = ranked[case.case_id].ranking
                if self.bench.chunking is not None:
                    row["chunk_articles"] = ranked[case.case_id].chunk_articles
            yield case.case_id, row


class MultiTurnRetrievalBench(KbRetrievalBench[MultiTurnOptions]):
    name = "cxm-multiturn-retrieval"
    task = "multiturn-retrieval"
    description = ("CXMArena multi-turn retrieval (Table 8): conversation → query (last turn, all user turns or "
                   "an LLM) → chunked KB search; Recall@k.")
    Options = MultiTurnOptions
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
        self.strategy = o.query or (LLM_QUERY if o.rewrite_model else "all_user_turns")
        if o.predictions is None and self.strategy == LLM_QUERY and not o.rewrite_model:
            raise UsageError("-T query=llm needs the model that writes queries: --rewrite-model MODEL")
        if self.strategy != LLM_QUERY and o.rewrite_model:
            raise UsageError(f"--rewrite-model is only used with -T query=llm, not {self.strategy}")
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
        report.reference = [TABLE8_RETRIEVAL]
        return report

    def run_info(self) -> dict[str, Any]:
        o = self.options
        models = {"pipeline": o.pipeline, "query_writer": o.rewrite_model} if self.predictions_path is None else {}
        return {**super().run_info(), "query": self.strategy, "index": self.index_info, "models": models}

    def out_slug(self) -> list[str]:
        if self.predictions_path:
            return ["predictions"]
        chunk = [f"chunk{self.chunking.size}"] if self.chunking else []
        return [self.options.pipeline, *chunk, self.strategy]

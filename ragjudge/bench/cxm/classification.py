"""`cxm-answer-classification`: reply to a multi-turn conversation from retrieved articles (or take the data's
replies); an LLM judge labels each reply Correct / Incorrect / Hallucination / Refusal."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import Field, field_validator

from ragjudge.bench.base import EachScorer, EachSolver, MetricInfo, Record, SampleResult, Scorer, Solver
from ragjudge.bench.cxm import loaders
from ragjudge.bench.cxm import prompts as P
from ragjudge.bench.cxm import score as S
from ragjudge.bench.cxm.base import CxmBench, CxmOptions, FileRowsSolver
from ragjudge.bench.cxm.models import Article, RagCase
from ragjudge.bench.cxm.report import TaskReport
from ragjudge.bench.cxm.paper import TABLE7_CLASSES
from ragjudge.bench.cxm.retrieve import (CHUNK_HELP, OVERLAP_HELP, Chunk, KbIndex, check_standalone, chunking_for,
                                         pipeline_for)
from ragjudge.bench.cxm.runners import QUERY_STRATEGIES, classify_response, conversation_query, generate_response
from ragjudge.errors import UsageError

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext


class ClassificationOptions(CxmOptions):
    gen: str | None = Field(None, description="The replier under test (litellm name); without it, the data's own "
                            "replies are classified.")
    judge_models: list[str] = Field(default_factory=list, description="The one judge model that labels replies.")
    pipeline: str = Field("bm25", description="Retrieval pipeline (name or YAML path; a name that is no pipeline "
                          "is a dense embedding model) for the articles behind generated replies.")
    k: int = Field(5, ge=1, description="Articles retrieved for each generated reply.")
    query: str = Field("all_user_turns", description="Retrieval query: last_turn, all_user_turns or "
                       "full_conversation.")
    chunk: Chunk = Field("pipeline", description=CHUNK_HELP + " Table 7: 1000.")
    chunk_overlap: int | None = Field(None, ge=0, description=OVERLAP_HELP)
    index_dir: str | None = Field(None, description="Where indexes are kept and reused (default: <cache>/indexes).")
    pipeline_dir: list[str] = Field(default_factory=list, description="Extra folders of pipeline specs.")
    judge_dir: list[str] = Field(default_factory=list, description="Extra folders of prompt specs (cxm_*).")

    @field_validator("query")
    @classmethod
    def _known_query(cls, value: str) -> str:
        if value not in QUERY_STRATEGIES:
            raise ValueError(f"unknown strategy {value!r} (available: {', '.join(QUERY_STRATEGIES)})")
        return value


def ranking_of(row: Record) -> list[str] | None:
    """The retrieved article ids of a row: `ranking`, or `retrieved_ids` in rows written before it was renamed."""
    return row.get("ranking") if row.get("ranking") is not None else row.get("retrieved_ids")


class ReplySolver(EachSolver[RagCase]):
    """Retrieve k articles for each conversation, then let the model reply to the last message from them."""

    def __init__(self, model: str, articles: dict[str, Article], options: ClassificationOptions, book: P.PromptBook):
        self.name = model
        self.model = model
        self.articles = articles
        self.options = options
        self.spec = book.spec(P.AGENT_RESPONSE)
        self.retrieved: dict[str, list[str]] = {}

    async def prepare(self, samples: Sequence[RagCase], ctx: RunContext) -> None:
        o = self.options
        spec = pipeline_for(o.pipeline, o.pipeline_dir)
        index = KbIndex(spec, self.articles, chunking=chunking_for(spec, o.chunk, o.chunk_overlap),
                        index_dir=o.index_dir, extra_dirs=o.pipeline_dir, gateway=ctx.gateway)
        try:
            index.open(ctx.bars)
            hits = index.search([conversation_query(c, o.query) for c in samples], o.k)
        finally:
            index.close()
        self.retrieved = {c.case_id: h.ranking for c, h in zip(samples, hits, strict=True)}

    def fingerprint(self, sample: RagCase) -> str:
        return P.fingerprint_of(self.spec, self.model, self.retrieved[sample.case_id])

    def key(self, sample: RagCase) -> str:
        return sample.case_id

    async def solve_one(self, sample: RagCase, ctx: RunContext) -> Record:
        return await generate_response(ctx.require_gateway(), sample, self.retrieved[sample.case_id], self.articles,
                                       self.model, self.spec)


class GivenRepliesSolver(Solver[RagCase]):
    """The replies the data already holds."""

    journaled = False
    name = "data replies"

    def fingerprint(self, sample: RagCase) -> str:
        return "data"

    async def solve(self, samples: Sequence[RagCase], ctx: RunContext) -> AsyncIterator[tuple[str, Record]]:
        for c in samples:
            yield c.case_id, {"case_id": c.case_id, "response": c.response, "ranking": c.retrieved_ids}


class ClassifyScorer(EachScorer[RagCase]):
    name = "classify"

    def __init__(self, judge_model: str, articles: dict[str, Article], book: P.PromptBook):
        self.judge_model = judge_model
        self.articles = articles
        self.spec = book.spec(P.ANSWER_CLASS)

    def fingerprint(self, sample: RagCase, output: Record) -> str:
        return P.fingerprint_of(self.spec, self.judge_model, output.get("response"), ranking_of(output))

    def key(self, sample: RagCase) -> str:
        return sample.case_id

    async def score_one(self, sample: RagCase, output: Record, ctx: RunContext) -> Record:
        return await classify_response(ctx.require_gateway(), sample, output, self.articles, self.judge_model,
                                       self.spec)


class AnswerClassificationBench(CxmBench[ClassificationOptions]):
    name = "cxm-answer-classification"
    task = "answer-classification"
    description = ("CXMArena multi-turn RAG: replies from retrieved articles, labelled Correct / Incorrect / "
                   "Hallucination / Refusal by an LLM judge.")
    Options = ClassificationOptions
    llm = "required"
    metrics = (
        MetricInfo("Correct share", "replies the judge labels Correct (the paper's Table 7)", True, "rate",
                   counts="replies classified"),
        MetricInfo("Incorrect share", "replies the judge labels Incorrect", False, "rate", counts="replies classified"),
        MetricInfo("Hallucination share", "replies the judge labels Hallucination: invented, not in the articles",
                   False, "rate", counts="replies classified"),
        MetricInfo("Refusal share", "replies the judge labels Refusal (right when the articles lack the answer)",
                   None, "rate", counts="replies classified"),
        MetricInfo("judge agreement with gold labels", "the judge's class equals the data's gold class",
                   counts="replies with a gold label"),
        MetricInfo("retrieval recall of gold articles", "share of the case's gold articles among the retrieved "
                   "ones (`ranking`)", counts="cases with gold articles and a ranking"),
        MetricInfo("cases", "conversation turns in the data", None, "count"),
        MetricInfo("classified", "replies with a class", None, "count"),
        MetricInfo("errors", "replies or verdicts that failed", False, "count"),
        MetricInfo("missing", "cases without a prediction", False, "count"),
    )
    breakdowns = ()
    unit = "replies"

    def __init__(self, options: ClassificationOptions, *, label: str | None = None):
        super().__init__(options, label=label)
        o = options
        if len(o.judge_models) > 1:
            raise UsageError(f"bench {self.name} takes one judge model, got {len(o.judge_models)}: "
                             f"{', '.join(o.judge_models)}")
        if o.predictions is None and not o.judge_models:
            raise UsageError(f"bench {self.name} needs a judge model (--judge-models MODEL)")
        if o.predictions is not None and (o.gen or o.judge_models):
            raise UsageError("-T predictions scores existing labels: --gen and --judge-models do not apply")
        check_standalone(pipeline_for(o.pipeline, o.pipeline_dir), o.pipeline)
        self.book = P.PromptBook(o.judge_dir)
        self.cases: list[RagCase] = []
        self.articles: dict[str, Article] = {}

    def sample_id(self, sample: Any) -> str:
        return str(getattr(sample, "case_id", None) or sample.id)

    def load(self) -> list[Any]:
        self.cases = loaders.load_rag(self.data)
        if self.predictions_path is not None:
            return self.file_rows()
        self.articles = loaders.load_articles(self.data, "multi-turn")
        if self.options.gen:
            return list(self.cases)
        given = [c for c in self.cases if c.response is not None]
        if not given:
            raise UsageError("the data has no responses to classify: give --gen MODEL to generate them")
        return given

    def llm_models(self) -> list[str]:
        return [m for m in (self.options.gen, *self.options.judge_models) if m]

    def solver(self, ctx: RunContext) -> Solver[Any]:
        if self.predictions_path is not None:
            return FileRowsSolver()
        if self.options.gen:
            return ReplySolver(self.options.gen, self.articles, self.options, self.book)
        return GivenRepliesSolver()

    def scorers(self, ctx: RunContext) -> list[Scorer[Any]]:
        if self.predictions_path is not None:
            return []
        return [ClassifyScorer(self.options.judge_models[0], self.articles, self.book)]

    def run_rows(self, result: SampleResult[Any]) -> list[dict[str, Any]]:
        given, verdict = result.output, result.scores.get("classify", {})
        row = {"case_id": given.get("case_id", result.sample.case_id), "response": given.get("response"),
               "ranking": ranking_of(given), "label": verdict.get("label"),
               "judge_model": self.options.judge_models[0], "judge_raw": verdict.get("judge_raw")}
        error = given.get("error") or verdict.get("error")
        return [{**row, "error": error} if error else row]

    def report(self, results: Sequence[SampleResult[Any]]) -> TaskReport:
        cases = self.cases if self.predictions_path is not None or not self.options.gen else \
            [r.sample for r in results]
        report = S.score_classification(cases, self.prediction_rows(results), self.predictions_path)
        report.reference = [TABLE7_CLASSES]
        return report

    def run_info(self) -> dict[str, Any]:
        o = self.options
        return {**super().run_info(), "models": {"generator": o.gen, "judge": o.judge_models[0] if o.judge_models
                                                 else None, "pipeline": o.pipeline if o.gen else None}}

    def out_slug(self) -> list[str]:
        return [self.options.gen or ("predictions" if self.predictions_path else "data-replies")]

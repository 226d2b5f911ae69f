"""`cxm-answer-classification`: reply to a multi-turn conversation from retrieved articles (or take the data's
replies); an LLM judge labels each reply Correct / Incorrect / Hallucination / Refusal (the paper's Table 7).

The articles are retrieved as `cxm-multiturn-retrieval` retrieves them, with the same options and code
(`queries`): `--pipeline`, `-T chunk` (default 1000, Table 7's), `-T query` (an LLM with CXMArena's
query-formation prompt given `--rewrite-model`), and `-T k` articles (default 10, CXMArena's predictor's)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import Field

from ragjudge.engine.bench import EachScorer, EachSolver, MetricInfo, Record, SampleResult, Scorer, Solver
from ragjudge.bench.cxm import loaders, reference, setups
from ragjudge.bench.cxm import prompts as P
from ragjudge.bench.cxm import score as S
from ragjudge.bench.cxm.base import FileRowsSolver
from ragjudge.bench.cxm.models import Article, RagCase
from ragjudge.bench.cxm.queries import (LLM_QUERY, ConversationQueryOptions, ConversationSearch, query_formation,
                                        query_strategy)
from ragjudge.bench.cxm.report import TaskReport
from ragjudge.bench.cxm.retrieve import CHUNK_HELP, Chunk, chunking_for, describe_chunking, index_notes
from ragjudge.bench.cxm.runners import classify_response, generate_response
from ragjudge.bench.cxm.search import KbRetrievalBench, embedding_models, index_metrics
from ragjudge.errors import UsageError

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext


class ClassificationOptions(ConversationQueryOptions):
    gen: str | None = Field(None, description="The replier under test (litellm name); without it, the data's own "
                            "replies are classified.")
    judge_models: list[str] = Field(default_factory=list, description="The one judge model that labels replies "
                                    "(the paper: GPT-4o).")
    k: int = Field(10, ge=1, description="Articles retrieved for each generated reply (CXMArena's predictor: 10).")
    chunk: Chunk = Field(1000, description=CHUNK_HELP + " Table 7: 1000 (the default).")


def ranking_of(row: Record) -> list[str] | None:
    """The retrieved article ids of a row: `ranking`, or `retrieved_ids` in rows written before it was renamed."""
    return row.get("ranking") if row.get("ranking") is not None else row.get("retrieved_ids")


class ReplySolver(EachSolver[RagCase]):
    """Retrieve k articles for each conversation as multi-turn retrieval does (`queries.ConversationSearch`: the
    same query strategies, LLM query formation and chunked search), then let the model reply to the last message
    from them. The retrieval is redone before each run (LLM queries come from the response cache); a reply is
    reused only for the same articles."""

    def __init__(self, bench: AnswerClassificationBench, model: str):
        self.name = model
        self.model = model
        self.bench = bench
        o = bench.options
        self.search = ConversationSearch(bench, bench.strategy, o.rewrite_model, bench.book)
        self.spec = bench.book.spec(P.AGENT_RESPONSE)
        self.retrieved: dict[str, Record] = {}

    async def prepare(self, samples: Sequence[RagCase], ctx: RunContext) -> None:
        self.retrieved = await self.search.rank(samples, ctx, self.bench.options.k)

    def fingerprint(self, sample: RagCase) -> str:
        return P.fingerprint_of(self.spec, self.model, self.retrieved[sample.case_id].get("ranking"))

    def key(self, sample: RagCase) -> str:
        return sample.case_id

    async def solve_one(self, sample: RagCase, ctx: RunContext) -> Record:
        found = self.retrieved[sample.case_id]
        query = {key: found[key] for key in ("query_strategy", "query") if key in found}
        if found.get("error"):
            return {"case_id": sample.case_id, **query, "error": f"query formation: {found['error']}"}
        row = await generate_response(ctx.require_gateway(), sample, found["ranking"], self.bench.articles or {},
                                      self.model, self.spec)
        return {**row, **query}


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


class AnswerClassificationBench(KbRetrievalBench[ClassificationOptions]):
    name = "cxm-answer-classification"
    task = "answer-classification"
    description = ("CXMArena multi-turn RAG: replies from retrieved articles, labelled Correct / Incorrect / "
                   "Hallucination / Refusal by an LLM judge.")
    Options = ClassificationOptions
    data_help = setups.data_help(setups.TABLE7)
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
        MetricInfo("passages truncated by the encoder", "passages longer than a local encoder reads (cut when "
                   "embedded)", False, "count"),
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
        if o.gen is None and o.rewrite_model:
            raise UsageError("--rewrite-model writes the retrieval queries of generated replies: give --gen MODEL")
        self.strategy = query_strategy(o, scoring_file=o.gen is None)
        self.chunking = chunking_for(self.spec, o.chunk, o.chunk_overlap)
        self.book = P.PromptBook(o.judge_dir)
        self.cases: list[RagCase] = []

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
        o = self.options
        if not o.gen:
            return list(o.judge_models)
        writer = [o.rewrite_model] if self.strategy == LLM_QUERY and o.rewrite_model else []
        return [o.gen, *writer, *embedding_models(self.spec), *o.judge_models]

    def solver(self, ctx: RunContext) -> Solver[Any]:
        if self.predictions_path is not None:
            return FileRowsSolver()
        if self.options.gen:
            return ReplySolver(self, self.options.gen)
        return GivenRepliesSolver()

    def scorers(self, ctx: RunContext) -> list[Scorer[Any]]:
        if self.predictions_path is not None:
            return []
        return [ClassifyScorer(self.options.judge_models[0], self.articles or {}, self.book)]

    def run_rows(self, result: SampleResult[Any]) -> list[dict[str, Any]]:
        given, verdict = result.output, result.scores.get("classify", {})
        query = {key: given[key] for key in ("query_strategy", "query") if key in given}
        row = {"case_id": given.get("case_id", result.sample.case_id), **query, "response": given.get("response"),
               "ranking": ranking_of(given), "label": verdict.get("label"),
               "judge_model": self.options.judge_models[0], "judge_raw": verdict.get("judge_raw")}
        error = given.get("error") or verdict.get("error")
        return [{**row, "error": error} if error else row]

    def report(self, results: Sequence[SampleResult[Any]]) -> TaskReport:
        cases = self.cases if self.predictions_path is not None or not self.options.gen else \
            [r.sample for r in results]
        report = S.score_classification(cases, self.prediction_rows(results), self.predictions_path)
        if self.index_info is not None:
            o = self.options
            report.task = (f"multi-turn answer classification ({o.gen} replies from the top {o.k} articles: "
                           f"{o.pipeline}, {describe_chunking(self.chunking)}, {self.strategy} queries)")
            report.metrics.update(index_metrics(self.index_info))
            report.notes += index_notes(self.index_info)
        o = self.options
        return self.cite(report, reference.classification(
            o.gen, o.judge_models[0] if o.judge_models else None, self.spec, self.chunking, o.k,
            query_formation(self.strategy, self.book), self.predictions_path is not None, self.partial,
            report.metrics))

    def run_info(self, ctx: RunContext) -> dict[str, Any]:
        o = self.options
        models = {"generator": o.gen, "judge": o.judge_models[0] if o.judge_models else None,
                  "pipeline": o.pipeline if o.gen else None, "query_writer": o.rewrite_model if o.gen else None}
        return {**super().run_info(ctx), "query": self.strategy if o.gen else None, "index": self.index_info,
                "models": models}

    def out_slug(self) -> list[str]:
        return [self.options.gen or ("predictions" if self.predictions_path else "data-replies")]

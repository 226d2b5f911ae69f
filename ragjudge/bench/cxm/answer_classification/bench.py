"""`cxm-answer-classification`: reply to a multi-turn conversation from retrieved articles (or take the data's
replies); an LLM judge labels each reply Correct / Incorrect / Hallucination / Refusal (the paper's Table 7).
The articles are retrieved as `cxm-multiturn-retrieval` retrieves them, same options and code (`queries`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import Field

from ragjudge.bench.cxm import prompts as P
from ragjudge.bench.cxm.answer_classification import data, paper
from ragjudge.bench.cxm.answer_classification.samples import reply_sample
from ragjudge.bench.cxm.answer_classification.scorers import ClassifyScorer
from ragjudge.bench.cxm.answer_classification.solver import GivenRepliesSolver, ReplySolver
from ragjudge.bench.cxm.answer_classification.summary import score_classification
from ragjudge.bench.cxm.bench import DATA_HELP, CxmData
from ragjudge.bench.cxm.data import load_rag
from ragjudge.bench.cxm.kb_retrieval import INDEX, KbRetrievalBench, embedding_models
from ragjudge.bench.cxm.queries import (LLM_QUERY, ConversationQueryOptions, ConversationSearch, query_formation,
                                        query_strategy)
from ragjudge.bench.cxm.retrieve import CHUNK_HELP, Chunk, describe_chunking
from ragjudge.bench.cxm.rows import FileRow
from ragjudge.bench.cxm.summary import TaskReport
from ragjudge.engine.bench import Loaded, MetricInfo, SampleResult, Scorer, Solver
from ragjudge.errors import UsageError
from ragjudge.formats.samples import Sample

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext


class ClassificationOptions(ConversationQueryOptions):
    gen: str | None = Field(None, description="The replier under test (litellm name); without it, the data's own "
                            "replies are classified.")
    judge_models: list[str] = Field(default_factory=list, description="The one judge model that labels replies "
                                    "(the paper: GPT-4o).")
    k: int = Field(10, ge=1, description="Articles retrieved for each generated reply (CXMArena's predictor: 10).")
    chunk: Chunk = Field(1000, description=CHUNK_HELP + " Table 7: 1000 (the default).")


class AnswerClassificationBench(KbRetrievalBench[ClassificationOptions]):
    name = "cxm-answer-classification"
    task = "answer-classification"
    Options = ClassificationOptions
    data_help = f"{DATA_HELP}\n\n{paper.SETUP}"
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
        self.book = P.PromptBook(o.judge_dir)

    def load(self) -> Loaded[Any, CxmData]:
        """The turns to classify (or a predictions file's rows), with the turns by id and the articles as
        `ctx.data`."""
        if self.predictions_path is not None:
            return Loaded(self.file_rows(), CxmData({c.case_id: c for c in load_rag(self.data)}))
        cases, todo, articles = data.load(self.data, generate=self.options.gen is not None)
        return Loaded(todo, CxmData({c.case_id: c for c in cases}, articles))

    def llm_models(self) -> list[str]:
        o = self.options
        if not o.gen:
            return list(o.judge_models)
        writer = [o.rewrite_model] if self.strategy == LLM_QUERY and o.rewrite_model else []
        return [o.gen, *writer, *embedding_models(self.spec), *o.judge_models]

    def model_solver(self, ctx: RunContext) -> Solver[Any]:
        if self.options.gen:
            search = ConversationSearch(self, self.strategy, self.options.rewrite_model, self.book)
            return ReplySolver(search, self.options.k, ctx.data.articles or {}, self.options.gen, self.book)
        return GivenRepliesSolver()

    def scorers(self, ctx: RunContext) -> list[Scorer[Any]]:
        if self.predictions_path is not None:
            return []
        return [ClassifyScorer(self.options.judge_models[0], ctx.data.articles or {}, self.book)]

    def run_rows(self, result: SampleResult[Any]) -> list[dict[str, Any]]:
        given, verdict = result.output, result.scores.get("classify", {})
        query = {key: given[key] for key in ("query_strategy", "query") if key in given}
        row = {"case_id": given.get("case_id", result.sample.case_id), **query, "response": given.get("response"),
               "ranking": data.ranking_of(given), "label": verdict.get("label"),
               "judge_model": self.options.judge_models[0], "judge_raw": verdict.get("judge_raw")}
        error = given.get("error") or verdict.get("error")
        return [{**row, "error": error} if error else row]

    def report(self, results: Sequence[SampleResult[Any]], ctx: RunContext) -> TaskReport:
        cases = list(ctx.data.cases.values()) if self.predictions_path is not None or not self.options.gen else \
            [r.sample for r in results]
        report = score_classification(cases, self.prediction_rows(results), self.predictions_path)
        o = self.options
        if self.add_index(report, ctx):
            report.task = (f"multi-turn answer classification ({o.gen} replies from the top {o.k} articles: "
                           f"{o.pipeline}, {describe_chunking(self.chunking)}, {self.strategy} queries)")
        return report.cite(paper.beside(
            o.gen, o.judge_models[0] if o.judge_models else None, self.spec, self.chunking, o.k,
            query_formation(self.strategy, self.book), self.predictions_path is not None, ctx.cut_by_limit,
            report.metrics))

    def sample(self, result: SampleResult[Any], ctx: RunContext) -> Sample:
        if isinstance(result.sample, FileRow):
            return reply_sample(result.sample.id, self.gold_of(result.output, ctx), result.output, result.output)
        verdict = {**result.scores.get("classify", {}), "judge_model": self.options.judge_models[0]}
        return reply_sample(result.sample.case_id, result.sample, result.output, verdict)

    def run_info(self, ctx: RunContext) -> dict[str, Any]:
        o = self.options
        models = {"generator": o.gen, "judge": o.judge_models[0] if o.judge_models else None,
                  "pipeline": o.pipeline if o.gen else None, "query_writer": o.rewrite_model if o.gen else None}
        return {**super().run_info(ctx), "query": self.strategy if o.gen else None, "index": ctx.facts.get(INDEX),
                "models": models}

    def out_slug(self) -> list[str]:
        return [self.options.gen or ("predictions" if self.predictions_path else "data-replies")]

"""`cxm-kb-refinement`: find similar and contradictory article pairs in a knowledge base, with the paper's embedding
baseline (Table 2, CXMArena's predictor's method: `scorers.py`; docs/benches/cxmarena.md, KB refinement). Unlike the
predictor, a pair counts whichever of its two articles finds the other. Embeddings cannot tell a contradiction from
an agreement, so contradictory pairs are predicted only by an LLM pair judge (`--judge-models`), or not at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import Field

from ragjudge.bench.cxm import prompts as P
from ragjudge.bench.cxm.bench import DATA_HELP, CxmBench, CxmOptions
from ragjudge.bench.cxm.data import load_articles, optional_articles
from ragjudge.bench.cxm.kb_refinement import data, paper
from ragjudge.bench.cxm.kb_refinement.samples import kb_sample, pair_sample
from ragjudge.bench.cxm.kb_refinement.scorers import PAPER_K, PAPER_THRESHOLD
from ragjudge.bench.cxm.kb_refinement.solver import KB, Baseline, BaselineSolver, Embedding, KbFileSolver
from ragjudge.bench.cxm.kb_refinement.summary import HELD_OUT, baseline_metric, baseline_name, kb_report
from ragjudge.bench.cxm.models import Article
from ragjudge.bench.cxm.retrieve import resolve_embedding_model
from ragjudge.bench.cxm.rows import FileRow
from ragjudge.bench.cxm.summary import TaskReport
from ragjudge.engine.bench import Loaded, MetricInfo, SampleResult, Solver
from ragjudge.errors import UsageError
from ragjudge.formats.samples import Sample

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext


class KbOptions(CxmOptions):
    gen: str | None = Field(None, description="Embedding model: bundled all-MiniLM-L6-v2 (default, offline), a "
                            "sentence-transformers model, or with -T encoder=litellm an embeddings API model.")
    encoder: str = Field("sentence-transformers", description="sentence-transformers or litellm (embeddings API "
                         "through the run's gateway: cached, retried, accounted).")
    threshold: float = Field(PAPER_THRESHOLD, ge=-1, le=1, description="Cosine similarity from which a "
                             "neighbour pair is predicted similar (CXMArena's predictor: 0.9).")
    k: int = Field(PAPER_K, ge=1, description="Nearest neighbours per article (CXMArena's predictor asks for 5, the "
                   "article itself included, so 4).")
    judge_models: list[str] = Field(default_factory=list, description="One LLM that judges nearest-neighbour "
                                    "pairs for contradictions; without it no contradictory pair is predicted.")
    judge_k: int | None = Field(None, ge=1, description="Neighbours per article sent to the contradiction judge "
                                "(default: k).")
    baseline: bool = Field(True, description="With -T predictions: also run the embedding baseline's threshold "
                           "analysis.")
    seed: int = Field(0, ge=0, description="Seed of the random half of the articles that picks the held-out threshold.")
    judge_dir: list[str] = Field(default_factory=list, description="Extra folders of prompt specs "
                                 "(cxm_contradiction).")


@dataclass(frozen=True)
class KbData:
    """`ctx.data`: the gold pairs by kind, and the articles (None: a predictions file without them)."""

    gold: dict[str, set[frozenset[str]]]
    articles: dict[str, Article] | None


class KbRefinementBench(CxmBench[KbOptions]):
    name = "cxm-kb-refinement"
    task = "kb-refinement"
    Options = KbOptions
    data_help = f"{DATA_HELP}\n\n{paper.SETUP}"
    metrics = (
        MetricInfo("similar precision", "predicted similar pairs (unordered) that are gold similar pairs"),
        MetricInfo("similar recall", "gold similar pairs predicted"),
        MetricInfo("similar F1", "harmonic mean of the two (the paper's Table 2)"),
        MetricInfo("contradictory precision", "predicted contradictory pairs that are gold contradictory pairs"),
        MetricInfo("contradictory recall", "gold contradictory pairs predicted"),
        MetricInfo("contradictory F1", "harmonic mean of the two"),
        MetricInfo("baseline:* held-out similar precision (test half)", "analysis of the embedding baseline "
                   "(baseline:MODEL, e.g. baseline:minilm; with -T predictions not the system scored): its pairs at "
                   "the threshold picked on a random half of the articles, scored on the other half"),
        MetricInfo("baseline:* held-out similar recall (test half)", "analysis of the embedding baseline: the same, "
                   "recall"),
        MetricInfo("baseline:* held-out similar F1 (test half)", "analysis of the embedding baseline: the same, F1"),
        MetricInfo("baseline:* oracle similar F1 (upper bound, not a result)", "analysis of the embedding baseline: "
                   "the best F1 of its threshold sweep, the threshold picked on the gold pairs themselves"),
        MetricInfo("baseline:* held-out threshold (picked on the dev half)", "analysis of the embedding baseline: "
                   "the threshold the dev half picks", None, "number"),
        MetricInfo("baseline:* oracle threshold (picked on all gold pairs: upper bound)", "analysis of the "
                   "embedding baseline: the threshold of the best F1 on all gold pairs", None, "number"),
        MetricInfo("contradiction judge errors", "article pairs the contradiction judge could not answer", False,
                   "count"),
        MetricInfo("articles truncated by the encoder", "articles longer than the local encoder reads (cut when "
                   "embedded)", False, "count"),
    )
    breakdowns = ()
    unit = "pairs"

    def __init__(self, options: KbOptions, *, label: str | None = None):
        super().__init__(options, label=label)
        o = options
        if o.encoder not in ("sentence-transformers", "litellm"):
            raise UsageError(f"-T encoder must be sentence-transformers or litellm, got {o.encoder!r}")
        if o.encoder == "litellm" and not o.gen:
            raise UsageError("-T encoder=litellm needs the embeddings model: --gen MODEL (e.g. "
                             "openai/text-embedding-3-large)")
        if len(o.judge_models) > 1:
            raise UsageError(f"bench {self.name} takes one contradiction judge model, got {len(o.judge_models)}")
        if o.predictions is not None and o.judge_models:
            raise UsageError("-T predictions scores existing pairs: --judge-models does not apply")
        self.embedding = Embedding(o.gen if o.encoder == "litellm" and o.gen else resolve_embedding_model(o.gen),
                                   o.encoder)
        self.book = P.PromptBook(o.judge_dir)

    @property
    def baseline(self) -> Baseline:
        o = self.options
        return Baseline(o.threshold, o.k, o.judge_models[0] if o.judge_models else None, o.judge_k)

    @property
    def model(self) -> str:
        """The embedding model."""
        return self.embedding.model

    def load(self) -> Loaded[Any, KbData]:
        """The whole KB as one sample (or a predictions file's rows), with the gold pairs and the articles as
        `ctx.data`."""
        gold = data.load_pairs(self.data)
        if self.predictions_path is not None:
            articles = optional_articles(self.data, "kb-refinement")
            if self.options.baseline and articles is None:
                raise UsageError("the embedding baseline needs the KB articles (kb_refinement_articles.jsonl, "
                                 "articles.jsonl or Articles/KB_refinement_articles); or pass -T baseline=false")
            return Loaded(self.file_rows(), KbData(gold, articles))
        articles = load_articles(self.data, "kb-refinement")
        if len(articles) < 2:
            raise UsageError("KB refinement needs at least two articles")
        return Loaded([data.WholeKb()], KbData(gold, articles))

    def llm_models(self) -> list[str]:
        embed = [self.model] if self.options.encoder == "litellm" and (
            self.predictions_path is None or self.options.baseline) else []
        return embed + list(self.options.judge_models)

    def solver(self, ctx: RunContext) -> Solver[Any]:
        if self.predictions_path is not None:
            return KbFileSolver(ctx.data.articles, self.embedding if self.options.baseline else None)
        return BaselineSolver(ctx.data.articles, self.embedding, self.baseline, self.book)

    def run_rows(self, result: SampleResult[Any]) -> list[dict[str, Any]]:
        return list(result.output.get("rows", []))

    def report(self, results: Sequence[SampleResult[Any]], ctx: RunContext) -> TaskReport:
        failures = [f for r in results for f in r.output.get("judge_failures") or []]
        report = kb_report(ctx.data.gold, self.prediction_rows(results), self.predictions_path, ctx.data.articles,
                           ctx.facts.get(KB), self.baseline, self.options.seed, self.model, failures)
        o = self.options
        report.cite(paper.beside(self.model, o.threshold, o.k, self.predictions_path is not None, report.metrics))
        report.headline += [(baseline_metric(baseline_name(self.model), HELD_OUT.format("F1")), "")]
        return report

    def sample(self, result: SampleResult[Any], ctx: RunContext) -> Sample:
        gold, articles = ctx.data.gold, ctx.data.articles
        if isinstance(result.sample, FileRow):
            return pair_sample(result.sample.id, result.output, gold, articles)
        kinds = ("similar", "contradictory") if self.options.judge_models else ("similar",)
        return kb_sample(result.sample.id, result.output, gold, kinds, len(articles or {}))

    def run_info(self, ctx: RunContext) -> dict[str, Any]:
        o = self.options
        return {**super().run_info(ctx), "models": {"embedding": self.model if self.predictions_path is None or
                                                    o.baseline else None,
                                                    "judge": o.judge_models[0] if o.judge_models else None}}

    def out_slug(self) -> list[str]:
        return ["predictions" if self.predictions_path else self.model.replace("/", "-")]

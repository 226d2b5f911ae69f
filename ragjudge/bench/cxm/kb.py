"""`cxm-kb-refinement`: find similar and contradictory article pairs in a knowledge base.

The baseline is the paper's (Table 2) and CXMArena's predictor's method: embed every article (bundled MiniLM,
any sentence-transformers model, or an embeddings API through litellm and the run's gateway), take each
article's k nearest neighbours, and predict "similar" for the pairs whose cosine similarity reaches a fixed
threshold (0.9, the predictor's default). Unlike the predictor, a pair counts whichever of its two articles
finds the other. Embeddings cannot tell a contradiction from an agreement, so contradictory pairs are predicted
only by an LLM pair judge (`--judge-models`, spec `cxm_contradiction`) reading the nearest-neighbour pairs, or
not at all. The threshold sweep, a threshold picked on held-out articles, and the oracle pick are reported as
an analysis beside the result (see `score.kb`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from ragjudge.engine.bench import MetricInfo, Record, SampleResult, Solver
from ragjudge.bench.cxm import loaders, reference, setups
from ragjudge.bench.cxm import metrics as M
from ragjudge.bench.cxm import prompts as P
from ragjudge.bench.cxm import score as S
from ragjudge.bench.cxm.base import CxmBench, CxmOptions, FileRowsSolver, optional_articles
from ragjudge.bench.cxm.models import Article
from ragjudge.bench.cxm.report import TaskReport
from ragjudge.bench.cxm.retrieve import encoder_truncation, resolve_embedding_model
from ragjudge.bench.cxm.runners import judge_contradiction
from ragjudge.bench.cxm.score.kb import (DEFAULT_THRESHOLDS, HELD_OUT, PAPER_K, PAPER_THRESHOLD, Candidates,
                                         baseline_analysis, baseline_metric, baseline_name)
from ragjudge.engine.parallel import each_as_completed
from ragjudge.errors import UsageError

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


class WholeKb(BaseModel):
    """The task has one item: the knowledge base."""

    model_config = ConfigDict(frozen=True)

    id: str = "kb"


class KbFileSolver(FileRowsSolver):
    """A system's pairs from a file; embeds the KB first when the baseline analysis is asked for."""

    def __init__(self, bench: KbRefinementBench):
        self.bench = bench

    async def prepare(self, samples: Sequence[Any], ctx: RunContext) -> None:
        if self.bench.options.baseline:
            await self.bench.embed(ctx)


class BaselineSolver(Solver[WholeKb]):
    """Similar pairs by embeddings and a fixed threshold; contradictory pairs by the LLM pair judge, if any."""

    def __init__(self, bench: KbRefinementBench):
        self.bench = bench
        self.name = bench.model
        self.judge = bench.book.spec(P.CONTRADICTION) if bench.options.judge_models else None
        self.journaled = self.judge is not None  # LLM verdicts are kept; the embedding part is cheap to redo

    async def prepare(self, samples: Sequence[WholeKb], ctx: RunContext) -> None:
        await self.bench.embed(ctx)

    def fingerprint(self, sample: WholeKb) -> str:
        o = self.bench.options
        judge = P.fingerprint_of(self.judge, o.judge_models, o.judge_k) if self.judge else None
        return P.fingerprint_of(None, self.bench.model, o.encoder, o.threshold, o.k, judge)

    async def _contradictions(self, ctx: RunContext) -> tuple[list[Record], list[Record]]:
        assert self.judge is not None
        b = self.bench
        cand = b.candidates(b.options.judge_k or b.options.k, ctx)
        pairs = list(zip(cand.first.tolist(), cand.second.tolist()))
        model = b.options.judge_models[0]
        advance = ctx.bars.bar(f"contradiction judge ({model})", total=len(pairs))
        rows, failures = [], []
        articles = [b.articles[i] for i in cand.ids]  # type: ignore[index]
        async for (i, j), verdict in each_as_completed(pairs, lambda p: judge_contradiction(
                ctx.require_gateway(), articles[p[0]], articles[p[1]], model, self.judge)):
            advance(1)
            pair = sorted((cand.ids[i], cand.ids[j]))
            if verdict.get("error"):
                failures.append({"pair": pair, **verdict})
            elif verdict["contradictory"]:
                rows.append({"kind": "contradictory", "pair": pair, "judge_model": model})
        return sorted(rows, key=lambda r: r["pair"]), sorted(failures, key=lambda r: r["pair"])

    async def solve(self, samples: Sequence[WholeKb], ctx: RunContext) -> AsyncIterator[tuple[str, Record]]:
        b = self.bench
        cand = b.candidates(b.options.k, ctx)
        rows: list[Record] = [{"kind": "similar", "pair": sorted(p), "threshold": b.options.threshold}
                              for p in cand.pairs(b.options.threshold)]
        rows.sort(key=lambda r: r["pair"])
        failures: list[Record] = []
        if self.judge is not None:
            found, failures = await self._contradictions(ctx)
            rows += found
        for sample in samples:
            yield sample.id, {"rows": rows, "judge_failures": failures}


class KbRefinementBench(CxmBench[KbOptions]):
    name = "cxm-kb-refinement"
    task = "kb-refinement"
    description = ("CXMArena KB refinement: similar pairs by embeddings (k nearest neighbours, fixed threshold), "
                   "contradictory pairs by an LLM pair judge.")
    Options = KbOptions
    data_help = setups.data_help(setups.TABLE2)
    llm = "optional"
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
        self.model = o.gen if o.encoder == "litellm" and o.gen else resolve_embedding_model(o.gen)
        self.book = P.PromptBook(o.judge_dir)
        self.gold: dict[str, set[frozenset[str]]] = {}
        self.articles: dict[str, Article] | None = None
        self.vectors: np.ndarray | None = None
        self.truncated: list[dict[str, Any]] = []
        self.embedded: tuple[int, int] | None = None
        """(article texts read from the embedding store, encoded now): a second score of the same KB encodes none."""
        self._candidates: dict[int, Candidates] = {}

    def load(self) -> list[Any]:
        self.gold = loaders.load_pairs(self.data)
        if self.predictions_path is not None:
            self.articles = optional_articles(self.data, "kb-refinement")
            if self.options.baseline and self.articles is None:
                raise UsageError("the embedding baseline needs the KB articles (kb_refinement_articles.jsonl, "
                                 "articles.jsonl or Articles/KB_refinement_articles); or pass -T baseline=false")
            return self.file_rows()
        self.articles = loaders.load_articles(self.data, "kb-refinement")
        if len(self.articles) < 2:
            raise UsageError("KB refinement needs at least two articles")
        return [WholeKb()]

    def llm_models(self) -> list[str]:
        embed = [self.model] if self.options.encoder == "litellm" and (
            self.predictions_path is None or self.options.baseline) else []
        return embed + list(self.options.judge_models)

    async def embed(self, ctx: RunContext) -> np.ndarray:
        """Unit-length article embeddings (title and text), once per run, with progress."""
        if self.vectors is None:
            assert self.articles is not None
            texts = [a.full_text for a in self.articles.values()]
            advance = ctx.bars.bar(f"embed articles ({self.model})", total=len(texts))
            if self.options.encoder == "litellm":
                from ragjudge.retrieval.encoders import LiteLLMEncoder

                encoder: Any = LiteLLMEncoder(self.model, gateway=ctx.require_gateway())
                self.vectors = await encoder.aencode(texts, advance)
            else:
                import asyncio

                from ragjudge.retrieval.encoders import SentenceTransformerEncoder

                encoder = SentenceTransformerEncoder(self.model)
                self.vectors = await asyncio.to_thread(encoder.encode, texts, advance)
                self.truncated = encoder_truncation(encoder, texts)
            distinct = len(set(texts))
            self.embedded = (distinct - encoder.encoded, encoder.encoded)
        return self.vectors

    def candidates(self, k: int, ctx: RunContext | None = None) -> Candidates:
        """Each article's k nearest neighbours as unordered pairs, by descending similarity."""
        if k not in self._candidates:
            assert self.vectors is not None and self.articles is not None
            advance = ctx.bars.bar(f"nearest neighbours (k={k})", total=len(self.vectors)) if ctx else None
            first, second, sim = M.nearest_pairs(self.vectors, k, on_progress=advance)
            self._candidates[k] = Candidates(list(self.articles), first, second, sim)
        return self._candidates[k]

    def solver(self, ctx: RunContext) -> Solver[Any]:
        return KbFileSolver(self) if self.predictions_path is not None else BaselineSolver(self)

    def run_rows(self, result: SampleResult[Any]) -> list[dict[str, Any]]:
        return list(result.output.get("rows", []))

    def report(self, results: Sequence[SampleResult[Any]]) -> TaskReport:
        o = self.options
        label = "MiniLM embeddings" if self.model == "minilm" else f"{self.model} embeddings"
        analysis = None
        if self.vectors is not None and self.gold.get("similar"):
            analysis = baseline_analysis(self.candidates(o.k), self.gold["similar"], DEFAULT_THRESHOLDS, o.seed)
        judged = self.predictions_path is not None or bool(o.judge_models)
        kinds = ("similar", "contradictory") if judged else ("similar",)
        baseline = baseline_name(self.model)
        report = S.score_pairs(self.gold, self.prediction_rows(results), self.predictions_path, self.articles,
                               analysis, f"{label}, k={o.k}", kinds, baseline)
        if self.predictions_path is None:
            report.task = f"KB refinement ({label}, k={o.k}, threshold {o.threshold})"
            method = "the paper's method" if (o.threshold, o.k) == (PAPER_THRESHOLD, PAPER_K) else \
                f"the paper's method with other settings: CXMArena's predictor uses threshold {PAPER_THRESHOLD} and " \
                f"{PAPER_K} neighbours"
            report.notes.insert(0, f"{baseline}: each article's {o.k} nearest neighbours by {label}, pairs with cosine "
                                f"similarity >= {o.threshold} predicted similar ({method})")
            official = M.official_knn_pairs(self.vectors, o.k + 1, o.threshold) if self.vectors is not None else set()
            mine = self.candidates(o.k).pairs(o.threshold)
            if len(official) != len(mine):
                report.notes.append(f"CXMArena's predictor would predict {len(official)} of these {len(mine)} pairs: "
                                    f"it keeps a pair only when the lower-numbered article finds the other")
            if not o.judge_models:
                report.notes.append("contradictory pairs are not predicted: embeddings cannot tell a contradiction; "
                                    "give --judge-models MODEL to have an LLM judge the nearest-neighbour pairs")
            failures = sum(len(r.output.get("judge_failures") or []) for r in results)
            if failures:
                first = next(f for r in results for f in r.output.get("judge_failures") or [])
                report.notes.append(f"{failures} pair(s) the contradiction judge could not answer, e.g. "
                                    f"{first['pair']}: {str(first.get('error'))[:200]}")
                report.metrics["contradiction judge errors"] = failures
                report.problems += failures
        elif analysis is not None:
            report.notes.insert(0, f"the figures named {baseline} are the embedding baseline's ({label}, k={o.k}), "
                                f"not those of the predictions scored")
        if self.embedded is not None:
            report.notes.append(f"article embeddings: {self.embedded[0]} read from the embedding store, "
                                f"{self.embedded[1]} encoded")
        for t in self.truncated:
            if t["truncated"]:
                report.notes.append(f"{t['encoder']} reads at most {t['max_tokens']} tokens: {t['truncated']} of "
                                    f"{t['passages']} articles are cut (longest {t['longest']} tokens)")
            report.metrics["articles truncated by the encoder"] = t["truncated"]
        self.cite(report, reference.kb(self.model, o.threshold, o.k, self.predictions_path is not None,
                                       report.metrics))
        report.headline += [(baseline_metric(baseline, HELD_OUT.format("F1")), "")]
        return report

    def run_info(self, ctx: RunContext) -> dict[str, Any]:
        o = self.options
        return {**super().run_info(ctx), "models": {"embedding": self.model if self.predictions_path is None or
                                                 o.baseline else None,
                                                 "judge": o.judge_models[0] if o.judge_models else None}}

    def out_slug(self) -> list[str]:
        return ["predictions" if self.predictions_path else self.model.replace("/", "-")]

"""`cxm-kb-refinement`: find similar and contradictory article pairs in a knowledge base."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from ragjudge.bench.base import MetricInfo, Record, SampleResult, Solver
from ragjudge.bench.cxm import loaders
from ragjudge.bench.cxm import score as S
from ragjudge.bench.cxm.base import CxmBench, CxmOptions, FileRowsSolver, optional_articles
from ragjudge.bench.cxm.metrics import pairs_above
from ragjudge.bench.cxm.models import Article
from ragjudge.bench.cxm.report import TaskReport
from ragjudge.bench.cxm.retrieve import resolve_embedding_model
from ragjudge.errors import UsageError

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext


class KbOptions(CxmOptions):
    gen: str | None = Field(None, description="Embedding model of the similarity baseline (default: the bundled "
                            "all-MiniLM-L6-v2, offline).")
    baseline: bool = Field(True, description="With -T predictions: also sweep the embedding-similarity baseline.")


class WholeKb(BaseModel):
    """The task has one item: the knowledge base."""

    model_config = ConfigDict(frozen=True)

    id: str = "kb"


class BaselineSolver(Solver[WholeKb]):
    """Every pair above the best threshold per kind, as the embedding baseline predicts them (offline)."""

    journaled = False

    def __init__(self, bench: KbRefinementBench):
        self.bench = bench
        self.name = bench.model

    def fingerprint(self, sample: WholeKb) -> str:
        return self.bench.model

    async def solve(self, samples: Sequence[WholeKb], ctx: RunContext) -> AsyncIterator[tuple[str, Record]]:
        baseline = self.bench.compute_baseline()
        rows = []
        for kind, best in baseline["best"].items():
            if best is None:
                continue
            above = pairs_above(baseline["ids"], baseline["similarity"], best["threshold"])
            for pair in sorted(sorted(p) for p in above):
                rows.append({"kind": kind, "pair": pair, "threshold": best["threshold"]})
        for sample in samples:
            yield sample.id, {"rows": rows}


class KbRefinementBench(CxmBench[KbOptions]):
    name = "cxm-kb-refinement"
    task = "kb-refinement"
    description = "CXMArena KB refinement: similar and contradictory article pairs; embedding-similarity baseline."
    Options = KbOptions
    llm = "no"
    metrics = (MetricInfo("<kind> precision / recall / F1", "over unordered article pairs, per kind"),
               MetricInfo("baseline best <kind> F1", "the embedding baseline at its best threshold"))
    breakdowns = ("pair kind", "threshold")

    def __init__(self, options: KbOptions, *, label: str | None = None):
        super().__init__(options, label=label)
        self.model = resolve_embedding_model(options.gen)
        self.gold: dict[str, set[frozenset[str]]] = {}
        self.articles: dict[str, Article] | None = None
        self.baseline: dict[str, Any] | None = None

    def load(self) -> list[Any]:
        self.gold = loaders.load_pairs(self.data)
        if self.predictions_path is not None:
            self.articles = optional_articles(self.data, "kb-refinement")
            if self.options.baseline and self.articles is None:
                raise UsageError("the embedding baseline needs the KB articles (kb_refinement_articles.jsonl, "
                                 "articles.jsonl or Articles/KB_refinement_articles); or pass -T baseline=false")
            return self.file_rows()
        self.articles = loaders.load_articles(self.data, "kb-refinement")
        return [WholeKb()]

    def compute_baseline(self) -> dict[str, Any]:
        if self.baseline is None:
            assert self.articles is not None
            self.baseline = S.embedding_baseline(self.articles, self.gold, self.model)
        return self.baseline

    def solver(self, ctx: RunContext) -> Solver[Any]:
        return FileRowsSolver() if self.predictions_path is not None else BaselineSolver(self)

    def run_rows(self, result: SampleResult[Any]) -> list[dict[str, Any]]:
        return list(result.output.get("rows", []))

    def reports(self, results: Sequence[SampleResult[Any]]) -> list[TaskReport]:
        label = "MiniLM embedding" if self.model == "minilm" else f"{self.model} embedding"
        use_baseline = self.predictions_path is None or self.options.baseline
        baseline = self.compute_baseline() if use_baseline else None
        report = S.score_pairs(self.gold, self.prediction_rows(results), self.predictions_path, self.articles,
                               baseline, label)
        if self.predictions_path is None:
            report.notes.append("predictions are the baseline's pairs at its best threshold per kind")
        return [report]

    def out_slug(self) -> list[str]:
        return ["predictions" if self.predictions_path else self.model]

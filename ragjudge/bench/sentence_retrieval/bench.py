"""`--bench sentence-retrieval`: rerank the 50 candidate Wikipedia sentences of each Reddit dialogue of Harel et al.
(SIGIR 2022) with any number of systems, tuned and tested over the paper's 50 splits (one summary: `summary.py`).

The bench holds what its options build (`lineup`); the run's state is its `SentenceRun` (`ctx.data`), and each
dialogue's whole-run figures are the run's facts (`evaluation.FIGURES`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator

from ragjudge.bench.sentence_retrieval import evaluation, protocol, samples
from ragjudge.bench.sentence_retrieval.data import REPOSITORY, Dialogue, find_splits, load_dialogues, load_splits
from ragjudge.bench.sentence_retrieval.evaluation import FIGURES, Protocol
from ragjudge.bench.sentence_retrieval.lineup import Overrides, resolve
from ragjudge.bench.sentence_retrieval.metrics import METRICS
from ragjudge.bench.sentence_retrieval.scorers import SystemScorer
from ragjudge.bench.sentence_retrieval.solver import QuerySolver
from ragjudge.bench.sentence_retrieval.summary import summarize
from ragjudge.bench.sentence_retrieval.systems import RankingMemo, System
from ragjudge.bench.sentence_retrieval.trec import trec_files
from ragjudge.engine.bench import Bench, BenchOptions, Loaded, MetricInfo, SampleResult, Scorer, Solver
from ragjudge.engine.context import RunContext
from ragjudge.engine.summary import Summary
from ragjudge.errors import UsageError
from ragjudge.formats.samples import Sample


class SentenceRetrievalOptions(BenchOptions):
    data: str = Field(description="Folder holding dialogues.json and wikipedia_grounded_dialogues.json (JSON array "
                      f"or JSON lines; from {REPOSITORY}, datasets/).")
    pipeline: list[str] = Field(default_factory=lambda: ["initial", "bm25_rerank", "lm_rerank"],
                                description="Reranker specs to compare (names in pipelines/rerank/ or YAML paths).")
    pipeline_dir: list[str] = Field(default_factory=list, description="Extra folders of reranker specs.")
    splits: str | None = Field(None, description="The splits file (default: val_test_splits.json in --data or "
                               "its evaluation/ folder).")
    no_splits: bool = Field(False, description="Score all dialogues at once (parameters then tuned on them).")
    collection: Literal["pool", "dialogue"] | None = Field(None, description="Collection statistics of every "
                                                           "BM25/LM system: the candidate pool or each dialogue's "
                                                           "candidates (default: each spec's own, pool).")
    rewrite_model: str | None = Field(None, description="litellm model for specs whose query strategy is rewrite.")
    cross_encoder: str | None = Field(None, description="Local cross-encoder folder for cross_encoder specs that "
                                      "name none.")
    candidates: int = Field(50, ge=0, description="Candidates every dialogue must have (0: any number).")
    tune_on: Literal["MAP", "nDCG@5", "MRR"] = Field("MAP", description="Metric the validation halves pick by "
                                                     "(NDCG@5, the paper's spelling, is nDCG@5).")
    permutations: int = Field(10_000, ge=1, description="Random permutations per significance test (at least 1).")
    seed: int = Field(0, ge=0, description="Seed of the permutation tests (a whole number >= 0).")
    alpha: float = Field(0.05, gt=0, lt=1, description="Significance level (after Bonferroni), between 0 and 1.")

    @field_validator("tune_on", mode="before")
    @classmethod
    def _tune_on(cls, value: Any) -> Any:
        """Any case (`ndcg@5`, the paper's `NDCG@5`) names the same metric."""
        if isinstance(value, str):
            return {m.lower(): m for m in METRICS}.get(value.strip().lower(), value)
        return value


@dataclass
class SentenceRun:
    """A run's own state (`ctx.data`): the splits `load` read (none with -T no_splits), and the systems the solver's
    `prepare` builds over the run's dialogues, sharing one memo of their rankings."""

    plan: Protocol
    systems: dict[str, System] = field(default_factory=dict)
    memo: RankingMemo = field(default_factory=RankingMemo)


class SentenceRetrievalBench(Bench[SentenceRetrievalOptions, Dialogue]):
    name = "sentence-retrieval"
    Options = SentenceRetrievalOptions
    data_help = (f"The dataset's two files cannot be downloaded by ragjudge: get datasets/dialogues.json, "
                 f"datasets/wikipedia_grounded_dialogues.json and evaluation/val_test_splits.json from {REPOSITORY} "
                 f"and pass their folder as --data. examples/sentret-mini is a small synthetic set in that format.")
    COUNTS = "the dialogues every system scored (each split's test half holds about half of them)"
    metrics = (MetricInfo("MAP", "mean average precision over each dialogue's candidates: the mean over the "
                          "splits of the test half's mean (top level: the best system's)", counts=COUNTS),
               MetricInfo("nDCG@5", "nDCG of the top 5, binary gains (the paper's NDCG@5)", counts=COUNTS),
               MetricInfo("MRR", "reciprocal rank of the first relevant sentence, no cut-off", counts=COUNTS))
    breakdowns = ("system", "type")
    unit = "dialogues"

    def __init__(self, options: SentenceRetrievalOptions, *, label: str | None = None):
        super().__init__(options, label=label)
        o = options
        if o.no_splits and o.splits:
            raise UsageError("-T splits and -T no_splits=true exclude each other")
        self.lineup = resolve(o.pipeline, Overrides(o.pipeline_dir, o.collection, o.rewrite_model, o.cross_encoder))

    def llm_models(self) -> list[str]:
        return self.lineup.llm_models()

    # -- the run -------------------------------------------------------------------------------------------

    def load(self) -> Loaded[Dialogue, SentenceRun]:
        o = self.options
        dialogues = load_dialogues(o.data, o.candidates)
        if o.no_splits:
            return Loaded(dialogues, SentenceRun(Protocol(None, None, o.tune_on)))
        path = Path(o.splits) if o.splits else find_splits(o.data)
        if path is None:
            raise UsageError(f"no splits file in {o.data} (nor in {Path(o.data) / 'evaluation'}): pass -T splits="
                             f"FILE (evaluation/val_test_splits.json from {REPOSITORY}) or -T no_splits=true")
        return Loaded(dialogues, SentenceRun(Protocol(load_splits(path, {d.id for d in dialogues}), str(path),
                                                      o.tune_on)))

    def _prepare(self, samples: Sequence[Dialogue], ctx: RunContext) -> None:
        """Build the systems over the dialogues this run scores (candidates are analysed once here)."""
        run: SentenceRun = ctx.data
        if run.plan.splits is not None:  # with --limit, fail before any work if a half would be empty
            protocol.split_masks(run.plan.splits, [d.id for d in samples], run.plan.source)
        run.systems.update(self.lineup.build(samples, ctx.gateway, run.memo))

    def solver(self, ctx: RunContext) -> Solver[Dialogue]:
        configs = [q for name in self.lineup.selected for q in self.lineup.query_configs(name)]
        return QuerySolver(configs, self._prepare)

    def scorers(self, ctx: RunContext) -> list[Scorer[Dialogue]]:
        order = sorted(self.lineup.selected, key=lambda n: self.lineup.reranker(n) == "rrf")
        run: SentenceRun = ctx.data
        return [SystemScorer(run.systems[name], run.memo) for name in order]

    def summarize(self, results: Sequence[SampleResult[Dialogue]], ctx: RunContext) -> Summary:
        """The run's evaluation and its summary; each dialogue's figures go to the run's facts (what `sample` and
        `rows` read: `evaluation` says why there)."""
        o, run = self.options, ctx.data
        evaluated = evaluation.evaluate(results, self.lineup.selected, run.plan)
        ctx.facts[FIGURES] = evaluation.dialogue_figures(evaluated) if evaluated is not None else {}
        descriptions = {name: run.systems[name].describe() for name in self.lineup.selected}
        return summarize(self, results, evaluated, descriptions, run.plan, permutations=o.permutations, seed=o.seed,
                         alpha=o.alpha)

    def sample(self, result: SampleResult[Dialogue], ctx: RunContext) -> Sample:
        return samples.dialogue_sample(result, self.lineup.selected, ctx.facts[FIGURES].get(result.sample.id))

    def rows(self, results: Sequence[SampleResult[Dialogue]], ctx: RunContext) -> list[dict[str, Any]]:
        return [samples.row(r, self.lineup.selected, ctx.facts[FIGURES].get(r.sample.id)) for r in results]

    def artifacts(self, results: Sequence[SampleResult[Dialogue]], summary: Summary,
                  ctx: RunContext) -> dict[str, str]:
        return trec_files(results, summary.details.get("systems") or {})

    def run_info(self, ctx: RunContext) -> dict[str, Any]:
        run: SentenceRun = ctx.data
        return {"data": self.options.data, "splits": run.plan.source,
                "systems": {n: {**run.systems[n].describe(), "spec": self.lineup.specs[n][0].record()}
                            for n in self.lineup.selected if n in run.systems},
                "metrics": list(METRICS), **({"models": {"llm": models}} if (models := self.llm_models()) else {})}

    def out_slug(self) -> list[str]:
        return [Path(self.options.data).resolve().name]

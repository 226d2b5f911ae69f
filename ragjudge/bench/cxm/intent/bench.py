"""`cxm-intent`: pick one intent per conversation from a taxonomy; exact-match and LLM-verified accuracy."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import Field

from ragjudge.bench.cxm import prompts as P
from ragjudge.bench.cxm.bench import DATA_HELP, PROTOCOL_HELP, CxmBench, CxmData, CxmOptions, check_protocol
from ragjudge.bench.cxm.intent import data, paper
from ragjudge.bench.cxm.intent.samples import intent_sample
from ragjudge.bench.cxm.intent.scorers import VerifyScorer
from ragjudge.bench.cxm.intent.solver import IntentSolver
from ragjudge.bench.cxm.intent.summary import PAPER_ACCURACY, score_intent
from ragjudge.bench.cxm.models import Taxonomy
from ragjudge.bench.cxm.rows import FileRow
from ragjudge.bench.cxm.summary import TaskReport
from ragjudge.engine.bench import Loaded, MetricInfo, SampleResult, Scorer, Solver
from ragjudge.errors import UsageError
from ragjudge.formats.samples import Sample

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext


class IntentOptions(CxmOptions):
    gen: str | None = Field(None, description="The model under test (litellm name).")
    judge_models: list[str] = Field(default_factory=list, description="One judge model for the LLM-verified "
                                    "match (a wrong label that means the same thing counts).")
    taxonomy: str | None = Field(None, description="Intent taxonomy to use (default: every taxonomy the data "
                                 "has gold intents for).")
    judge_dir: list[str] = Field(default_factory=list, description="Extra folders of prompt specs (cxm_*).")
    protocol: str = Field("ragjudge", description=PROTOCOL_HELP)


@dataclass(frozen=True, kw_only=True)
class IntentData(CxmData):
    """`ctx.data`: the gold conversations by id and the taxonomies."""

    taxonomies: dict[str, Taxonomy]


class IntentBench(CxmBench[IntentOptions]):
    name = "cxm-intent"
    task = "intent"
    Options = IntentOptions
    data_help = f"{DATA_HELP}\n\n{paper.SETUP}"
    metrics = (
        MetricInfo("accuracy (exact match)", "the answer, mapped onto the taxonomy conservatively (exact, then "
                   "ignoring case/spacing/separators, then difflib >= 0.85), is the gold intent",
                   counts="predictions that did not fail"),
        MetricInfo("accuracy (paper protocol: WRatio >= 70)", "CXMArena's evaluator: the answer fuzzy-mapped to its "
                   "closest label (thefuzz WRatio >= 70, else 'others'), then exact match",
                   counts="predictions that did not fail"),
        MetricInfo("accuracy (LLM-verified)", "a judge model accepts the predicted label as the gold intent (exact "
                   "matches by rule)", counts="predictions with a verdict"),
        MetricInfo("macro-F1", "mean F1 over the gold intents (of every taxonomy scored)",
                   counts="predictions that did not fail"),
        MetricInfo("level-1 accuracy", "two-level taxonomies: the first level of the label is right",
                   counts="predictions in two-level taxonomies"),
        MetricInfo("cases", "conversations with a gold intent (once per taxonomy)", None, "count"),
        MetricInfo("scored", "predictions scored (not failed, not missing)", None, "count"),
        MetricInfo("LLM-verified cases", "predictions with a judge's verdict", None, "count"),
        MetricInfo("unparsable answers", "answers with no readable intent (wrong for every gold intent)", False,
                   "count"),
        MetricInfo("out-of-taxonomy answers", "answers that map to no label of the taxonomy", False, "count"),
        MetricInfo("verification errors", "predictions the judge could not verify", False, "count"),
        MetricInfo("errors", "predictions that failed (left out of every figure)", False, "count"),
        MetricInfo("missing", "conversations without a prediction", False, "count"),
    )
    breakdowns = ("taxonomy (with several taxonomies; per-intent and confusion tables for each)",)
    unit = "conversations"

    def __init__(self, options: IntentOptions, *, label: str | None = None):
        super().__init__(options, label=label)
        if options.predictions is None:
            self.require_one_system()
        if options.predictions is not None and (options.gen or options.judge_models):
            raise UsageError("-T predictions scores existing predictions: --gen and --judge-models do not apply")
        if len(options.judge_models) > 1:
            raise UsageError(f"bench cxm-intent takes one judge model, got {len(options.judge_models)}: "
                             f"{', '.join(options.judge_models)}")
        check_protocol(options.protocol)
        self.book = P.PromptBook(options.judge_dir)

    def load(self) -> Loaded[Any, IntentData]:
        """The (taxonomy, conversation) pairs to predict (or a predictions file's rows), with the gold data as
        `ctx.data`."""
        cases, taxonomies = data.load_intent(self.data)
        gold = IntentData({c.case_id: c for c in cases}, taxonomies=taxonomies)
        if self.predictions_path is not None:
            return Loaded(self.file_rows(), gold)
        wanted = self.options.taxonomy
        names = [wanted.lower()] if wanted else [t for t in taxonomies if any(t in c.gold for c in cases)]
        for name in names:
            if name not in taxonomies:
                raise UsageError(f"unknown taxonomy {name!r} (available: {', '.join(taxonomies)})")
            if not any(name in c.gold for c in cases):
                raise UsageError(f"no conversation has a gold intent in taxonomy {name!r}")
        if not names:
            raise UsageError("no conversation has a gold intent")
        return Loaded([data.IntentSample(id=f"{name}/{c.case_id}", taxonomy=name, case=c)
                       for name in names for c in cases if name in c.gold], gold)

    def llm_models(self) -> list[str]:
        return [m for m in (self.options.gen, *self.options.judge_models) if m]

    def model_solver(self, ctx: RunContext) -> Solver[Any]:
        assert self.options.gen
        return IntentSolver(self.options.gen, ctx.data.taxonomies, self.book)

    def scorers(self, ctx: RunContext) -> list[Scorer[Any]]:
        if self.predictions_path is not None or not self.options.judge_models:
            return []
        return [VerifyScorer(self.options.judge_models[0], ctx.data.taxonomies, self.book)]

    def run_rows(self, result: SampleResult[Any]) -> list[dict[str, Any]]:
        verdict = {k: v for k, v in result.scores.get("verify", {}).items() if k != "error"}
        return [{**result.output, **verdict}]  # a judge failure is not a prediction failure (verify_error)

    def report(self, results: Sequence[SampleResult[Any]], ctx: RunContext) -> TaskReport:
        rows, gold = self.prediction_rows(results), ctx.data
        cases = list(gold.cases.values())
        if self.predictions_path is not None:
            report = score_intent(cases, gold.taxonomies, rows, self.predictions_path, self.options.taxonomy,
                                  self.options.protocol)
        else:
            only = {name: mine for name in gold.taxonomies  # (--limit may leave a taxonomy out)
                    if (mine := [r.sample.case for r in results if r.sample.taxonomy == name])}
            report = score_intent(cases, gold.taxonomies, rows, taxonomy=None, protocol=self.options.protocol,
                                  only=only)
        taxonomies = list(report.details.get("taxonomies") or {})
        if "taxonomy" in report.breakdowns:
            accuracy = {name: group.metrics[PAPER_ACCURACY].value
                        for name, group in report.breakdowns["taxonomy"].groups.items()}
        else:
            accuracy = {name: report.metrics.get(PAPER_ACCURACY) for name in taxonomies}
        return report.cite(paper.beside(self.options.gen, self.predictions_path is not None, ctx.cut_by_limit,
                                        accuracy))

    def sample(self, result: SampleResult[Any], ctx: RunContext) -> Sample:
        row, sample, gold = result.output, result.sample, ctx.data
        if isinstance(sample, FileRow):
            name = row.get("taxonomy")
            name = str(name).lower() if name is not None else next(iter(gold.taxonomies)) \
                if len(gold.taxonomies) == 1 else None
            return intent_sample(sample.id, self.gold_of(row, ctx), gold.taxonomies.get(name) if name else None, row)
        return intent_sample(sample.id, sample.case, gold.taxonomies[sample.taxonomy], row,
                             result.scores.get("verify"))

    def run_info(self, ctx: RunContext) -> dict[str, Any]:
        o = self.options
        return {**super().run_info(ctx), "models": {"generator": o.gen, "judge": o.judge_models[0] if o.judge_models
                                                    else None}}

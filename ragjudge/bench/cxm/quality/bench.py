"""`cxm-quality`: answer an agent-quality questionnaire (True/False/NA) about a conversation, citing messages."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import Field

from ragjudge.bench.cxm import prompts as P
from ragjudge.bench.cxm.bench import DATA_HELP, PROTOCOL_HELP, CxmBench, CxmData, CxmOptions, check_protocol
from ragjudge.bench.cxm.quality import data, paper
from ragjudge.bench.cxm.quality.samples import quality_sample
from ragjudge.bench.cxm.quality.solver import QualitySolver
from ragjudge.bench.cxm.quality.summary import PAPER_ACCURACY, score_quality
from ragjudge.bench.cxm.rows import FileRow
from ragjudge.bench.cxm.summary import TaskReport
from ragjudge.engine.bench import Loaded, MetricInfo, SampleResult, Solver
from ragjudge.formats.samples import Sample

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext


class QualityOptions(CxmOptions):
    gen: str | None = Field(None, description="The model under test (litellm name).")
    judge_dir: list[str] = Field(default_factory=list, description="Extra folders of prompt specs (cxm_*).")
    protocol: str = Field("ragjudge", description=PROTOCOL_HELP)


class QualityBench(CxmBench[QualityOptions]):
    name = "cxm-quality"
    task = "quality"
    Options = QualityOptions
    data_help = f"{DATA_HELP}\n\n{paper.SETUP}"
    metrics = (
        MetricInfo("question accuracy", "answers (True/False/NA) equal to the gold answer; a question left "
                   "unanswered is wrong", counts="questions of the conversations scored"),
        MetricInfo("question accuracy (paper protocol: unanswered skipped)", "CXMArena's evaluator: the same, a "
                   "question left unanswered skipped", counts="questions answered"),
        MetricInfo("question precision (true)", "of the questions answered True, the share that are True"),
        MetricInfo("question recall (true)", "of the questions whose gold answer is True, the share answered True"),
        MetricInfo("question F1 (true)", "harmonic mean of the two"),
        MetricInfo("case accuracy (all questions right)", "conversations with every question right (the paper's "
                   "case level)", counts="conversations scored"),
        MetricInfo("evidence precision", "cited message ids that are gold evidence",
                   counts="questions with gold evidence"),
        MetricInfo("evidence recall", "gold evidence ids cited", counts="questions with gold evidence"),
        MetricInfo("evidence F1", "harmonic mean of the two", counts="questions with gold evidence"),
        MetricInfo("cases", "conversations in the data", None, "count"),
        MetricInfo("scored cases", "conversations scored", None, "count"),
        MetricInfo("questions", "questions scored", None, "count"),
        MetricInfo("questions answered", "questions the model answered (what the paper protocol scores)", None,
                   "count"),
        MetricInfo("questions with gold evidence", "questions whose gold data lists supporting messages", None,
                   "count"),
        MetricInfo("unreadable answers", "questions left unanswered or answered with no True/False/NA", False,
                   "count"),
        MetricInfo("questions with malformed gold evidence", "questions whose gold evidence names no message of "
                   "the conversation (or the wrong speaker's): their answers are scored, their evidence is not", None,
                   "count"),
        MetricInfo("errors", "conversations whose prediction failed", False, "count"),
        MetricInfo("missing", "conversations without a prediction", False, "count"),
    )
    breakdowns = ()
    unit = "conversations"

    def __init__(self, options: QualityOptions, *, label: str | None = None):
        super().__init__(options, label=label)
        self.require_one_system()
        check_protocol(options.protocol)
        self.book = P.PromptBook(options.judge_dir)

    def load(self) -> Loaded[Any, CxmData]:
        cases = data.load_quality(self.data)
        gold = CxmData({c.case_id: c for c in cases})
        return Loaded(self.file_rows() if self.predictions_path is not None else cases, gold)

    def llm_models(self) -> list[str]:
        return [self.options.gen] if self.options.gen else []

    def model_solver(self, ctx: RunContext) -> Solver[Any]:
        assert self.options.gen
        return QualitySolver(self.options.gen, self.book)

    def report(self, results: Sequence[SampleResult[Any]], ctx: RunContext) -> TaskReport:
        report = score_quality(self.scored(results, ctx), self.prediction_rows(results), self.predictions_path,
                               self.options.protocol)
        return report.cite(paper.beside(self.options.gen, self.predictions_path is not None, ctx.cut_by_limit,
                                        report.metrics, PAPER_ACCURACY, "case accuracy (all questions right)"))

    def sample(self, result: SampleResult[Any], ctx: RunContext) -> Sample:
        if isinstance(result.sample, FileRow):
            return quality_sample(result.sample.id, self.gold_of(result.output, ctx), result.output)
        return quality_sample(result.sample.case_id, result.sample, result.output)

    def run_info(self, ctx: RunContext) -> dict[str, Any]:
        return {**super().run_info(ctx), "models": {"generator": self.options.gen}}

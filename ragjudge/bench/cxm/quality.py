"""`cxm-quality`: answer an agent-quality questionnaire (True/False/NA) about a conversation, citing messages."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import Field

from ragjudge.engine.bench import EachSolver, MetricInfo, Record, SampleResult, Solver
from ragjudge.bench.cxm import loaders, reference, setups
from ragjudge.bench.cxm import prompts as P
from ragjudge.bench.cxm import score as S
from ragjudge.bench.cxm.base import PROTOCOL_HELP, CxmBench, CxmOptions, FileRowsSolver, check_protocol
from ragjudge.bench.cxm.models import QualityCase
from ragjudge.bench.cxm.report import TaskReport
from ragjudge.bench.cxm.runners import predict_quality
from ragjudge.bench.cxm.score.quality import PAPER_ACCURACY

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext


class QualityOptions(CxmOptions):
    gen: str | None = Field(None, description="The model under test (litellm name).")
    judge_dir: list[str] = Field(default_factory=list, description="Extra folders of prompt specs (cxm_*).")
    protocol: str = Field("ragjudge", description=PROTOCOL_HELP)


class QualitySolver(EachSolver[QualityCase]):
    def __init__(self, model: str, book: P.PromptBook):
        self.name = model
        self.model = model
        self.spec = book.spec(P.QUALITY)

    def fingerprint(self, sample: QualityCase) -> str:
        return P.fingerprint_of(self.spec, self.model)

    def key(self, sample: QualityCase) -> str:
        return sample.case_id

    async def solve_one(self, sample: QualityCase, ctx: RunContext) -> Record:
        return await predict_quality(ctx.require_gateway(), sample, self.model, self.spec)


class QualityBench(CxmBench[QualityOptions]):
    name = "cxm-quality"
    task = "quality"
    description = "CXMArena agent quality adherence: True/False/NA answers to quality questions, with evidence."
    Options = QualityOptions
    data_help = setups.data_help(setups.TABLE5)
    llm = "optional"
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
        self.cases: list[QualityCase] = []

    def sample_id(self, sample: Any) -> str:
        return str(getattr(sample, "case_id", None) or sample.id)

    def load(self) -> list[Any]:
        self.cases = loaders.load_quality(self.data)
        return self.file_rows() if self.predictions_path is not None else list(self.cases)

    def llm_models(self) -> list[str]:
        return [self.options.gen] if self.options.gen else []

    def solver(self, ctx: RunContext) -> Solver[Any]:
        if self.predictions_path is not None:
            return FileRowsSolver()
        assert self.options.gen
        return QualitySolver(self.options.gen, self.book)

    def report(self, results: Sequence[SampleResult[Any]]) -> TaskReport:
        cases = self.cases if self.predictions_path is not None else [r.sample for r in results]
        report = S.score_quality(cases, self.prediction_rows(results), self.predictions_path, self.options.protocol)
        return self.cite(report, reference.quality(self.options.gen, self.predictions_path is not None, self.partial,
                                                   report.metrics, PAPER_ACCURACY, "case accuracy (all questions right)"))

    def run_info(self, ctx: RunContext) -> dict[str, Any]:
        return {**super().run_info(ctx), "models": {"generator": self.options.gen}}

"""`cxm-quality`: answer an agent-quality questionnaire (True/False/NA) about a conversation, citing messages."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import Field

from ragjudge.bench.base import EachSolver, MetricInfo, Record, SampleResult, Solver
from ragjudge.bench.cxm import loaders
from ragjudge.bench.cxm import prompts as P
from ragjudge.bench.cxm import score as S
from ragjudge.bench.cxm.base import PROTOCOL_HELP, CxmBench, CxmOptions, FileRowsSolver, check_protocol
from ragjudge.bench.cxm.models import QualityCase
from ragjudge.bench.cxm.report import TaskReport
from ragjudge.bench.cxm.runners import predict_quality
from ragjudge.errors import UsageError

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
    llm = "optional"
    metrics = (MetricInfo("question accuracy", "answers equal to the gold answer"),
               MetricInfo("case accuracy (all questions right)", "conversations with every question right"),
               MetricInfo("evidence precision / recall", "cited message ids against the gold evidence"))
    breakdowns = ("question",)

    def __init__(self, options: QualityOptions, *, label: str | None = None):
        super().__init__(options, label=label)
        if (options.predictions is None) == (options.gen is None):
            raise UsageError("bench cxm-quality needs a model under test (--gen MODEL) or -T predictions=FILE, "
                             "not both" if options.gen else
                             "bench cxm-quality needs a model under test (--gen MODEL) or -T predictions=FILE")
        check_protocol(options.protocol)
        self.book = P.PromptBook(options.judge_dir)
        self.cases: list[QualityCase] = []

    def sample_id(self, sample: Any) -> str:
        return str(getattr(sample, "case_id", None) or sample.id)

    def load(self) -> list[Any]:
        self.cases = loaders.load_quality(self.data)
        return self.file_rows() if self.predictions_path is not None else [c for c in self.cases if not c.error]

    def llm_models(self) -> list[str]:
        return [self.options.gen] if self.options.gen else []

    def solver(self, ctx: RunContext) -> Solver[Any]:
        if self.predictions_path is not None:
            return FileRowsSolver()
        assert self.options.gen
        return QualitySolver(self.options.gen, self.book)

    def reports(self, results: Sequence[SampleResult[Any]]) -> list[TaskReport]:
        cases = self.cases if self.predictions_path is not None else \
            [r.sample for r in results] + [c for c in self.cases if c.error]
        return [S.score_quality(cases, self.prediction_rows(results), self.predictions_path, self.options.protocol)]

"""`cxm-tool-calls`: call the right tools through function calling, offered 16 to 128 tools."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from ragjudge.engine.bench import EachSolver, MetricInfo, Record, SampleResult, Solver
from ragjudge.bench.cxm import loaders, reference, setups
from ragjudge.bench.cxm import prompts as P
from ragjudge.bench.cxm import score as S
from ragjudge.bench.cxm.base import CxmBench, CxmOptions, FileRowsSolver, optional_articles
from ragjudge.bench.cxm.models import Article, ToolCase
from ragjudge.bench.cxm.report import TaskReport
from ragjudge.bench.cxm.runners import call_tools, offered_tools

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext

DEFAULT_TOOL_COUNTS = [16, 32, 64, 96, 128]


class ToolOptions(CxmOptions):
    gen: str | None = Field(None, description="The model under test (litellm name, with function calling).")
    tool_counts: list[Annotated[int, Field(ge=1)]] = Field(
        default_factory=lambda: list(DEFAULT_TOOL_COUNTS), min_length=1,
        description="Numbers of offered tools, each >= 1 (the expected ones plus distractors).")
    force_tool_call: bool = Field(False, description="Require a tool call (tool_choice=required).")
    judge_dir: list[str] = Field(default_factory=list, description="Extra folders of prompt specs (cxm_*).")


class ToolSample(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    case: ToolCase
    offered: list[str]


class ToolSolver(EachSolver[ToolSample]):
    def __init__(self, model: str, catalog: dict[str, dict[str, Any]], articles: dict[str, Article],
                 book: P.PromptBook, forced: bool):
        self.name = model
        self.model = model
        self.catalog = catalog
        self.articles = articles
        self.forced = forced
        self.spec = book.spec(P.TOOL_CALL)

    def fingerprint(self, sample: ToolSample) -> str:
        return P.fingerprint_of(self.spec, self.model, "forced" if self.forced else "auto", sample.offered)

    async def solve_one(self, sample: ToolSample, ctx: RunContext) -> Record:
        kb = [{"id": a.id, "text": a.text} for k in sample.case.kb_ids if (a := self.articles.get(k)) is not None]
        return await call_tools(ctx.require_gateway(), sample.case, sample.offered, self.catalog, self.model,
                                self.spec, kb, forced=self.forced)


class ToolCallsBench(CxmBench[ToolOptions]):
    name = "cxm-tool-calls"
    task = "tool-calls"
    description = "CXMArena tool calling: pick the right tools (and arguments) among 16 to 128 offered."
    Options = ToolOptions
    data_help = setups.data_help(setups.TABLE9)
    llm = "optional"
    metrics = (
        MetricInfo("*tool-selection accuracy @* tools", "the same, with N tools offered (the paper's Table 9)",
                   counts="predictions with N tools offered"),
        MetricInfo("*tool-selection accuracy", "the sorted set of called tool names equals the gold set "
                   "(prefixed auto/forced when both modes ran)", counts="predictions that did not fail"),
        MetricInfo("*argument match", "every gold call made with the gold arguments",
                   counts="predictions whose gold gives arguments"),
        MetricInfo("*argument values right", "gold argument values the calls got right",
                   counts="gold argument values"),
        MetricInfo("*no tool called", "the model called no tool (every case needs one)", False, "rate",
                   counts="predictions that did not fail"),
        MetricInfo("cases", "conversations in the data", None, "count"),
        MetricInfo("predictions", "(case, number of offered tools) predictions scored", None, "count"),
        MetricInfo("errors", "predictions that failed", False, "count"),
        MetricInfo("missing", "cases without any prediction", False, "count"),
    )
    breakdowns = ()
    unit = "predictions"

    def __init__(self, options: ToolOptions, *, label: str | None = None):
        super().__init__(options, label=label)
        self.require_one_system()
        self.book = P.PromptBook(options.judge_dir)
        self.cases: list[ToolCase] = []
        self.tools: dict[str, dict[str, Any]] = {}
        self.notes: list[str] = []
        self.never_offered: list[ToolCase] = []
        self.offered_by_data: dict[int, bool] = {}
        """For each number of offered tools, whether every case's offer is the data's own candidate list."""

    def load(self) -> list[Any]:
        self.tools = loaders.load_tool_catalog(self.data)
        self.cases = loaders.load_tool_cases(self.data, self.tools)
        if self.predictions_path is not None:
            return self.file_rows()
        mode = "forced" if self.options.force_tool_call else "auto"
        samples, skipped = [], {}
        for case in self.cases:
            for size in self.options.tool_counts:
                offered = offered_tools(case, list(self.tools), size)
                if offered is None:
                    skipped[size] = skipped.get(size, 0) + 1
                    continue
                samples.append(ToolSample(id=f"{case.case_id}@{size}/{mode}", case=case, offered=offered))
        self.offered_by_data = {size: all(size in c.candidates for c in self.cases)
                                for size in self.options.tool_counts}
        self.notes = [f"{n} case(s) not run with {size} tools: the catalog has only {len(self.tools)} tools"
                      for size, n in sorted(skipped.items())]
        offered_ids = {s.case.case_id for s in samples}
        self.never_offered = [c for c in self.cases if c.case_id not in offered_ids]  # reported as missing
        return samples

    def llm_models(self) -> list[str]:
        return [self.options.gen] if self.options.gen else []

    def solver(self, ctx: RunContext) -> Solver[Any]:
        if self.predictions_path is not None:
            return FileRowsSolver()
        assert self.options.gen
        articles = optional_articles(self.data, "multi-turn") or {}
        return ToolSolver(self.options.gen, self.tools, articles, self.book, self.options.force_tool_call)

    def report(self, results: Sequence[SampleResult[Any]]) -> TaskReport:
        if self.predictions_path is not None:
            cases = self.cases
        else:
            cases = list({r.sample.case.case_id: r.sample.case for r in results}.values()) + self.never_offered
        report = S.score_tools(cases, self.prediction_rows(results), self.predictions_path)
        report.notes = self.notes + report.notes
        metric = "tool-selection accuracy @{n} tools" if not any(k.startswith(("auto ", "forced "))
                                                                  for k in report.metrics) else \
            "auto tool-selection accuracy @{n} tools"
        return self.cite(report, reference.tools(self.options.gen, self.options.force_tool_call, self.offered_by_data,
                                                 self.predictions_path is not None, self.partial, report.metrics,
                                                 metric))

    def run_info(self, ctx: RunContext) -> dict[str, Any]:
        return {**super().run_info(ctx), "models": {"generator": self.options.gen}}

"""`cxm-tool-calls`: call the right tools through function calling, offered 16 to 128 tools."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from ragjudge.bench.cxm import prompts as P
from ragjudge.bench.cxm.bench import DATA_HELP, CxmBench, CxmData, CxmOptions
from ragjudge.bench.cxm.data import optional_articles
from ragjudge.bench.cxm.rows import FileRow
from ragjudge.bench.cxm.summary import TaskReport
from ragjudge.bench.cxm.tool_calls import data, paper
from ragjudge.bench.cxm.tool_calls.samples import tool_sample
from ragjudge.bench.cxm.tool_calls.solver import ToolSolver
from ragjudge.bench.cxm.tool_calls.summary import score_tools
from ragjudge.engine.bench import Loaded, MetricInfo, SampleResult, Solver
from ragjudge.formats.samples import Sample

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


@dataclass(frozen=True, kw_only=True)
class ToolData(CxmData):
    """`ctx.data`: the gold cases, the tool catalog, what the run offers, and the modes its rows hold."""

    tools: dict[str, dict[str, Any]]
    plan: data.Plan
    modes: list[str]


class ToolCallsBench(CxmBench[ToolOptions]):
    name = "cxm-tool-calls"
    task = "tool-calls"
    Options = ToolOptions
    data_help = f"{DATA_HELP}\n\n{paper.SETUP}"
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
        self.mode = "forced" if options.force_tool_call else "auto"

    def load(self) -> Loaded[Any, ToolData]:
        tools = data.load_tool_catalog(self.data)
        cases = data.load_tool_cases(self.data, tools)
        by_id = {c.case_id: c for c in cases}
        if self.predictions_path is not None:
            rows = self.file_rows()
            modes = sorted({str(r.row.get("mode") or "auto") for r in rows if not r.row.get("error")})
            return Loaded(rows, ToolData(by_id, tools=tools, plan=data.Plan([]), modes=modes))
        plan = data.plan(cases, list(tools), self.options.tool_counts, self.mode)
        return Loaded(list(plan.samples), ToolData(by_id, tools=tools, plan=plan, modes=[self.mode]))

    def llm_models(self) -> list[str]:
        return [self.options.gen] if self.options.gen else []

    def model_solver(self, ctx: RunContext) -> Solver[Any]:
        assert self.options.gen
        articles = optional_articles(self.data, "multi-turn") or {}
        return ToolSolver(self.options.gen, ctx.data.tools, articles, self.book, self.options.force_tool_call)

    def report(self, results: Sequence[SampleResult[Any]], ctx: RunContext) -> TaskReport:
        run: ToolData = ctx.data
        if self.predictions_path is not None:
            cases = list(run.cases.values())
        else:
            cases = list({r.sample.case.case_id: r.sample.case for r in results}.values()) + run.plan.never_offered
        report = score_tools(cases, self.prediction_rows(results), self.predictions_path)
        report.notes = run.plan.notes + report.notes
        metric = "tool-selection accuracy @{n} tools" if not any(k.startswith(("auto ", "forced "))
                                                                  for k in report.metrics) else \
            "auto tool-selection accuracy @{n} tools"
        return report.cite(paper.beside(self.options.gen, self.options.force_tool_call, run.plan.offered_by_data,
                                        self.predictions_path is not None, ctx.cut_by_limit, report.metrics, metric))

    def sample(self, result: SampleResult[Any], ctx: RunContext) -> Sample:
        run: ToolData = ctx.data
        if isinstance(result.sample, FileRow):
            return tool_sample(result.sample.id, self.gold_of(result.output, ctx), result.output, run.modes)
        return tool_sample(result.sample.id, result.sample.case, result.output, run.modes)

    def run_info(self, ctx: RunContext) -> dict[str, Any]:
        return {**super().run_info(ctx), "models": {"generator": self.options.gen}}

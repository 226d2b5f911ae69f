"""`--bench dialsim`: an agent plays a TV show's main character through LongDialQA's sessions and answers
questions about the past (DialSim, Kim et al.), with the paper's memory strategies and answer formats
(docs/benches/dialsim.md). Here: the options and the wiring of the parts; `load()`'s `Simulation` (timelines,
plan, memories) is the run's `ctx.data`, and no hook leaves a result on `self` for another.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator

from ragjudge.bench.dialsim.agents import OFFLINE_AGENTS, build_agent, check_agent
from ragjudge.bench.dialsim.data import DATA_ENV, Simulation, data_path, read_simulation, require_evidence_dates
from ragjudge.bench.dialsim.judge import AnswerJudge
from ragjudge.bench.dialsim.longdialqa import DATA_HELP
from ragjudge.bench.dialsim.memory import DEFAULT_K, MemoryKind, context_budget, show_memories
from ragjudge.bench.dialsim.paper import TABLE3_HELP, RunConditions, paper_references
from ragjudge.bench.dialsim.plan import PlannedQuestion, plan_text
from ragjudge.bench.dialsim.prompts import PARAMS, AnswerFormat, template, template_name
from ragjudge.bench.dialsim.samples import question_sample
from ragjudge.bench.dialsim.scorers import AnswerScorer
from ragjudge.bench.dialsim.script import NamesMode
from ragjudge.bench.dialsim.searchers import retriever_spec
from ragjudge.bench.dialsim.solver import SimulationSolver, write_artifact
from ragjudge.bench.dialsim.summary import BREAKDOWNS, METRICS, figures, question_rows
from ragjudge.engine.bench import Bench, BenchOptions, Loaded, SampleResult, Scorer, Solver, fingerprint
from ragjudge.engine.context import RunContext
from ragjudge.engine.summary import Summary
from ragjudge.errors import UsageError
from ragjudge.formats.samples import Sample

RETRIEVAL_MEMORIES = ("utterance", "session", "summary")


class DialSimOptions(BenchOptions):
    data: str | None = Field(None, description=f"LongDialQA: a folder (or file) with the official pickles, the "
                             f"Hugging Face parquet copy, or `ragjudge dialsim convert` JSONL (default: ${DATA_ENV}).")
    gen: str | None = Field(None, description="The agent: mc-idk, mc-random, mc-lexical (offline) or a litellm model.")
    shows: list[str] | None = Field(None, description="Shows to run (default: every show in --data).")
    memory: MemoryKind = Field("session", description="recent (newest sessions that fit the context), utterance, "
                               "session or summary (retrieval), oracle (the evidence sessions).")
    retriever: str | None = Field(None, description="For retrieval memories: a pipeline spec whose retriever is "
                                  "bm25 or dense (bm25 by default; dense: the bundled MiniLM, bge, or a YAML path).")
    k: int | None = Field(None, ge=1, description="Items recalled (default: utterance 20, session 10, summary 15, "
                          "oracle 20, as in the paper).")
    format: AnswerFormat = Field("mc", description="mc: options (A)-(E); mc-nl: options in words; open: no options.")
    names: NamesMode | None = Field(None, description="generic (anonymised, the paper's main setting; the default), "
                                    "original, or swapped.")
    seed: int | None = Field(None, ge=0, description="Seed of the question plan (default: 0).")
    seeds: list[Annotated[int, Field(ge=0)]] | None = Field(None, min_length=1, description="Several seeds, one "
                                                            "plan each: metrics are mean ± std over them.")
    plan: str | None = Field(None, description="Ask the questions of this plan.jsonl (from an earlier run) instead "
                             "of planning: every agent gets the same questions.")
    tkg_ratio: float = Field(0.7, ge=0, le=1, description="Share of temporal-knowledge-graph questions (official 0.7).")
    context_tokens: int | None = Field(None, ge=1000, description="memory=recent: the agent's context window in "
                                       "tokens (default: litellm's figure for the model, else 16000).")
    summary_model: str | None = Field(None, description="memory=summary: the litellm model that summarises each "
                                      "session (default: the agent's model).")
    judge: Literal["llm", "lexical"] | None = Field(None, description="Judge of mc-nl/open answers after the exact "
                                                    "match: llm (the official judge; needs --judge-models) or lexical "
                                                    "(offline); default: llm with --judge-models, else lexical.")
    judge_models: list[str] = Field(default_factory=list, description="The LLM judge's model (the paper: gpt-4o-mini).")
    judge_dir: list[str] = Field(default_factory=list, description="Folders overriding the dialsim_judge spec.")
    time_limit: float | None = Field(None, gt=0, allow_inf_nan=False, description="Seconds an answer may take "
                                     "(retrieval + reply); a slower one is abandoned and counted wrong.")
    time_limits: list[Annotated[float, Field(gt=0, allow_inf_nan=False)]] = Field(
        default_factory=lambda: [1.0, 3.0, 5.0], description="Limits (s) for the accuracy-at-time-limit figures "
        "computed from measured latencies.")
    pipeline_dir: list[str] = Field(default_factory=list, description="Extra folders of pipeline specs.")
    index_dir: str | None = Field(None, description="Where dense memory indexes are kept (default: <cache>/indexes).")

    @field_validator("seeds", "time_limits")
    @classmethod
    def _distinct(cls, values: list[Any] | None) -> list[Any] | None:
        items = values or []
        repeated = sorted({f"{v:g}" for v in items if items.count(v) > 1})
        if repeated:
            raise ValueError(f"{', '.join(repeated)} given twice")
        return values


class DialSimBench(Bench[DialSimOptions, PlannedQuestion]):
    name = "dialsim"
    Options = DialSimOptions
    data_help = f"{DATA_HELP}.\n\n{TABLE3_HELP}"
    metrics = METRICS
    breakdowns = BREAKDOWNS
    unit = "questions"
    view = "ragjudge.bench.dialsim.view:DialSimView"

    def __init__(self, options: DialSimOptions, *, label: str | None = None):
        super().__init__(options, label=label)
        o = options
        if not o.gen:
            raise UsageError(f"bench dialsim needs --gen AGENT ({', '.join(OFFLINE_AGENTS)} offline, or a litellm model)")
        check_agent(o.gen, o.format)
        self.offline = o.gen in OFFLINE_AGENTS
        if o.seed is not None and o.seeds:
            raise UsageError("give -T seed=N or -T seeds=N,M,..., not both")
        if o.plan and (o.seeds or o.seed is not None):
            raise UsageError("-T plan fixes the questions and their seeds: drop -T seed(s)")
        retrieval = o.memory in RETRIEVAL_MEMORIES
        if o.retriever and not retrieval:
            raise UsageError(f"-T retriever is for memories utterance, session and summary, not {o.memory}")
        if o.k is not None and o.memory == "recent":
            raise UsageError("-T k does not apply to memory=recent (it keeps what fits -T context_tokens)")
        if o.context_tokens is not None and o.memory != "recent":
            raise UsageError("-T context_tokens applies to memory=recent only")
        if o.memory == "summary" and self.offline and not o.summary_model:
            raise UsageError(f"memory=summary summarises sessions with an LLM: pass -T summary_model=MODEL "
                             f"(--gen {o.gen} is offline)")
        if o.summary_model and o.memory != "summary":
            raise UsageError("-T summary_model applies to memory=summary only")
        if o.format == "mc" and (o.judge or o.judge_models):
            raise UsageError("format mc is scored by rule: --judge-models and -T judge are for -T format=mc-nl or open")
        self.judge_kind = o.judge or ("llm" if o.judge_models else "lexical")
        if self.judge_kind == "llm" and not o.judge_models:
            raise UsageError("-T judge=llm needs --judge-models MODEL (the paper used gpt-4o-mini)")
        self.judge_model = o.judge_models[0] if self.judge_kind == "llm" and o.format != "mc" else None
        self.judged_by = self.judge_model or (self.judge_kind if o.format != "mc" else "rule")
        """The LLM judge's model, the lexical judge, or the rule (multiple choice)."""
        self.spec = retriever_spec(o.retriever or "bm25", o.pipeline_dir) if retrieval else None
        self.k = o.k or DEFAULT_K.get(o.memory, 0)


    def load(self) -> Loaded[PlannedQuestion, Simulation]:
        """The planned questions, with the simulation they are asked in (its shows' memories) as the run's `ctx.data`
        (closed by the engine after the run)."""
        o = self.options
        simulation = read_simulation(data_path(o.data), shows=o.shows, plan=Path(o.plan) if o.plan else None,
                                     names=o.names, seeds=o.seeds or [0 if o.seed is None else o.seed],
                                     tkg_ratio=o.tkg_ratio)
        if o.memory == "oracle":
            require_evidence_dates(simulation)
        memories = show_memories(o.memory, simulation.timelines, self.k, self.spec, token_budget=self.token_budget(),
                                 index_dir=Path(o.index_dir) if o.index_dir else None, pipeline_dirs=o.pipeline_dir)
        return Loaded(list(simulation.plan), replace(simulation, memories=memories))

    def token_budget(self) -> int:
        """memory=recent: the context window the newest sessions must fit (0 for the other memories)."""
        o = self.options
        return context_budget(o.gen or "", o.context_tokens, self.offline) if o.memory == "recent" else 0


    def llm_models(self) -> list[str]:
        o = self.options
        models = [] if self.offline else [o.gen or ""]
        if o.memory == "summary":
            models.append(o.summary_model or o.gen or "")
        return models + ([self.judge_model] if self.judge_model else [])

    def solver(self, ctx: RunContext) -> Solver[PlannedQuestion]:
        o = self.options
        assert o.gen is not None
        simulation: Simulation = ctx.data
        write_artifact(ctx, "plan.jsonl", plan_text(simulation.plan))  # before any answer: an interrupted run has it
        agent = build_agent(o.gen, None if self.offline else ctx.require_gateway())
        return SimulationSolver(agent, o.format, simulation.memories, self.identity(simulation),
                                time_limit=o.time_limit,
                                summary_model=(o.summary_model or o.gen) if o.memory == "summary" else None)

    def identity(self, simulation: Simulation) -> str:
        """Everything besides the question that changes an answer."""
        o = self.options
        prompt = hashlib.sha256(template(template_name(o.format, o.memory)).encode()).hexdigest()[:12]
        return fingerprint(simulation.digest, o.gen, o.format, o.memory,
                           self.spec.record() if self.spec else None, self.k,
                           self.token_budget() if o.memory == "recent" else None, o.summary_model, prompt, PARAMS,
                           o.time_limit)

    def scorers(self, ctx: RunContext) -> list[Scorer[PlannedQuestion]]:
        judge = AnswerJudge.load(self.judge_model, ctx.gateway, self.options.judge_dir) if self.judge_model else None
        return [AnswerScorer(self.options.format, self.judge_kind, judge)]


    def summarize(self, results: Sequence[SampleResult[PlannedQuestion]], ctx: RunContext) -> Summary:
        simulation: Simulation = ctx.data
        found = figures(question_rows(results), self.options.time_limits, unit=self.unit)
        references, notes = paper_references(self.conditions(simulation, whole=not ctx.cut_by_limit), found.shows)
        details = {**found.details, "judges": self.judges(), "evidence_date_rule": simulation.evidence_rule()}
        return self.summary(results, found.metrics, breakdowns=found.breakdowns, reference=references,
                            notes=notes + simulation.notes(), warnings=simulation.evidence_warnings(),
                            headline=found.headline, details=details)

    def conditions(self, simulation: Simulation, *, whole: bool) -> RunConditions:
        """What decides whether the paper's figures describe this run (`whole`: every planned question asked)."""
        o = self.options
        return RunConditions(gen=o.gen or "", fmt=o.format, memory=o.memory, names=self.names(simulation),
                             retriever=self.spec.record()["retriever"] if self.spec else None,
                             k=self.k if o.memory != "recent" else None, context_tokens=o.context_tokens,
                             tkg_ratio=o.tkg_ratio, all_questions=whole, summary_model=o.summary_model,
                             judge=self.judged_by, time_limit=o.time_limit,
                             evidence_rule=all(simulation.evidence_rule().values()))

    def names(self, simulation: Simulation) -> NamesMode:
        return simulation.names or self.options.names or "generic"

    def judges(self) -> dict[str, list[str]]:
        return {"dialsim": [self.judged_by]}

    def sample(self, result: SampleResult[PlannedQuestion], ctx: RunContext) -> Sample:
        return question_sample(result, self.options.format)

    def rows(self, results: Sequence[SampleResult[PlannedQuestion]], ctx: RunContext) -> list[dict[str, Any]]:
        return question_rows(results)

    def artifacts(self, results: Sequence[SampleResult[PlannedQuestion]], summary: Summary,
                  ctx: RunContext) -> dict[str, str]:
        return {"plan.jsonl": plan_text(ctx.data.plan)}

    def run_info(self, ctx: RunContext) -> dict[str, Any]:
        o = self.options
        simulation: Simulation = ctx.data
        return {
            "data": simulation.sources(), "agent": o.gen, "format": o.format, "memory": o.memory,
            "k": self.k if o.memory != "recent" else None, "context_tokens": self.token_budget() or None,
            "names": self.names(simulation), "seeds": sorted({q.seed for q in simulation.plan}),
            "evidence_date_rule": simulation.evidence_rule(), "retriever": self.spec.record() if self.spec else None,
            "indexes": simulation.indexes(), "judge": self.judged_by,
            "prompt": template_name(o.format, o.memory), "params": PARAMS,
            "models": {"agent": o.gen, "judges": self.judges(),
                       **({"summaries": o.summary_model or o.gen} if o.memory == "summary" else {}),
                       **({"retriever": self.spec.record()["retriever"]} if self.spec else {})},
        }

    def out_slug(self) -> list[str]:
        o = self.options
        retriever = Path(o.retriever or "bm25").stem if o.memory in RETRIEVAL_MEMORIES else None
        return [o.gen or "", o.memory, retriever or "", o.format]

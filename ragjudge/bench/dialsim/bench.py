"""`--bench dialsim`: an agent plays a TV show's main character through LongDialQA's sessions and answers
questions about the past (DialSim, Kim et al.), with the paper's memory strategies and answer formats."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator

from ragjudge.engine.bench import (
    Bench,
    BenchOptions,
    SampleResult,
    Scorer,
    Solver,
    fingerprint,
)
from ragjudge.bench.dialsim import layouts
from ragjudge.bench.dialsim.agents import OFFLINE_AGENTS, build_agent, check_agent
from ragjudge.bench.dialsim.data import DATA_HELP
from ragjudge.bench.dialsim.judge import AnswerJudge
from ragjudge.bench.dialsim.memory import DEFAULT_K, MemoryKind, ShowMemory
from ragjudge.bench.dialsim.plan import (
    PlannedQuestion,
    check_plan,
    plan_show,
    plan_text,
    read_plan,
)
from ragjudge.bench.dialsim.prompts import PARAMS, AnswerFormat, template, template_name
from ragjudge.bench.dialsim.reference import RunConditions, paper_references
from ragjudge.bench.dialsim.scorer import AnswerScorer
from ragjudge.bench.dialsim.script import NamesMode, load_show_infos
from ragjudge.bench.dialsim.searchers import (
    DenseSearcher,
    build_searcher,
    retriever_spec,
)
from ragjudge.bench.dialsim.solver import SimulationSolver
from ragjudge.bench.dialsim.summary import METRICS, figures, question_rows
from ragjudge.bench.dialsim.timeline import Timeline
from ragjudge.engine.context import RunContext
from ragjudge.engine.summary import Summary
from ragjudge.errors import UsageError

RETRIEVAL_MEMORIES = ("utterance", "session", "summary")
TABLE3_HELP = (
    "The paper's Table 3 (Friends, generic names, multiple choice scored by rule, no time limit, 70% temporal "
    "questions, the whole simulation), e.g. its GPT-4o-mini BM25 Session Entire cell: `ragjudge eval --bench dialsim "
    "--data FOLDER --gen openai/gpt-4o-mini -T shows=friends -T memory=session -T retriever=bm25 -T seeds=0,1,2` "
    "with FOLDER holding friends_dialsim.pickle and both oracle pickles (without them the plan cannot apply the "
    "evidence-date rule and no paper cell is shown). Other columns: -T memory=recent (Base LLM), utterance or "
    "summary; the Embedding columns: -T retriever=SPEC.yaml with `retriever: {name: dense, options: {encoder: "
    "litellm, model: openai/text-embedding-3-small}}`. Keep -T format=mc, k, tkg_ratio and names at their defaults "
    "and add no --limit or -T time_limit: the cell is printed beside the run only then. Appendix H: "
    "-T shows=bigbang or theoffice; Appendix J: -T names=original or swapped.")
DATA_ENV = "RAGJUDGE_DIALSIM_DATA"


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
    description = ("DialSim: an agent plays a TV show's main character and answers questions about the long, "
                   "multi-party dialogue so far; memory strategies, IDK precision/recall, the paper's Table 3.")
    Options = DialSimOptions
    llm = "optional"
    data_help = f"{DATA_HELP}.\n\n{TABLE3_HELP}"
    metrics = METRICS
    breakdowns = ("seed", "show", "source", "hop", "answerability", "type")
    unit = "questions"

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
        self.spec = retriever_spec(o.retriever or "bm25", o.pipeline_dir) if retrieval else None
        self.k = o.k or DEFAULT_K.get(o.memory, 0)
        self.timelines: dict[str, Timeline] = {}
        self.plan: list[PlannedQuestion] = []
        self.data_digest = ""
        self._solver: SimulationSolver | None = None

    # -- data and plan ------------------------------------------------------------------------------

    def data_path(self) -> Path:
        value = self.options.data or os.environ.get(DATA_ENV)
        if not value:
            raise UsageError(f"bench dialsim needs --data FOLDER (or ${DATA_ENV}). {DATA_HELP}")
        return Path(value)

    def load(self) -> list[PlannedQuestion]:
        o = self.options
        path = self.data_path()
        found = layouts.find_shows(path)
        reused = read_plan(Path(o.plan)) if o.plan else None
        wanted = o.shows or (list(dict.fromkeys(q.show for q in reused)) if reused else list(found))
        missing = [s for s in wanted if s not in found]
        if missing:
            flag = "-T shows" if o.shows else f"-T plan={o.plan}"
            raise UsageError(f"{flag}: {', '.join(missing)} not in {path} (found: {', '.join(found)})")
        names: NamesMode = o.names or (reused[0].names if reused else "generic")
        infos = load_show_infos(path if path.is_dir() else path.parent)
        for show in wanted:
            if show not in infos:
                raise UsageError(f"show {show!r} is not one of {', '.join(infos)}: describe it (agent, names) in "
                                 f"dialsim_shows.json beside the data")
            layout, source = found[show]
            self.timelines[show] = Timeline.build(layouts.read_show(show, layout, source), infos[show], names)
        self.data_digest = fingerprint({show: [(x.episode, x.scene, x.date, x.script) for x in t.source.sessions]
                                        for show, t in self.timelines.items()})
        if reused is not None:
            assert o.plan is not None
            check_plan(reused, self.timelines, Path(o.plan))
            self.plan = reused
        else:
            seeds = o.seeds or [0 if o.seed is None else o.seed]
            self.plan = [q for show in wanted for seed in seeds
                         for q in plan_show(self.timelines[show], seed, o.tkg_ratio)]
        if o.memory == "oracle":
            unknown = sorted(show for show, applied in self.evidence_rule().items() if not applied)
            if unknown:
                raise UsageError(f"memory=oracle needs the evidence dates of the oracle pickles ({unknown[0]}_oracle_"
                                 f"tkg.pickle, {unknown[0]}_oracle_fan.pickle) beside the data")
        return list(self.plan)

    def evidence_rule(self) -> dict[str, bool]:
        """show -> whether the plan could apply the official evidence-date rule (a candidate whose evidence session
        has not happened yet is skipped). It needs the oracle files' evidence dates: without them (always for the
        Hugging Face parquet copy) every candidate is taken, and more questions, some unanswerable from the
        dialogue so far, are asked than the official simulator would ask."""
        lacking = {q.show for q in self.plan if q.evidence_sessions is None}
        return {show: t.source.oracle and show not in lacking for show, t in self.timelines.items()}

    def _evidence_warnings(self) -> list[str]:
        out = []
        for show, applied in self.evidence_rule().items():
            if not applied:
                undated = sum(1 for q in self.plan if q.show == show and q.evidence_sessions is None)
                out.append(f"warning: {show}: no evidence dates (the oracle files {show}_oracle_tkg.pickle and "
                           f"{show}_oracle_fan.pickle are not beside the data), so the plan cannot skip questions "
                           f"whose evidence session has not happened yet, as the official simulator does: "
                           f"{undated} question(s) asked without that check (run.json: evidence_date_rule)")
        return out

    # -- solver and scorers -------------------------------------------------------------------------

    def llm_models(self) -> list[str]:
        o = self.options
        models = [] if self.offline else [o.gen or ""]
        if o.memory == "summary":
            models.append(o.summary_model or o.gen or "")
        return models + ([self.judge_model] if self.judge_model else [])

    def context_budget(self) -> int:
        o = self.options
        if o.context_tokens:
            return o.context_tokens
        if not self.offline:
            from ragjudge.llm._litellm import litellm

            try:
                found = litellm().get_model_info(o.gen).get("max_input_tokens")
            except Exception:  # noqa: BLE001 - litellm raises a bare Exception for models it does not list
                found = None
            if found:
                return int(found)
        return 16000

    def solver(self, ctx: RunContext) -> Solver[PlannedQuestion]:
        o = self.options
        assert o.gen is not None
        if ctx.paths is not None:  # saved before any answer, so an interrupted run has it too
            from ragjudge.engine.outputs import atomic_write

            text = plan_text(self.plan)
            atomic_write(ctx.paths.artifact("plan.jsonl"), lambda p: p.write_text(text, encoding="utf-8"))
        memories: dict[str, ShowMemory] = {}
        budget = self.context_budget() if o.memory == "recent" else 0
        counter = None
        if o.memory == "recent":
            from ragjudge.bench.dialsim.tokens import token_counter

            counter = token_counter()
        index_dir = Path(o.index_dir) if o.index_dir else None
        shared: Any = None
        for show, timeline in self.timelines.items():
            searcher = build_searcher(self.spec, index_dir, o.pipeline_dir) if self.spec is not None else None
            if isinstance(searcher, DenseSearcher):  # one encoder (one model in memory) for every show
                if shared is None:
                    shared = searcher.retriever.encoder
                searcher.retriever.encoder = shared
            memories[show] = ShowMemory(o.memory, timeline, self.k, searcher=searcher, token_budget=budget,
                                        count_tokens=counter)
        self.budget = budget
        agent = build_agent(o.gen, None if self.offline else ctx.require_gateway())
        self._solver = SimulationSolver(agent, o.format, memories, self.identity(), time_limit=o.time_limit,
                                        summary_model=(o.summary_model or o.gen) if o.memory == "summary" else None)
        return self._solver

    def identity(self) -> str:
        """Everything besides the question that changes an answer."""
        o = self.options
        prompt = hashlib.sha256(template(template_name(o.format, o.memory)).encode()).hexdigest()[:12]
        return fingerprint(self.data_digest, o.gen, o.format, o.memory, self.spec.record() if self.spec else None, self.k,
                           self.context_budget() if o.memory == "recent" else None, o.summary_model, prompt, PARAMS,
                           o.time_limit)

    def scorers(self, ctx: RunContext) -> list[Scorer[PlannedQuestion]]:
        judge = AnswerJudge.load(self.judge_model, ctx.gateway, self.options.judge_dir) if self.judge_model else None
        return [AnswerScorer(self.options.format, self.judge_kind, judge)]

    # -- outputs -----------------------------------------------------------------------------------

    def summarize(self, results: Sequence[SampleResult[PlannedQuestion]], ctx: RunContext) -> Summary:
        o = self.options
        found = figures(question_rows(results), o.time_limits, unit=self.unit)
        references, notes = paper_references(self.conditions(len(results)), found.shows)
        details = {**found.details, "judges": self.judges()}
        details["evidence_date_rule"] = self.evidence_rule()
        return self.summary(results, found.metrics, breakdowns=found.breakdowns, reference=references,
                            notes=notes + self._notes(), warnings=self._evidence_warnings(),
                            headline=found.headline, details=details)

    def conditions(self, asked: int) -> RunConditions:
        """What decides whether the paper's figures describe this run (`asked`: the questions answered)."""
        o = self.options
        return RunConditions(gen=o.gen or "", fmt=o.format, memory=o.memory, names=self.names(),
                             retriever=self.spec.record()["retriever"] if self.spec else None,
                             k=self.k if o.memory != "recent" else None, context_tokens=o.context_tokens,
                             tkg_ratio=o.tkg_ratio, all_questions=asked >= len(self.plan),
                             summary_model=o.summary_model, judge=self.judges()["dialsim"][0],
                             time_limit=o.time_limit, evidence_rule=all(self.evidence_rule().values()))

    def names(self) -> str:
        return next(iter(self.timelines.values())).names if self.timelines else (self.options.names or "generic")

    def judges(self) -> dict[str, list[str]]:
        """Who judged the answers: the LLM judge, the lexical judge, or the rule (multiple choice)."""
        o = self.options
        return {"dialsim": [self.judge_model] if self.judge_model else [self.judge_kind if o.format != "mc"
                                                                        else "rule"]}

    def _notes(self) -> list[str]:
        notes = []
        for show, t in self.timelines.items():
            src = t.source
            if src.skipped_questions:
                notes.append(f"{show}: {src.skipped_questions} question(s) with fewer than 5 options were skipped")
        return notes

    def records(self, results: Sequence[SampleResult[PlannedQuestion]]) -> list[dict[str, Any]]:
        out = []
        for r in results:
            q = r.sample
            out.append({**q.model_dump(mode="json"), "answerability": "answerable" if q.answerable else
                        "unanswerable", "hop": q.hop, "gold_text": q.gold_text, "output": r.output,
                        "score": r.scores.get("dialsim", {})})
        return out

    def rows(self, results: Sequence[SampleResult[PlannedQuestion]]) -> list[dict[str, Any]]:
        return question_rows(results)

    def artifacts(self, results: Sequence[SampleResult[PlannedQuestion]], summary: Summary) -> dict[str, str]:
        files = {"plan.jsonl": plan_text(self.plan)}
        if self._solver is not None and self._solver.summaries:
            from ragjudge.formats.jsonl import dumps

            lines = []
            for show, found in self._solver.summaries.items():
                for index, text in sorted(found.items()):
                    session = self.timelines[show].sessions[index]
                    lines.append(dumps({"show": show, "session": index, "label": session.label,
                                        "summary": text if isinstance(text, str) else None,
                                        "error": None if isinstance(text, str) else str(text)}))
            files["summaries.jsonl"] = "".join(line + "\n" for line in lines)
        return files

    def run_info(self, ctx: RunContext) -> dict[str, Any]:
        o = self.options
        return {
            "data": {show: {"source": t.source.source, "layout": t.source.layout, "oracle": t.source.oracle,
                            "sessions": len(t.sessions), "agent": t.info.agent} for show, t in self.timelines.items()},
            "agent": o.gen, "format": o.format, "memory": o.memory, "k": self.k if o.memory != "recent" else None,
            "context_tokens": getattr(self, "budget", None) or None, "names": self.names(),
            "seeds": sorted({q.seed for q in self.plan}), "evidence_date_rule": self.evidence_rule(),
            "retriever": self.spec.record() if self.spec else None, "indexes": self._indexes(),
            "judge": self.judge_model or (self.judge_kind if o.format != "mc" else "rule"),
            "prompt": template_name(o.format, o.memory), "params": PARAMS,
            "models": {"agent": o.gen, "judges": self.judges(),
                       **({"summaries": o.summary_model or o.gen} if o.memory == "summary" else {}),
                       **({"retriever": self.spec.record()["retriever"]} if self.spec else {})},
        }

    def _indexes(self) -> dict[str, Any] | None:
        if self._solver is None:
            return None
        found = {show: m.searcher.describe()["index"] for show, m in self._solver.memories.items()
                 if hasattr(m.searcher, "describe")}
        return found or None

    def out_slug(self) -> list[str]:
        o = self.options
        retriever = Path(o.retriever or "bm25").stem if o.memory in RETRIEVAL_MEMORIES else None
        return [o.gen or "", o.memory, retriever or "", o.format]

    def close(self) -> None:
        if self._solver is not None:
            for memory in self._solver.memories.values():
                close = getattr(memory.searcher, "close", None)
                if close is not None:
                    close()

"""`--bench mtrag`: generate answers to MTRAG's multi-turn tasks (or read predictions) and judge them with
the paper's judge layer, IDK conditioning and breakdowns."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import Field

from ragjudge.engine.bench import Bench, BenchOptions, MetricInfo, SampleResult, Scorer, Solver
from ragjudge.bench.mtrag.assemble import CLARIFICATION_METRIC, TaskOutcome, assemble, metric_names, partial_panels
from ragjudge.bench.mtrag.data import resolve_bench
from ragjudge.bench.mtrag.samples import outcome_sample
from ragjudge.bench.mtrag.scorers import JudgeScorer
from ragjudge.bench.mtrag.settings import check_setting, needs_retrieval, tasks_for_setting
from ragjudge.bench.mtrag.solvers import GeneratorSolver, PredictionsSolver
from ragjudge.bench.mtrag.summary import HEADLINE, summarize, tidy_table
from ragjudge.engine.context import RunContext
from ragjudge.engine.summary import MetricCatalog, Summary, headline_of
from ragjudge.errors import UsageError
from ragjudge.formats.samples import Sample
from ragjudge.formats.mtrag import read_predictions, read_tasks, require_questions, result_record
from ragjudge.judges import Judge, JudgeContext, JudgeRegistry
from ragjudge.models import JudgeResult, Prediction, Task

OFFLINE_JUDGES = ["idk_lexical", "rb_alg"]
LLM_JUDGES = ["idk", "rb_alg", "rb_llm", "rl_f"]


class MtragOptions(BenchOptions):
    data: str | None = Field(None, description="MTRAG tasks, a file or folder in MTRAG format (default: "
                             "$RAGJUDGE_DATA, else the benchmark's human tasks, downloaded into the cache once).")
    gen: str | None = Field(None, description="The generator: 'extractive' (offline baseline) or a litellm model.")
    predictions: str | None = Field(None, description="Judge this MTRAG predictions file instead of generating "
                                    "(what `ragjudge judge` does).")
    setting: str = Field("reference", description="Passages the generator sees: reference, reference+rag "
                         "(references topped up with retrieved passages to 5; tasks with at most 2 references) or "
                         "rag (top 5 retrieved); the last two need --pipeline and --corpus.")
    pipeline: str | None = Field(None, description="Retrieval pipeline (name or YAML path) for reference+rag or rag.")
    corpus: str | None = Field(None, description="BEIR corpus JSONL the pipeline retrieves from (indexed once).")
    rewrite_model: str | None = Field(None, description="litellm model for a pipeline that rewrites queries.")
    pipeline_dir: list[str] = Field(default_factory=list, description="Extra folders of pipeline specs.")
    index_dir: str | None = Field(None, description="Where indexes are kept (default: <cache>/indexes).")
    judges: list[str] | None = Field(None, description="Judges (default: idk_lexical,rb_alg offline; "
                                     "idk,rb_alg,rb_llm,rl_f with --judge-models).")
    judge_models: list[str] = Field(default_factory=list, description="litellm judge models; rb_llm takes the "
                                    "median of all, other LLM judges use the first.")
    judge_dir: list[str] = Field(default_factory=list, description="Extra folders of judge specs.")
    bertscore_model: str | None = Field(None, description="RB_alg's BERTScore model: auto, bundled, or a name/path.")
    min_panel: int | None = Field(None, ge=1, description="Panel members (rb_llm) that must answer for a panel "
                                  "score (default: a majority); panels answered by fewer than all are counted.")
    conversational_as_unanswerable: bool = Field(False, description="Condition conversational turns as "
                                                 "unanswerable, as the official scripts do (default: excluded, "
                                                 "as in the paper).")


class MtragBench(Bench[MtragOptions, Task]):
    view = "ragjudge.bench.mtrag.view:MtragView"
    name = "mtrag"
    description = "MTRAG multi-turn RAG generation: answers judged by IDK, RB_alg, RB_llm, RL_F, with the paper's breakdowns."
    Options = MtragOptions
    llm = "optional"
    data_help = ("The MTRAG human generation tasks (IBM/mt-rag-benchmark, mtrag-human/generation_tasks/"
                 "reference.jsonl): downloaded into the cache on first use, or --data PATH / $RAGJUDGE_DATA for a "
                 "local copy; `--bench PATH` takes any MTRAG-format file or folder.")
    data_source = "IBM/mt-rag-benchmark human tasks, downloaded on first use (or --data)"
    metrics = (
        MetricInfo("*_idk_underspecified", "MTRAG-UN's official conditioning (get_idk_underspec_score), over every "
                   "task: asking for clarification scores 1 on underspecified tasks, declining 1 on unanswerable and "
                   "conversational ones; otherwise a declined answer scores 0, else the metric",
                   counts="every task whose judgements it needs succeeded"),
        MetricInfo("*_idk", "IDK-conditioned (the paper's Table 5): the metric if the answer does not decline; "
                   "declining scores 1 on unanswerable tasks, 0 on others",
                   counts="labelled tasks but conversational turns (left out, as in the paper)"),
        MetricInfo("answerability_acc", "the answer declines exactly when the task is unanswerable",
                   counts="the same tasks as *_idk"),
        MetricInfo("RB_agg", "RB_alg: harmonic mean of BERTScore recall, ROUGE-L and BERT K-Precision against "
                   "the reference answer"),
        MetricInfo("RB_llm", "reference-based LLM judge, median of the judge panel (1-10 scaled to 0-1)"),
        MetricInfo("RL_F", "RAGAS faithfulness: share of the answer's claims the passages support",
                   counts="only tasks with passages"),
        MetricInfo("RougeL_stemFalse", "ROUGE-L F1 against the reference answer (part of RB_alg)"),
        MetricInfo("BertscoreR", "BERTScore recall against the reference answer (part of RB_alg)"),
        MetricInfo("BertKPrec", "BERTScore precision of the answer against the passages (part of RB_alg)",
                   counts="only tasks with passages"),
        MetricInfo("idk_eval", "IDK judge (LLM): did the answer decline (1 yes, 0.5 partly, 0 no)",
                   higher_is_better=None, kind="rate"),
        MetricInfo("idk_lexical", "IDK by phrase patterns, offline: did the answer decline (1 yes, 0.5 partly, "
                   "0 no)", higher_is_better=None, kind="rate"),
        MetricInfo("underspecified_eval", "clarification judge (MTRAG-UN): does the answer ask the user for "
                   "clarification (1 yes, 0 no)", higher_is_better=None, kind="rate"),
    )
    breakdowns = ("answerability", "turn", "domain", "question_type", "multi_turn", "standalone")
    offline_judges = OFFLINE_JUDGES
    llm_judges = LLM_JUDGES
    unit = "tasks"

    def __init__(self, options: MtragOptions, *, label: str | None = None):
        super().__init__(options, label=label)
        o = options
        if (o.gen is None) == (o.predictions is None):
            raise UsageError(f"bench {self.name} needs --gen MODEL (to generate answers) or -T predictions=FILE "
                             "(to judge existing ones), not both" if o.gen else
                             f"bench {self.name} needs --gen MODEL ('extractive' offline, or a litellm model)")
        check_setting(o.setting)
        if o.predictions is not None and (o.setting != "reference" or o.pipeline or o.corpus):
            raise UsageError("-T predictions judges existing answers: --setting, --pipeline and --corpus do not apply")
        self.registry = JudgeRegistry(o.judge_dir)
        names = o.judges if o.judges is not None else list(self.llm_judges if o.judge_models else
                                                            self.offline_judges)
        clarifying = [n for n in names if self.registry.spec(n).metric == CLARIFICATION_METRIC]
        if len(clarifying) > 1:
            raise UsageError(f"judges {' and '.join(clarifying)} both write {CLARIFICATION_METRIC}: choose one")
        self.judges: list[Judge] = self.registry.build_many(names, {"bertscore_model": o.bertscore_model})
        needing = [j.name for j in self.judges if j.needs_llm]
        if needing and not o.judge_models:
            raise UsageError(f"judge(s) {', '.join(needing)} need an LLM: pass --judge-models MODEL[,MODEL...] "
                             f"(offline judges: {', '.join(self.offline_judges)})")
        if o.min_panel is not None and o.min_panel > len(o.judge_models):
            raise UsageError(f"--min-panel {o.min_panel}: the panel has {len(o.judge_models)} judge model(s) "
                             f"(--judge-models); ask for at most {len(o.judge_models)} answers" if o.judge_models else
                             "--min-panel is for a judge panel: pass --judge-models MODEL[,MODEL...]")
        self.pipeline = self._pipeline() if o.gen is not None else None
        self.source: Path | None = None
        self._predictions: dict[str, Prediction] = {}
        self._solver: GeneratorSolver | PredictionsSolver | None = None

    def _pipeline(self) -> Any:
        """The retrieval pipeline the setting needs; options that would be ignored are errors, not no-ops."""
        o = self.options
        if not needs_retrieval(o.setting):
            if o.pipeline or o.corpus or o.rewrite_model or o.pipeline_dir or o.index_dir:
                raise UsageError("--pipeline, --corpus, --rewrite-model, --pipeline-dir and --index-dir are for "
                                 "--setting reference+rag or rag")
            return None
        if not o.pipeline:
            raise UsageError(f"--setting {o.setting} retrieves passages: pass --pipeline NAME and --corpus FILE")
        from ragjudge.retrieval.pipeline import Pipeline
        from ragjudge.retrieval.spec import load_pipeline

        pipe = Pipeline(load_pipeline(o.pipeline, o.pipeline_dir), extra_dirs=o.pipeline_dir,
                        index_dir=Path(o.index_dir) if o.index_dir else None, rewrite_model=o.rewrite_model)
        if pipe.spec.query.strategy == "rewrite" and not pipe.spec.query.model:
            raise UsageError(f"pipeline {o.pipeline} rewrites queries: pass --rewrite-model MODEL (or set query.model)")
        if o.corpus is None and not hasattr(pipe.retriever, "attach"):
            raise UsageError(f"pipeline {o.pipeline} ({pipe.retriever.kind}) indexes a corpus: pass --corpus FILE")
        return pipe

    # -- Bench ------------------------------------------------------------------------------------------

    def load(self) -> list[Task]:
        o = self.options
        if o.predictions is not None:
            self.source = Path(o.predictions)
            pairs = read_predictions(self.source)
            self._predictions = {t.key: p for t, p in pairs}
            return [t for t, _ in pairs]
        self.source = resolve_bench(self.name, o.data)
        tasks = tasks_for_setting(read_tasks(self.source), o.setting)
        if self.pipeline is not None:
            require_questions(tasks, self.source)
        return tasks

    def sample_id(self, sample: Task) -> str:
        return sample.key

    def llm_models(self) -> list[str]:
        o = self.options
        models = [o.gen] if o.gen and o.gen != "extractive" else []
        models += o.judge_models if any(j.needs_llm for j in self.judges) else []
        models += self.pipeline.llm_models if self.pipeline is not None else []
        return models

    def solver(self, ctx: RunContext) -> Solver[Task]:
        o = self.options
        if o.predictions is not None:
            self._solver = PredictionsSolver(self._predictions)
        else:
            from ragjudge.generation import build_generator

            assert o.gen is not None
            generator = build_generator(o.gen) if o.gen == "extractive" else \
                build_generator(o.gen, gateway=ctx.require_gateway())
            self._solver = GeneratorSolver(generator, o.setting, self.pipeline, o.corpus)
        return self._solver

    def judge_context(self, ctx: RunContext) -> JudgeContext:
        return JudgeContext(gateway=ctx.gateway, judge_models=self.options.judge_models,
                            retry_errors=ctx.options.retry_errors, min_panel=self.options.min_panel,
                            cache_dir=Path(ctx.options.cache_dir) if ctx.options.cache_dir else None,
                            use_cache=ctx.options.use_cache)

    def scorers(self, ctx: RunContext) -> list[Scorer[Task]]:
        judge_ctx = self.judge_context(ctx)
        return [JudgeScorer(judge, judge_ctx) for judge in self.judges]

    def outcomes(self, results: Sequence[SampleResult[Task]]) -> list[TaskOutcome]:
        return [assemble(r.sample, Prediction.model_validate(r.output),
                         {k: JudgeResult.model_validate(v) for k, v in r.scores.items()},
                         conversational_as_unanswerable=self.options.conversational_as_unanswerable)
                for r in results]

    @property
    def catalog(self) -> MetricCatalog:
        """The declared metrics, and each judge's own (a judge spec of yours names its metric and direction)."""
        declared = MetricCatalog(self.metrics, self.name)
        extra = []
        for judge in self.judges:
            try:
                declared.info(judge.metric)
            except KeyError:
                spec = judge.spec
                extra.append(MetricInfo(spec.metric, spec.description.split(". ")[0].rstrip("."),
                                        higher_is_better=spec.higher_is_better, kind=spec.metric_kind))
        return MetricCatalog([*self.metrics, *extra], self.name)

    def summarize(self, results: Sequence[SampleResult[Task]], ctx: RunContext) -> Summary:
        outcomes = self.outcomes(results)
        error_counts: dict[str, int] = {}
        for o in outcomes:
            for r in o.results.values():
                if r.error:
                    error_counts[r.metric] = error_counts.get(r.metric, 0) + 1
        metrics, breakdowns = summarize(outcomes, metric_names(self.judges), error_counts, self.catalog)
        warnings = []
        for metric, partial in partial_panels(outcomes).items():  # panels some members did not answer
            metrics[metric].details["partial_panels"] = partial
            warnings.append(f"warning: {partial} {metric} panel score(s) came from fewer judges than asked (a "
                            "member failed); --min-panel N requires N answers")
        details: dict[str, Any] = {"judges": self.judge_models(ctx)}
        info = self._retrieval_info()
        if info is not None:
            from ragjudge.retrieval.queries import rewrite_warning

            details["pipeline"] = info["spec"]["name"]
            if info["query_strategy"].get("strategy") == "rewrite":  # fallbacks are reported, never hidden
                details["query_rewrite"] = info["query_strategy"]
                warnings[:0] = [w for w in [rewrite_warning(info["query_strategy"])] if w]
        return self.summary(results, metrics, breakdowns=breakdowns, warnings=warnings, details=details,
                            headline=headline_of(metrics, HEADLINE, self.unit, also=("answerability_acc",)))

    def judge_models(self, ctx: RunContext) -> dict[str, list[str]]:
        judge_ctx = self.judge_context(ctx)
        return {j.name: j.describe_models(judge_ctx) for j in self.judges}

    def _retrieval_info(self) -> dict[str, Any] | None:
        return self._solver.retrieval_info if isinstance(self._solver, GeneratorSolver) else None

    def sample(self, result: SampleResult[Task]) -> Sample:
        return outcome_sample(self.outcomes([result])[0], metric_names(self.judges),
                              self.options.setting if self.options.gen else None)

    def records(self, results: Sequence[SampleResult[Task]]) -> list[dict[str, Any]]:
        out = []
        for o in self.outcomes(results):
            metrics = {k: [v] for k, v in o.metrics.items()}  # lists, as the benchmark's scripts write them
            details: dict[str, Any] = {"judges": {k: r.model_dump(exclude_none=True) for k, r in o.results.items()}}
            if o.prediction.contexts is not None and self.options.setting == "rag":
                # contexts become the retrieved passages: keep the references for readers (ragjudge report)
                details["reference_contexts"] = [p.to_record() for p in o.task.contexts]
            if o.errors:
                details["errors"] = o.errors
            out.append(result_record(o.task, o.prediction, metrics, details))
        return out

    def rows(self, results: Sequence[SampleResult[Task]]) -> list[dict[str, Any]]:
        return tidy_table(self.outcomes(results), metric_names(self.judges)).to_dict("records")

    def run_info(self, ctx: RunContext) -> dict[str, Any]:
        o = self.options
        judges = {j.name: j.describe_models(JudgeContext(judge_models=o.judge_models)) for j in self.judges}
        return {"source": str(self.source), "generator": o.gen, "setting": o.setting if o.gen else None,
                "pipeline": self._retrieval_info(), "judges": judges, "judge_models": o.judge_models,
                "conversational_as_unanswerable": o.conversational_as_unanswerable,
                "models": {"generator": o.gen, "judges": judges}}

    def out_slug(self) -> list[str]:
        o = self.options
        return [o.gen or "predictions", o.setting] + ([Path(o.pipeline).stem] if self.pipeline is not None else [])

    def close(self) -> None:
        if self.pipeline is not None:
            self.pipeline.close()

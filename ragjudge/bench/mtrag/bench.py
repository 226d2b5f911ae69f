"""`--bench mtrag`: generate answers to MTRAG's multi-turn tasks (or read predictions) and judge them with
the paper's judge layer, IDK conditioning and breakdowns (each part in the module of its name; `settings.py`: which
passages the generator sees, `metrics.py`: IDK conditioning, `records.py`: the official results.jsonl records).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import Field

from ragjudge.bench.mtrag import data as mtrag_data
from ragjudge.bench.mtrag.data import MtragData
from ragjudge.bench.mtrag.items import output_item
from ragjudge.bench.mtrag.metrics import CLARIFICATION_METRIC, METRIC_INFOS, TaskOutcome, assemble, metric_names
from ragjudge.bench.mtrag.records import official_records
from ragjudge.bench.mtrag.samples import outcome_sample
from ragjudge.bench.mtrag.settings import check_setting
from ragjudge.bench.mtrag.solver import RETRIEVAL_FACTS, GeneratorSolver, PredictionsSolver, retrieval_pipeline
from ragjudge.bench.mtrag.summary import summary_parts, tidy_table
from ragjudge.engine.bench import Bench, BenchOptions, Loaded, MetricInfo, SampleResult, Scorer, Solver
from ragjudge.engine.context import RunContext
from ragjudge.engine.judge_scorer import JudgeScorer
from ragjudge.engine.summary import MetricCatalog, Summary
from ragjudge.errors import UsageError
from ragjudge.formats.samples import Sample, Score
from ragjudge.judges import Judge, JudgeContext, JudgeRegistry, judge_runtime, judges_models, require_judge_models
from ragjudge.models import Prediction, Task

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
    Options = MtragOptions
    data_help = ("The MTRAG human generation tasks (IBM/mt-rag-benchmark, mtrag-human/generation_tasks/"
                 "reference.jsonl): downloaded into the cache on first use, or --data PATH / $RAGJUDGE_DATA for a "
                 "local copy; `--bench PATH` takes any MTRAG-format file or folder.")
    metrics = METRIC_INFOS
    breakdowns = ("answerability", "turn", "domain", "question_type", "multi_turn", "standalone")
    offline_judges = OFFLINE_JUDGES
    llm_judges = LLM_JUDGES
    unit = "tasks"

    def __init__(self, options: MtragOptions, *, label: str | None = None,
                 records: Sequence[Mapping[str, Any]] | None = None):
        """`records`: MTRAG-format tasks given in memory (`ragjudge.evaluate(rows)`), read as a file's lines are;
        `data` (or `predictions`) then only names them in errors."""
        super().__init__(options, label=label)
        self.given = list(records) if records is not None else None
        o = options
        if (o.gen is None) == (o.predictions is None):
            raise UsageError(f"bench {self.name} needs --gen MODEL (to generate answers) or -T predictions=FILE "
                             "(to judge existing ones), not both" if o.gen else
                             f"bench {self.name} needs --gen MODEL ('extractive' offline, or a litellm model)")
        check_setting(o.setting)
        if o.predictions is not None and (o.setting != "reference" or o.pipeline or o.corpus):
            raise UsageError("-T predictions judges existing answers: -T setting, --pipeline and --corpus do not apply")
        self.registry = JudgeRegistry(o.judge_dir)
        names = o.judges if o.judges is not None else list(self.llm_judges if o.judge_models else
                                                            self.offline_judges)
        clarifying = [n for n in names if self.registry.spec(n).metric == CLARIFICATION_METRIC]
        if len(clarifying) > 1:
            raise UsageError(f"judges {' and '.join(clarifying)} both write {CLARIFICATION_METRIC}: choose one")
        self.judges: list[Judge] = self.registry.build_many(names, {"bertscore_model": o.bertscore_model})
        require_judge_models(self.judges, o.judge_models, self.offline_judges)
        if o.min_panel is not None and o.min_panel > len(o.judge_models):
            raise UsageError(f"--min-panel {o.min_panel}: the panel has {len(o.judge_models)} judge model(s) "
                             f"(--judge-models); ask for at most {len(o.judge_models)} answers" if o.judge_models else
                             "--min-panel is for a judge panel: pass --judge-models MODEL[,MODEL...]")
        self.pipeline = retrieval_pipeline(o) if o.gen is not None else None

    @property
    def setting(self) -> str | None:
        """The generator's setting, or None when the answers are read from a predictions file."""
        return self.options.setting if self.options.gen else None

    # -- Bench ------------------------------------------------------------------------------------------

    def load(self) -> Loaded[Task, MtragData]:
        """The tasks, with what they were read from (the predictions, the source file) as the run's `ctx.data`."""
        o = self.options
        data = mtrag_data.load(self.name, data=o.data, predictions=o.predictions, setting=o.setting,
                              records=self.given)
        return Loaded(data.tasks, data)

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
            return PredictionsSolver(ctx.data.predictions)
        from ragjudge.generation import build_generator

        assert o.gen is not None
        generator = build_generator(o.gen) if o.gen == "extractive" else \
            build_generator(o.gen, gateway=ctx.require_gateway())
        return GeneratorSolver(generator, o.setting, self.pipeline, o.corpus)

    def scorers(self, ctx: RunContext) -> list[Scorer[Task]]:
        judge_ctx = JudgeContext.of_run(ctx, self.options.judge_models, self.options.min_panel)
        return [JudgeScorer(judge, judge_ctx, output_item) for judge in self.judges]

    def outcome(self, result: SampleResult[Task]) -> TaskOutcome:
        """A result under MTRAG's official metric names (what the summary, the samples and the records read)."""
        return assemble(result.sample, Prediction.model_validate(result.output),
                        {k: Score.model_validate(v) for k, v in result.scores.items()},
                        conversational_as_unanswerable=self.options.conversational_as_unanswerable)

    def outcomes(self, results: Sequence[SampleResult[Task]]) -> list[TaskOutcome]:
        return [self.outcome(r) for r in results]

    @property
    def catalog(self) -> MetricCatalog:
        """The declared metrics, and each judge's own (a judge spec of yours names its metric and direction)."""
        extra = [MetricInfo(j.metric, j.spec.description.split(". ")[0].rstrip("."),
                            higher_is_better=j.spec.higher_is_better, kind=j.spec.metric_kind)
                 for j in self.judges if not any(info.matches(j.metric) for info in self.metrics)]
        return MetricCatalog([*self.metrics, *extra], self.name)

    def summarize(self, results: Sequence[SampleResult[Task]], ctx: RunContext) -> Summary:
        return self.summary(results, **summary_parts(self.outcomes(results), metric_names(self.judges), self.catalog,
                                                     judges=judges_models(self.judges, self.options.judge_models),
                                                     retrieval=ctx.facts.get(RETRIEVAL_FACTS)))

    def sample(self, result: SampleResult[Task], ctx: RunContext) -> Sample:
        return outcome_sample(self.outcome(result), metric_names(self.judges), self.setting,
                              query=result.output.get("query"))

    # -- outputs ----------------------------------------------------------------------------------------

    def records(self, results: Sequence[SampleResult[Task]], ctx: RunContext) -> list[dict[str, Any]]:
        return official_records(self.outcomes(results), self.options.setting)

    def rows(self, results: Sequence[SampleResult[Task]], ctx: RunContext) -> list[dict[str, Any]]:
        return tidy_table(self.outcomes(results), metric_names(self.judges)).to_dict("records")

    def run_info(self, ctx: RunContext) -> dict[str, Any]:
        o = self.options
        judges = judges_models(self.judges, o.judge_models)
        return {"source": str(ctx.data.source) if ctx.data else None, "generator": o.gen, "setting": self.setting,
                "pipeline": ctx.facts.get(RETRIEVAL_FACTS), "judges": judges, "judge_models": o.judge_models,
                "conversational_as_unanswerable": o.conversational_as_unanswerable,
                "models": {"generator": o.gen, "judges": judges}, **judge_runtime(self.judges)}

    def out_slug(self) -> list[str]:
        o = self.options
        return [o.gen or "predictions", o.setting] + ([Path(o.pipeline).stem] if self.pipeline is not None else [])

    def close(self) -> None:
        if self.pipeline is not None:
            self.pipeline.close()

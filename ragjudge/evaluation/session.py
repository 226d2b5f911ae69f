"""One evaluation run, shared by `ragjudge eval` and `ragjudge judge`: set-up, stages, outputs."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragjudge import __version__
from ragjudge.errors import UsageError
from ragjudge.evaluation.conditioning import ANSWERABILITY_ACCURACY, CONDITIONED_SUFFIX
from ragjudge.evaluation.journal import JudgementJournal, PredictionJournal, fingerprint
from ragjudge.evaluation.runner import (
    CONDITIONED_METRICS,
    IDK_JUDGES,
    RB_ALG_COMPONENTS,
    TaskOutcome,
    assemble,
    generate_all,
    judge_all,
)
from ragjudge.evaluation.summary import summarize, tidy_table
from ragjudge.formats.jsonl import write_jsonl
from ragjudge.formats.mtrag import result_record
from ragjudge.generation import GenerationInput, Generator
from ragjudge.judges import Judge, JudgeContext, JudgeRegistry
from ragjudge.llm import LLMGateway, ResponseCache
from ragjudge.llm.gateway import validate_model
from ragjudge.models import Passage, Prediction, Task
from ragjudge.progress import progress_bars

if TYPE_CHECKING:
    from ragjudge.retrieval.pipeline import Pipeline

OFFLINE_JUDGES = ["idk_lexical", "rb_alg"]
LLM_JUDGES = ["idk", "rb_alg", "rb_llm", "rl_f"]


@dataclass
class RunOptions:
    judges: list[str] | None = None
    judge_models: list[str] = field(default_factory=list)
    judge_dirs: list[str] = field(default_factory=list)
    bertscore_model: str | None = None
    concurrency: int = 8
    max_retries: int = 6
    timeout: float = 120.0
    cache_dir: str | None = None
    use_cache: bool = True
    api_base: str | None = None
    conversational_as_unanswerable: bool = False
    show_progress: bool = True


@dataclass
class OutputPaths:
    """Where a run writes. `ragjudge eval` uses a folder; `ragjudge judge` a results file and siblings."""

    results: Path
    predictions_journal: Path
    judgements_journal: Path
    csv: Path
    parquet: Path
    summary: Path
    run: Path

    @classmethod
    def in_folder(cls, folder: Path) -> OutputPaths:
        return cls(results=folder / "results.jsonl", predictions_journal=folder / "predictions.jsonl",
                   judgements_journal=folder / "judgements.jsonl", csv=folder / "results.csv",
                   parquet=folder / "results.parquet", summary=folder / "summary.json", run=folder / "run.json")

    @classmethod
    def beside(cls, results: Path) -> OutputPaths:
        stem = results.name.removesuffix(".jsonl")
        sibling = results.with_name
        return cls(results=results, predictions_journal=sibling(stem + ".predictions.jsonl"),
                   judgements_journal=sibling(stem + ".judgements.jsonl"), csv=sibling(stem + ".csv"),
                   parquet=sibling(stem + ".parquet"), summary=sibling(stem + ".summary.json"),
                   run=sibling(stem + ".run.json"))


@dataclass
class RunResult:
    outcomes: list[TaskOutcome]
    summary: dict[str, Any]
    gateway: LLMGateway | None
    paths: OutputPaths
    judge_models: dict[str, list[str]]

    @property
    def exit_code(self) -> int:
        return 1 if any(o.failed for o in self.outcomes) else 0


def choose_judges(names: list[str] | None, judge_models: list[str]) -> list[str]:
    """No silent defaults: without judge models only offline judges can run, and the CLI says which ran."""
    if names is None:
        return list(LLM_JUDGES if judge_models else OFFLINE_JUDGES)
    return names


def build_judges(options: RunOptions) -> list[Judge]:
    registry = JudgeRegistry(options.judge_dirs)
    names = choose_judges(options.judges, options.judge_models)
    judges = registry.build_many(names, {"bertscore_model": options.bertscore_model})
    needing = [j.name for j in judges if j.needs_llm]
    if needing and not options.judge_models:
        raise UsageError(f"judge(s) {', '.join(needing)} need an LLM: pass --judge-models MODEL[,MODEL...] "
                         f"(offline judges: idk_lexical, rb_alg)")
    return judges


def build_gateway(options: RunOptions, models: list[str]) -> LLMGateway | None:
    if not models:
        return None
    for model in models:
        validate_model(model, options.api_base)
    cache = ResponseCache(options.cache_dir) if options.use_cache else None
    return LLMGateway(cache=cache, concurrency=options.concurrency, max_retries=options.max_retries,
                      timeout=options.timeout, api_base=options.api_base)


SETTINGS = ("reference", "reference+rag", "rag")
RAG_PASSAGES = 5
"""The paper's N: passages the generator sees in the reference+rag and rag settings."""
MAX_REFERENCES_FOR_TOP_UP = 2
"""reference+rag only uses tasks with at most this many reference passages, as in the paper."""


def check_setting(setting: str) -> None:
    if setting not in SETTINGS:
        raise UsageError(f"unknown setting {setting!r} (available: {', '.join(SETTINGS)})")


def needs_retrieval(setting: str) -> bool:
    check_setting(setting)
    return setting != "reference"


def tasks_for_setting(tasks: list[Task], setting: str) -> list[Task]:
    """reference+rag keeps only tasks with at most two reference passages (room for retrieved ones)."""
    check_setting(setting)
    if setting == "reference+rag":
        return [t for t in tasks if len(t.contexts) <= MAX_REFERENCES_FOR_TOP_UP]
    return list(tasks)


def generation_inputs(tasks: list[Task], setting: str,
                      retrieved: dict[str, list[Passage]] | None = None) -> list[GenerationInput]:
    """Which passages the generator sees.

    - `reference`: the task's reference passages, none for unanswerable or conversational turns;
    - `reference+rag`: the reference passages, then retrieved passages not already among them, up to 5;
    - `rag`: the top 5 retrieved passages.
    Retrieved passages keep their retrieval score; a reference passage takes its own retrieval score if
    it was retrieved, else the top retrieved score (it ranks first). Each carries `origin`.
    """
    check_setting(setting)
    if setting == "reference":
        no_passages = {"UNANSWERABLE", "CONVERSATIONAL"}
        return [GenerationInput(t, [] if t.answerability in no_passages else list(t.contexts)) for t in tasks]
    if retrieved is None:
        raise UsageError(f"setting {setting} needs retrieved passages: pass --pipeline and --corpus")
    inputs = []
    for task in tasks:
        ranked = [p.model_copy(update={"origin": "retrieved"}) for p in retrieved.get(task.key, [])]
        if setting == "rag":
            inputs.append(GenerationInput(task, ranked[:RAG_PASSAGES]))
            continue
        by_id = {p.document_id: p for p in ranked}
        top = max((p.score for p in ranked if p.score is not None), default=1.0)
        chosen = []
        for ref in task.contexts:
            hit = by_id.get(ref.document_id)
            score = hit.score if hit is not None and hit.score is not None else top
            chosen.append(ref.model_copy(update={"score": score, "origin": "reference"}))
        seen = {p.document_id for p in chosen}
        chosen += [p for p in ranked if p.document_id not in seen][: max(0, RAG_PASSAGES - len(chosen))]
        inputs.append(GenerationInput(task, chosen))
    return inputs


def metric_names(judges: list[Judge], outcomes: list[TaskOutcome]) -> list[str]:
    """Judge metrics, RB_alg components, conditioned variants and answerability accuracy, in that order."""
    names = [j.metric for j in judges]
    if any(j.name == "rb_alg" for j in judges):
        names += list(RB_ALG_COMPONENTS)
    if any(j.name in IDK_JUDGES for j in judges):
        names += [m + CONDITIONED_SUFFIX for m in CONDITIONED_METRICS if m in names]
        names.append(ANSWERABILITY_ACCURACY)
    return names


async def run(
    *,
    tasks: list[Task],
    predictions: dict[str, Prediction] | None,
    generator: Generator | None,
    setting: str | None,
    judges: list[Judge],
    gateway: LLMGateway | None,
    options: RunOptions,
    paths: OutputPaths,
    source: str,
    pipeline: Pipeline | None = None,
    corpus: str | None = None,
) -> RunResult:
    """Generate (unless predictions are given), judge, assemble and write every output.

    With a `pipeline` (settings reference+rag and rag), passages are retrieved for each task first,
    and each prediction carries the passages its generator saw (`Prediction.contexts`), so judges
    and the results file use them.
    """
    started = time.time()
    ctx = JudgeContext(gateway=gateway, judge_models=options.judge_models,
                       cache_dir=Path(options.cache_dir) if options.cache_dir else None, use_cache=options.use_cache)
    retrieval_info: dict[str, Any] | None = None
    with progress_bars(options.show_progress) as bars:
        if predictions is None:
            assert generator is not None and setting is not None
            retrieved = None
            gen_fp = fingerprint(generator.name, setting)
            if pipeline is not None:
                pipeline.open(corpus, bars)
                k = max(pipeline.spec.k, RAG_PASSAGES + MAX_REFERENCES_FOR_TOP_UP)
                retrieval = await pipeline.retrieve_tasks(tasks, k)
                retrieved = retrieval.passages
                retrieval_info = {**pipeline.record(), "query_strategy": retrieval.query_summary, "k": k}
                gen_fp = fingerprint(generator.name, setting, pipeline.spec.record(), pipeline.index_identity())
            inputs = generation_inputs(tasks, setting, retrieved)
            shown = {item.task.key: item.passages for item in inputs} if pipeline is not None else None
            journal = PredictionJournal(paths.predictions_journal, gen_fp, shown)
            try:
                predictions = await generate_all(inputs, generator, journal, bars)
            finally:
                journal.close()
            if pipeline is not None:  # the passages each answer was generated from, for judges and results
                for item in inputs:
                    if (done := predictions.get(item.task.key)) is not None:
                        predictions[item.task.key] = done.model_copy(update={"contexts": item.passages})
        pairs = []
        for task in tasks:
            prediction = predictions.get(task.key)
            if prediction is None:  # generation failed for good: judged as an error, reported, exit 1
                prediction = Prediction(task_id=task.task_id, text="", error="generation failed")
            pairs.append((task, prediction))
        judgements = JudgementJournal(paths.judgements_journal)
        try:
            results = await judge_all(pairs, judges, ctx, judgements, bars)
        finally:
            judgements.close()

    outcomes = [assemble(t, p, results[t.key], conversational_as_unanswerable=options.conversational_as_unanswerable)
                for t, p in pairs]
    names = metric_names(judges, outcomes)
    error_counts: dict[str, int] = {}
    for o in outcomes:
        for r in o.results.values():
            if r.error:
                error_counts[r.metric] = error_counts.get(r.metric, 0) + 1
    summary = summarize(outcomes, names, error_counts)
    judge_models = {j.name: j.describe_models(ctx) for j in judges}
    summary["judges"] = judge_models
    if retrieval_info is not None:
        summary["pipeline"] = retrieval_info["spec"]["name"]
        if retrieval_info["query_strategy"].get("strategy") == "rewrite":  # fallbacks are reported, never hidden
            summary["query_rewrite"] = retrieval_info["query_strategy"]
    write_outputs(outcomes, names, summary, paths, run_info={
        "ragjudge_version": __version__, "source": source, "generator": generator.name if generator else None,
        "setting": setting, "pipeline": retrieval_info, "judges": judge_models, "judge_models": options.judge_models,
        "conversational_as_unanswerable": options.conversational_as_unanswerable,
        "usage": gateway.usage.as_dict() if gateway else {}, "seconds": round(time.time() - started, 2),
    })
    return RunResult(outcomes=outcomes, summary=summary, gateway=gateway, paths=paths, judge_models=judge_models)


def write_outputs(outcomes: list[TaskOutcome], names: list[str], summary: dict[str, Any], paths: OutputPaths,
                  run_info: dict[str, Any]) -> None:
    records = []
    for o in outcomes:
        metrics = {k: [v] for k, v in o.metrics.items()}  # lists, as the benchmark's scripts write them
        details = {"judges": {k: r.model_dump(exclude_none=True) for k, r in o.results.items()}}
        if o.errors:
            details["errors"] = o.errors
        records.append(result_record(o.task, o.prediction, metrics, details))
    write_jsonl(paths.results, records)
    frame = tidy_table(outcomes, names)
    frame.to_csv(paths.csv, index=False)
    frame.to_parquet(paths.parquet, index=False)
    paths.summary.write_text(json.dumps(summary, indent=2) + "\n")
    paths.run.write_text(json.dumps(run_info, indent=2, default=str) + "\n")

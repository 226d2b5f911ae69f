"""One evaluation run, shared by `ragjudge eval` and `ragjudge judge`: set-up, stages, outputs."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
from ragjudge.models import Prediction, Task
from ragjudge.progress import progress_bars

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


def generation_inputs(tasks: list[Task], setting: str) -> list[GenerationInput]:
    """`reference`: the task's reference passages, none for unanswerable or conversational turns."""
    if setting != "reference":
        raise UsageError(f"unknown setting {setting!r} (available: reference)")
    no_passages = {"UNANSWERABLE", "CONVERSATIONAL"}
    return [GenerationInput(t, [] if t.answerability in no_passages else list(t.contexts)) for t in tasks]


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
) -> RunResult:
    """Generate (unless predictions are given), judge, assemble and write every output."""
    started = time.time()
    ctx = JudgeContext(gateway=gateway, judge_models=options.judge_models)
    with progress_bars(options.show_progress) as bars:
        if predictions is None:
            assert generator is not None and setting is not None
            inputs = generation_inputs(tasks, setting)
            journal = PredictionJournal(paths.predictions_journal, fingerprint(generator.name, setting))
            try:
                predictions = await generate_all(inputs, generator, journal, bars)
            finally:
                journal.close()
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
    write_outputs(outcomes, names, summary, paths, run_info={
        "ragjudge_version": __version__, "source": source, "generator": generator.name if generator else None,
        "setting": setting, "judges": judge_models, "judge_models": options.judge_models,
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

"""Run a bench: load, solve, score, summarize, write. The same loop for every benchmark.

Resume is by journal (journal.py), Ctrl-C by interrupt.py; a KeyboardInterrupt propagates after the journals are
closed: the CLI turns it into exit 130 and "rerun to resume".
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ragjudge.version import __version__
from ragjudge.embeddings.scope import embedding_store_scope
from ragjudge.engine.bench import Bench, Loaded, Record, SampleResult, Scorer, Solver, failed, fingerprint
from ragjudge.engine.context import EngineOptions, RunContext, build_gateway
from ragjudge.engine.run_settings import record
from ragjudge.engine.interrupt import run_keeping_answers
from ragjudge.engine.journal import Journal
from ragjudge.engine.parallel import all_or_none
from ragjudge.engine.outputs import OutputLock, OutputPaths, tidy_frame, write_outputs
from ragjudge.engine.summary import RunFacts, Summary, add_judge_only_cis
from ragjudge.errors import InputError
from ragjudge.formats.files import InputLog, recording_inputs
from ragjudge.formats.samples import Sample
from ragjudge.judges.loading import settle as settle_loading
from ragjudge.llm import LLMGateway
from ragjudge.llm.cache import default_cache_dir
from ragjudge.llm.usage import logged_usage
from ragjudge.progress import progress_bars


@dataclass
class RunOutcome:
    bench: Bench[Any, Any]
    results: list[SampleResult[Any]]
    samples: list[Sample]
    """The sample log's records, one per result (what samples.jsonl holds)."""
    summary: Summary
    run_info: dict[str, Any]
    """What run.json holds (written there when the run writes files)."""
    paths: OutputPaths | None
    gateway: LLMGateway | None
    exit_code: int
    """0, or 1 when any sample had an error (the summary's n_errors)."""
    seconds: float


def run(bench: Bench[Any, Any], options: EngineOptions, paths: OutputPaths | None) -> RunOutcome:
    """Everything a run does, in order: samples are loaded and every model checked before any paid work; what `load`
    returned beside the samples is `ctx.data`, closed (when it has a `close`) with the bench. `paths=None` writes
    nothing (no journal, no results): for scoring a file in place."""
    started = time.time()
    # Not inputs: the run's own folder, and the caches: --cache-dir, and where caches go without it
    # ($RAGJUDGE_CACHE_DIR or ~/.cache/ragjudge: the LLM responses, indexes and the files they are built from)
    exclude = [p for p in (paths.folder if paths is not None else None, options.cache_dir, default_cache_dir())
               if p is not None]
    data: Any = None
    try:
        with embedding_store_scope(options.cache_dir, options.use_cache, options.encoder_backend), recording_inputs(exclude) as inputs:
            loaded = bench.load()
            samples, data = (loaded.samples, loaded.data) if isinstance(loaded, Loaded) else (list(loaded), None)
            cut = bool(options.limit) and len(samples) > options.limit  # type: ignore[operator]
            if options.limit:
                samples = samples[: options.limit]
            _check_unique(bench, samples)
            if paths is None:
                return _execute(bench, Loaded(samples, data), options, build_gateway(options, bench.llm_models()),
                                None, started, inputs, cut)
            with OutputLock(paths.lock, paths.owner):
                gateway = build_gateway(options, bench.llm_models(), paths.usage, paths.batches)
                try:
                    return _execute(bench, Loaded(samples, data), options, gateway, paths, started, inputs, cut)
                finally:
                    if gateway is not None:
                        gateway.usage.close()
                        if gateway.batcher is not None:
                            gateway.batcher.journal.close()
    finally:
        settle_loading()  # nothing left importing or loading in the background once the run is over
        bench.close()
        if (close := getattr(data, "close", None)) is not None:  # what load opened for the run (indexes)
            close()


def _execute(bench: Bench[Any, Any], loaded: Loaded[Any, Any], options: EngineOptions, gateway: LLMGateway | None,
             paths: OutputPaths | None, started: float, inputs: InputLog, cut_by_limit: bool) -> RunOutcome:
    samples = loaded.samples
    with progress_bars(options.show_progress) as bars:
        ctx = RunContext(options=options, gateway=gateway, bars=bars, paths=paths, cut_by_limit=cut_by_limit,
                         data=loaded.data)
        if gateway is not None and gateway.batcher is not None:
            gateway.batcher.bars = bars
        results = run_keeping_answers(_solve_and_score(bench, samples, ctx, paths), gateway, bars.say)
    summary = bench.summarize(results, ctx)
    sample_log = [bench.sample(r, ctx) for r in results]
    add_judge_only_cis(summary, sample_log)
    extra = bench.run_info(ctx)
    summary.run = RunFacts(ragjudge_version=__version__, bench=bench.name,
                           options=bench.options.model_dump(mode="json"), models=extra.get("models") or {},
                           seconds=round(time.time() - started, 2))
    run_info = {
        "ragjudge_version": __version__, "bench": bench.name, "options": bench.options.model_dump(mode="json"),
        **extra,
        "engine": record(options),
        "n_samples": len(samples), "data_hash": data_hash(bench, samples),
        "inputs": inputs.entries(),
        "usage": logged_usage(paths.usage) if gateway and paths is not None else  # every invocation, resumes too
        (gateway.usage.as_dict() if gateway else {}),
        "usage_this_invocation": gateway.usage.as_dict() if gateway else {},
        "rate_limits": {name: vars(limiter.stats) for name, limiter in gateway.limiters.items()} if gateway else {},
        **({"batches": gateway.batcher.report} if gateway is not None and gateway.batcher is not None else {}),
        "seconds": round(time.time() - started, 2),
    }
    if paths is not None:
        write_outputs(paths, sample_log, bench.records(results, ctx), tidy_frame(bench.rows(results, ctx)),
                      summary.to_dict(), run_info, bench.artifacts(results, summary, ctx))
    return RunOutcome(bench=bench, results=results, samples=sample_log, summary=summary, run_info=run_info,
                      paths=paths, gateway=gateway,
                      exit_code=1 if summary.n_errors else 0, seconds=round(time.time() - started, 2))


def data_hash(bench: Bench[Any, Any], samples: Sequence[Any]) -> str:
    """A hash of every sample's content, in any order: two runs with the same hash evaluated the same data."""
    return fingerprint(sorted(bench.sample_fingerprint(s) for s in samples))


def _check_unique(bench: Bench[Any, Any], samples: Sequence[Any]) -> None:
    counts = Counter(bench.sample_id(s) for s in samples)
    repeated = [k for k, n in counts.items() if n > 1]
    if repeated:
        raise InputError(f"sample id {repeated[0]!r} appears {counts[repeated[0]]} times: ids must be unique",
                         field="id")


async def _solve_and_score(bench: Bench[Any, Any], samples: list[Any], ctx: RunContext,
                           paths: OutputPaths | None) -> list[SampleResult[Any]]:
    solver = bench.solver(ctx)
    await solver.prepare(samples, ctx)
    with Journal(paths.solve_journal if paths is not None and solver.journaled else None) as journal:
        outputs = await _solve(bench, solver, samples, ctx, journal)
    results = [SampleResult(s, outputs[bench.sample_id(s)]) for s in samples]
    scorers = bench.scorers(ctx)
    if scorers:  # one work queue: every scorer's items in flight together, paced by the gateway
        with Journal(paths.score_journal if paths is not None else None) as journal:
            await all_or_none([_score(bench, scorer, results, ctx, journal) for scorer in scorers])
        order = [s.name for s in scorers]
        for r in results:
            r.scores = {name: r.scores[name] for name in order if name in r.scores}
    return results


async def _solve(bench: Bench[Any, Any], solver: Solver[Any], samples: list[Any], ctx: RunContext,
                 journal: Journal) -> dict[str, Record]:
    fps = {bench.sample_id(s): fingerprint(solver.fingerprint(s), bench.sample_fingerprint(s)) for s in samples}
    outputs: dict[str, Record] = {}
    for sid, fp in fps.items():
        if (done := journal.get("solve", sid, fp)) is not None:
            outputs[sid] = done
    todo = [s for s in samples if bench.sample_id(s) not in outputs]
    advance = ctx.bars.bar(f"solve ({solver.name})", total=len(samples), completed=len(samples) - len(todo))
    if todo:
        async for sid, output in solver.solve(todo, ctx):
            if sid not in fps:
                raise RuntimeError(f"solver {solver.name} returned an output for unknown sample {sid!r}")
            journal.record("solve", sid, fps[sid], output)
            outputs[sid] = output
            advance(1)
    for sid in fps:
        outputs.setdefault(sid, {"error": f"solver {solver.name} gave no output"})
    return outputs


async def _score(bench: Bench[Any, Any], scorer: Scorer[Any], results: list[SampleResult[Any]], ctx: RunContext,
                 journal: Journal) -> None:
    by_id = {bench.sample_id(r.sample): r for r in results}
    fps: dict[str, str] = {}
    todo = []
    for sid, r in by_id.items():
        if failed(r.output):
            r.scores[scorer.name] = scorer.unscorable(r.sample, r.output)
            continue
        fps[sid] = fingerprint(scorer.fingerprint(r.sample, r.output), bench.sample_fingerprint(r.sample))
        if (done := journal.get(scorer.name, sid, fps[sid])) is not None:
            r.scores[scorer.name] = done
        else:
            todo.append((r.sample, r.output))
    advance = ctx.bars.bar(scorer.name, total=len(results), completed=len(results) - len(todo))
    if todo:
        async for sid, score in scorer.score(todo, ctx):
            if sid not in fps:
                raise RuntimeError(f"scorer {scorer.name} returned a score for unknown sample {sid!r}")
            journal.record(scorer.name, sid, fps[sid], score)
            by_id[sid].scores[scorer.name] = score
            advance(1)
    for sid in fps:
        by_id[sid].scores.setdefault(scorer.name, {"error": f"scorer {scorer.name} gave no score"})

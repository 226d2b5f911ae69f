"""Runs from Python: a bench prepared from its name and options (`prepare_run`), or judges over answers already made
(`prepare_judging`), then executed into an `EvalResult` (`PreparedRun.execute`). `ragjudge eval` and
`ragjudge judge` are these same calls with the command line's spelling of errors; `run_bench` is both steps at once.
Without an output folder a run writes nothing (its result is the engine's own outcome, in memory).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, Unpack

from ragjudge.api.names import Names
from ragjudge.api.result import EvalResult
from ragjudge.api.settings import RunSettings, as_text, check_settings
from ragjudge.engine.bench import Bench, default_out
from ragjudge.engine.bench_options import PYTHON, Spelling
from ragjudge.engine.context import EngineOptions
from ragjudge.engine.prepare import engine_options, make_bench
from ragjudge.errors import UsageError

T = TypeVar("T")


@dataclass
class PreparedRun:
    """A bench with validated options and the engine's settings: nothing has run yet."""

    bench: Bench[Any, Any]
    engine: EngineOptions
    spelling: Spelling = PYTHON
    """How errors name options (`out` or `--out`)."""

    def default_out(self) -> Path:
        """Where `ragjudge eval` writes when no --out is given: runs/<bench>-<options>."""
        return default_out(self.bench)

    def execute(self, out: str | Path | None = None, *, results_file: str | Path | None = None,
                show_progress: bool = True) -> EvalResult:
        """Run it: into the run folder `out`, beside a results file (`ragjudge judge --out FILE`), or, with
        neither, in memory (nothing written). Rerunning into the same folder or file resumes."""
        from ragjudge.engine.outputs import OutputPaths
        from ragjudge.engine.runner import run
        from ragjudge.formats.files import output_file, output_folder

        if out is not None and results_file is not None:
            raise UsageError("give an output folder or a results file, not both")
        paths = None
        if out is not None:
            paths = OutputPaths.in_folder(output_folder(Path(out), f"output folder ({self.spelling.flag('out')})"))
        elif results_file is not None:
            paths = OutputPaths.beside(output_file(Path(results_file), "results file"))
        engine = self.engine.model_copy(update={"show_progress": show_progress})
        outcome = blocking(lambda: run(self.bench, engine, paths))
        return EvalResult.of(outcome)


def prepare_run(bench: str, *, data: str | Path | None = None, gen: str | None = None, pipeline: str | None = None,
                corpus: str | Path | None = None, rewrite_model: str | None = None,
                pipeline_dir: Sequence[str | Path] | None = None, index_dir: str | Path | None = None,
                judges: Names = None, judge_models: Names = None, judge_dir: Sequence[str | Path] | None = None,
                bertscore_model: str | None = None, criteria: Sequence[Any] | None = None,
                options: Mapping[str, Any] | None = None, spelling: Spelling = PYTHON,
                records: Sequence[Mapping[str, Any]] | None = None, **settings: Unpack[RunSettings]) -> PreparedRun:
    """`bench`: a registered name (`ragjudge benches`) or a path to MTRAG-format tasks. The keyword arguments before
    `options` are the options several benches share (`ragjudge eval`'s flags); `options` the bench's own (its `-T`
    keys, `ragjudge benches show NAME`); `settings` the run's (`RunSettings`). `records`: MTRAG-format tasks given in
    memory (the MTRAG benches), read as `data`'s lines would be; `data` then only names them."""
    flags = {"data": data, "gen": gen, "pipeline": pipeline, "corpus": corpus, "rewrite_model": rewrite_model,
             "pipeline_dir": _paths(pipeline_dir), "index_dir": index_dir, "judges": judges,
             "judge_models": judge_models, "judge_dir": _paths(judge_dir), "bertscore_model": bertscore_model,
             "criteria": list(criteria) if criteria else None}
    given = {"records": records} if records is not None else {}
    instance = make_bench(bench, _options(options, spelling), as_text(flags), spelling, **given)
    return PreparedRun(instance, engine_options(check_settings("run_bench", settings), bench_name=instance.name,
                                                uses_llm=instance.llm != "no", spelling=spelling), spelling)


def prepare_judging(predictions: str | Path, bench: str | None = None, *, judges: Names = None,
                    judge_models: Names = None, judge_dir: Sequence[str | Path] | None = None,
                    bertscore_model: str | None = None, criteria: Sequence[Any] | None = None,
                    options: Mapping[str, Any] | None = None, spelling: Spelling = PYTHON,
                    records: Sequence[Any] | None = None, **settings: Unpack[RunSettings]) -> PreparedRun:
    """Judges over answers already made: plain RAG records (question, answer, contexts, reference; the `rag` bench)
    or MTRAG-format tasks with `predictions` (the `mtrag` bench, or `mtrag-un` when a task is UNDERSPECIFIED), found
    from the file or named by `bench`. `options`: the bench's own (`min_panel`, `conversational_as_unanswerable`).
    `records`: records given in memory, judged as they are (`RagRecord`s by default, or MTRAG-format tasks with
    `bench` mtrag or mtrag-un, read as a file's lines); `predictions` then only names them."""
    from ragjudge.formats.rag_records import holds_mtrag_tasks

    if bench not in (None, "mtrag", "mtrag-un", "rag"):
        raise UsageError(f"{spelling.flag('bench')} must be rag, mtrag or mtrag-un, got {bench!r}")
    name = bench or ("rag" if records is not None else _judging_bench(Path(predictions), holds_mtrag_tasks))
    flags = {"judges": judges, "judge_models": judge_models, "judge_dir": _paths(judge_dir),
             "bertscore_model": bertscore_model, "criteria": list(criteria) if criteria else None}
    source = {"data" if name == "rag" else "predictions": str(predictions)}
    given = {"records": records} if records is not None else {}
    instance = make_bench(name, {**_options(options, spelling), **source}, as_text(flags), spelling, **given)
    return PreparedRun(instance, engine_options(check_settings("evaluate", settings), bench_name=name,
                                                uses_llm=instance.llm != "no", spelling=spelling), spelling)


def _judging_bench(path: Path, holds_mtrag_tasks: Callable[[Path], bool]) -> str:
    from ragjudge.formats.files import input_file

    if not path.is_dir():
        input_file(path, "file of records")
    if not holds_mtrag_tasks(path):
        return "rag"
    from ragjudge.bench.mtrag.un.bench import has_underspecified_tasks  # MTRAG's modules: only for MTRAG's files

    return "mtrag-un" if has_underspecified_tasks(path) else "mtrag"


def run_bench(name: str, *, data: str | Path | None = None, gen: str | None = None, pipeline: str | None = None,
              corpus: str | Path | None = None, rewrite_model: str | None = None,
              pipeline_dir: Sequence[str | Path] | None = None, index_dir: str | Path | None = None,
              judges: Names = None, judge_models: Names = None, judge_dir: Sequence[str | Path] | None = None,
              bertscore_model: str | None = None, options: Mapping[str, Any] | None = None,
              out: str | Path | None = None, show_progress: bool = True,
              **settings: Unpack[RunSettings]) -> EvalResult:
    """Run any registered bench as `ragjudge eval --bench NAME` does: `run_bench("cdr", data="examples/cdr-mini",
    pipeline="bm25", options={"unit": "session"})`. `out`: the run folder (rerunning resumes); None: in memory."""
    prepared = prepare_run(name, data=data, gen=gen, pipeline=pipeline, corpus=corpus, rewrite_model=rewrite_model,
                           pipeline_dir=pipeline_dir, index_dir=index_dir, judges=judges, judge_models=judge_models,
                           judge_dir=judge_dir, bertscore_model=bertscore_model, options=options, **settings)
    return prepared.execute(out, show_progress=show_progress)


def blocking(fn: Callable[[], T]) -> T:
    """Run `fn` here, or in a worker thread when this thread already runs an event loop (a Jupyter cell, an async
    test): the engine starts its own loop with `asyncio.run`, which cannot nest."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return fn()
    with ThreadPoolExecutor(1, thread_name_prefix="ragjudge") as pool:
        return pool.submit(fn).result()


def _options(options: Mapping[str, Any] | None, spelling: Spelling) -> dict[str, Any]:
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise UsageError(f"options must be a dict of the bench's options, got {type(options).__name__}")
    return as_text(options)


def _paths(values: Sequence[str | Path] | None) -> list[str] | None:
    if values is None:
        return None
    if isinstance(values, (str, Path)):
        return [str(values)]
    return [str(v) for v in values]

"""`evaluate`, `evaluate_async` and `run_bench`: the CLI's runs, in-process.

Options are the CLI's flags and `-T` keys by name (`no_cache=True`, `limit=5`, `seed=0`), validated by the very
functions `ragjudge judge` and `ragjudge eval` use (`prepare_judge`, `prepare_eval`), so an option means the same
thing in both places and a wrong one fails the same way. The engine runs its own event loop; inside a running one
(a Jupyter cell, an async test) it runs in a worker thread instead.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from ragjudge.api.loading import Data, as_input, locate
from ragjudge.api.result import EvalResult, load_run
from ragjudge.engine.bench_options import COMMON_FLAGS
from ragjudge.errors import InputError, UsageError

T = TypeVar("T")

ENGINE_KEYS = ("limit", "concurrency", "cache_dir", "no_cache", "api_base", "max_retries", "timeout", "models",
               "rpm", "tpm", "retry_seconds", "no_preflight", "retry_errors", "batch")
"""Run-level options (`common.engine_options`'s keywords): the same for every bench."""

JUDGE_KEYS = ("judge_dir", "bertscore_model", "conversational_as_unanswerable", "min_panel")
"""Options `ragjudge judge` takes besides judges, judge models and the run-level ones."""


def evaluate(data: Data, judges: list[str] | str | None = None, judge_models: list[str] | str | None = None, *,
             bench: str = "mtrag", out: str | Path | None = None, show_progress: bool = True,
             **options: Any) -> EvalResult:
    """Judge MTRAG-format records (with `predictions`) as `ragjudge judge` does; with `gen=...` among the options,
    generate answers first as `ragjudge eval --bench BENCH --data ...` does.

    `data`: a list of records, a DataFrame with their columns, or a path. `out`: the run folder (rerunning with
    the same folder resumes: finished judgements are not asked again); None: a temporary folder kept as long as
    the result. `options`: the CLI's flags and `-T` keys by name."""
    return _blocking(lambda: _evaluate(data, judges, judge_models, bench, out, show_progress, options))


async def evaluate_async(data: Data, judges: list[str] | str | None = None,
                         judge_models: list[str] | str | None = None, *, bench: str = "mtrag",
                         out: str | Path | None = None, show_progress: bool = True, **options: Any) -> EvalResult:
    """`evaluate` for async code: the run goes to a worker thread, the caller's loop stays free."""
    return await asyncio.to_thread(_evaluate, data, judges, judge_models, bench, out, show_progress, options)


def run_bench(name: str, *, out: str | Path | None = None, show_progress: bool = True, **options: Any
              ) -> EvalResult:
    """Run any registered bench (or MTRAG-format tasks at a path) as `ragjudge eval --bench NAME` does:
    `options` are its flags and `-T` keys by name (`gen="extractive"`, `data=...`, `limit=5`)."""
    def run() -> EvalResult:
        from ragjudge.cli.eval_cmd import prepare_eval

        flags, task_args, engine = split_options(options)
        instance, engine_options = prepare_eval(name, task_args, flags, **engine)
        return _run(instance, engine_options, out, show_progress)

    return _blocking(run)


def split_options(options: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """(common flags, `-T` keys, run-level flags with the CLI's defaults for those not given)."""
    engine: dict[str, Any] = {"limit": None, "concurrency": None, "cache_dir": None, "no_cache": False,
                              "api_base": None, "max_retries": None, "timeout": None}
    flags: dict[str, Any] = {}
    task_args: dict[str, Any] = {}
    for key, value in options.items():
        if isinstance(value, Path):
            value = str(value)
        if key in ENGINE_KEYS:
            engine[key] = value
        elif key in COMMON_FLAGS:
            flags[key] = value
        else:
            task_args[key] = value
    return flags, task_args, engine


def _evaluate(data: Data, judges: list[str] | str | None, judge_models: list[str] | str | None, bench: str,
              out: str | Path | None, show_progress: bool, options: dict[str, Any]) -> EvalResult:
    folder, keep = _folder(out)
    path, records = as_input(data, folder)
    try:
        if options.get("gen") is not None:  # generate, then judge: `ragjudge eval --bench BENCH --data PATH`
            from ragjudge.cli.eval_cmd import prepare_eval

            if "data" in options:
                raise UsageError("give the tasks as `data`, not as the data= option")
            flags, task_args, engine = split_options({**options, "judges": judges, "judge_models": judge_models})
            instance, engine_options = prepare_eval(bench, task_args, {**flags, "data": str(path)}, **engine)
        else:  # judge the records' predictions: `ragjudge judge PATH`
            from ragjudge.cli.judge_cmd import prepare_judge

            flags, task_args, engine = split_options(options)
            unknown = [k for k in [*flags, *task_args] if k not in JUDGE_KEYS]
            if unknown:
                raise UsageError(f"evaluate: unknown option {unknown[0]!r} for judging predictions (options: "
                                 f"{', '.join(ENGINE_KEYS + JUDGE_KEYS)}; give gen=... to generate answers)")
            instance, engine_options = prepare_judge(path, bench, judges=_csv(judges),
                                                     judge_models=_csv(judge_models), **flags, **engine)
        return _run(instance, engine_options, folder, show_progress, keep)
    except InputError as exc:
        raise locate(exc, path, records) from None


def _run(instance: Any, engine: Any, out: str | Path | None, show_progress: bool, keep: Any = None) -> EvalResult:
    from ragjudge.engine import OutputPaths
    from ragjudge.engine import run_bench as engine_run
    from ragjudge.formats.files import output_folder

    if out is None:
        folder, keep = _folder(None)
    else:
        folder = output_folder(out, "output folder (out)")
    engine = engine.model_copy(update={"show_progress": show_progress})
    engine_run(instance, engine, OutputPaths.in_folder(folder))
    result = load_run(folder)
    result._keep = keep
    return result


def _folder(out: str | Path | None) -> tuple[Path, Any]:
    """The run folder: `out`, or a temporary one removed once nothing refers to its result."""
    if out is not None:
        from ragjudge.formats.files import output_folder

        return output_folder(out, "output folder (out)"), None
    tmp = tempfile.TemporaryDirectory(prefix="ragjudge-")
    return Path(tmp.name), tmp


def _csv(value: list[str] | str | None) -> str | None:
    return ",".join(value) if isinstance(value, (list, tuple)) else value


def _blocking(fn: Callable[[], T]) -> T:
    """Run `fn` here, or in a worker thread when this thread already runs an event loop (the engine starts its
    own with `asyncio.run`, which cannot nest)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        running = False
    else:
        running = True
    if not running:
        return fn()
    with ThreadPoolExecutor(1, thread_name_prefix="ragjudge") as pool:
        return pool.submit(fn).result()

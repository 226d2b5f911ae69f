"""`evaluate` and `evaluate_async`: judge records as `ragjudge judge` does, or, with `gen=...`, generate the answers
first as `ragjudge eval --data ...` does. Every option is a typed keyword argument, validated by the same code as
the CLI's flags, so a wrong one is one line naming the parameter.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Unpack

from ragjudge.api.loading import DATA, Data, at_row, holds_rag_rows, rag_rows, rows_of
from ragjudge.api.result import EvalResult
from ragjudge.api.names import Names
from ragjudge.api.runs import PreparedRun, blocking, prepare_judging, prepare_run
from ragjudge.api.settings import RunSettings
from ragjudge.bench.mtrag.un.data import any_underspecified
from ragjudge.errors import UsageError
from ragjudge.judges.criterion import Criterion

Judges = Sequence[str | Criterion] | str | Criterion | None
"""Judge names (a list, or comma-separated) and criteria in one line."""


def evaluate(data: Data, judges: Judges = None, judge_models: Names = None, *, metrics: Judges = None,
             bench: str | None = None, gen: str | None = None, judge_dir: Sequence[str | Path] | None = None,
             bertscore_model: str | None = None, options: Mapping[str, Any] | None = None,
             out: str | Path | None = None, show_progress: bool = True,
             **settings: Unpack[RunSettings]) -> EvalResult:
    """Judge `data` (a list of records, a DataFrame with their columns, or a path to a file or folder).

    `judges` (or `metrics`, the name RAGAS and DeepEval use): judge names, and criteria in one line
    (`ragjudge.criterion(...)`); `judge_models`: litellm models (a panel judge takes the median of all). `bench`: mtrag
    or mtrag-un (default: mtrag-un when a task is UNDERSPECIFIED). `gen`: generate the answers first with this
    generator. `options`: the bench's own options (`min_panel`, `conversational_as_unanswerable`, `setting`...). `out`:
    the run folder (rerunning resumes); None: in memory. `settings`: the run's (`limit`, `concurrency`, `use_cache`,
    `api_base`...: `RunSettings`)."""
    return blocking(lambda: _evaluate(data, bench, gen, out, show_progress, settings, judges=_judges(judges, metrics),
                                      judge_models=judge_models, judge_dir=judge_dir, bertscore_model=bertscore_model,
                                      options=options))


async def evaluate_async(data: Data, judges: Judges = None, judge_models: Names = None, *, metrics: Judges = None,
                         bench: str | None = None, gen: str | None = None,
                         judge_dir: Sequence[str | Path] | None = None, bertscore_model: str | None = None,
                         options: Mapping[str, Any] | None = None, out: str | Path | None = None,
                         show_progress: bool = True, **settings: Unpack[RunSettings]) -> EvalResult:
    """`evaluate` for async code: the run goes to a worker thread, the caller's loop stays free."""
    return await asyncio.to_thread(_evaluate, data, bench, gen, out, show_progress, settings,
                                   judges=_judges(judges, metrics), judge_models=judge_models, judge_dir=judge_dir,
                                   bertscore_model=bertscore_model, options=options)


def _judges(judges: Judges, metrics: Judges) -> Judges:
    if judges is not None and metrics is not None:
        raise UsageError("give judges= or metrics= (the same thing), not both")
    given, name = (metrics, "metrics") if judges is None else (judges, "judges")
    if given is not None and not isinstance(given, Criterion) and not [
            j for j in (given.split(",") if isinstance(given, str) else given) if isinstance(j, Criterion)
            or str(j).strip()]:
        raise UsageError(f"{name} names nothing: name at least one judge, or leave it out for the default")
    return given


def split_criteria(judges: Judges) -> tuple[Names, list[Criterion]]:
    """Judge names and criteria (`ragjudge.criterion(...)`) given together in one list. The list is the judges
    asked for, criteria among them: criteria alone are named as the judges (the CLI's --criterion, given without
    --judges, adds to the default judges instead)."""
    if judges is None or isinstance(judges, str):
        return judges, []
    if isinstance(judges, Criterion):
        judges = [judges]
    criteria = [j for j in judges if isinstance(j, Criterion)]
    names = [j for j in judges if not isinstance(j, Criterion)]
    return names or [c.name for c in criteria], criteria


def _evaluate(data: Data, bench: str | None, gen: str | None, out: str | Path | None, show_progress: bool,
              settings: Mapping[str, Any], **asked: Any) -> EvalResult:
    """Records given in memory are read in memory (with `out=None` nothing is written): plain records by the rag
    bench, MTRAG-format tasks by the MTRAG benches (which read them as a file's lines, record i as `data[i]`).
    `asked`: the judges, their models and options, as `evaluate` took them."""

    def run(path: Path, bench: str | None, **given: Any) -> EvalResult:
        return _prepare(path, bench, gen, settings, **asked, **given).execute(out, show_progress=show_progress)

    rows = rows_of(data)
    if rows is None:
        return run(Path(data), bench)
    if gen is None and bench in (None, "rag") and holds_rag_rows(rows):
        return run(Path(DATA), "rag", records=rag_rows(rows))
    if bench not in (None, "mtrag", "mtrag-un"):
        raise UsageError(f"bench {bench!r} does not read records given in memory: give mtrag or mtrag-un, "
                         "or the path of its data")
    if bench is None and gen is None:
        bench = "mtrag-un" if any_underspecified(rows) else "mtrag"
    return at_row(lambda: run(Path(DATA), bench, records=rows), rows)


def _prepare(path: Path, bench: str | None, gen: str | None, settings: Mapping[str, Any], *, judges: Judges,
             options: Mapping[str, Any] | None, **given: Any) -> PreparedRun:
    names, criteria = split_criteria(judges)
    shared = {"judges": names, "criteria": criteria or None, "options": options}
    if gen is not None:  # generate, then judge: `ragjudge eval --bench BENCH --data PATH`
        if options and "data" in options:
            raise UsageError("give the tasks as `data`, not as options['data']")
        return prepare_run(bench or "mtrag", data=path, gen=gen, **shared, **given, **settings)
    return prepare_judging(path, bench, **shared, **given, **settings)  # `ragjudge judge PATH`

"""DialSim's commands from Python: `ragjudge dialsim convert|score` are `dialsim_convert` and `dialsim_score` and a
rendering of what they return; running the benchmark is `run_bench("dialsim", ...)`."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack

from ragjudge.api.names import Names, names
from ragjudge.api.settings import RunSettings, check_settings
from ragjudge.engine.bench_options import PYTHON, Spelling
from ragjudge.errors import UsageError

if TYPE_CHECKING:
    from ragjudge.engine.summary import Summary


@dataclass
class DialSimConverted:
    """What `dialsim_convert` wrote: a record per show (`show`, `from`, `layout`, `to`, `sessions`,
    `temporal_questions`, `fan_questions`, `oracle_dates`, `skipped_questions`, `described`), and the shows described
    in `shows_file` (those that are not one of the three published ones)."""

    shows: list[dict[str, Any]]
    shows_file: Path
    custom: list[str] = field(default_factory=list)


@dataclass
class DialSimRescored:
    """`dialsim_score`'s figures (the summary `ragjudge dialsim score --format json` prints) and its per-answer
    rows (both verdicts)."""

    summary: Summary
    rows: list[dict[str, Any]]


def dialsim_convert(data: str | Path, *, out: str | Path, shows: Names = None,
                    spelling: Spelling = PYTHON) -> DialSimConverted:
    """Read LongDialQA from `data` (the official pickles with the oracle pickles, the same layout as JSON, or the
    Hugging Face parquet copy) and write `{show}_dialsim.jsonl` (one line per session) into the folder `out`: valid
    `data` for the dialsim bench. `shows`: which (default: all found). Pickles are read with a loader that builds
    plain data only; still, only convert pickles you trust."""
    from ragjudge.bench.dialsim import layouts
    from ragjudge.bench.dialsim.longdialqa import write_jsonl_show
    from ragjudge.bench.dialsim.script import BUILTIN_SHOWS, SHOWS_FILE, load_show_infos, write_show_infos
    from ragjudge.formats.files import output_folder

    data, out = Path(data), Path(out)
    flag = spelling.flag
    if out.exists() and not out.is_dir():
        raise UsageError(f"{flag('out')} {out} is a file: {flag('out')} must be a folder, where {{show}}_dialsim.jsonl "
                         f"and {SHOWS_FILE} are written (name a new or existing folder, or move the file away)")
    output_folder(out, f"output folder ({flag('out')})")
    found = layouts.find_shows(data)
    wanted = names(shows) or list(found)
    missing = [s for s in wanted if s not in found]
    if missing:
        raise UsageError(f"{flag('shows')}: {', '.join(missing)} not in {data} (found: {', '.join(found)})")
    for show in wanted:
        source = found[show][1]
        if source.resolve() == (out / f"{show}_dialsim.jsonl").resolve():
            raise UsageError(f"{flag('out')} would overwrite the input {source}")
    described = load_show_infos(data if data.is_dir() else data.parent)
    shows_file = out / SHOWS_FILE
    kept = load_show_infos(out) if shows_file.exists() else {}  # a folder converted into before keeps its shows
    converted = {show: layouts.read_show(show, *found[show]) for show in wanted}  # all read before anything is written
    report = []
    for show, show_data in converted.items():
        layout, source = found[show]
        target = out / f"{show}_dialsim.jsonl"
        write_jsonl_show(show_data, target)
        count = {bank: sum(len(qs) for s in show_data.sessions for qs in getattr(s, bank).values())
                 for bank in ("hard_q", "easy_q")}
        report.append({"show": show, "from": str(source), "layout": layout, "to": str(target),
                       "sessions": len(show_data.sessions), "temporal_questions": count["hard_q"],
                       "fan_questions": count["easy_q"], "oracle_dates": show_data.oracle,
                       "skipped_questions": show_data.skipped_questions,
                       "described": show in described})
    custom = {name: info for name, info in kept.items() if BUILTIN_SHOWS.get(name) != info}
    custom.update({show: described[show] for show in converted if show in described
                   and BUILTIN_SHOWS.get(show) != described[show]})
    if custom:  # what eval needs to play a show that is not one of the three published ones
        write_show_infos(custom, shows_file)
    return DialSimConverted(shows=report, shows_file=shows_file, custom=list(custom))


def dialsim_score(log: str | Path, *, judge: str | None = None, judge_models: Names = None,
                  judge_dir: Sequence[str | Path] | None = None, answer_format: str | None = None,
                  time_limits: Sequence[float] | str = (1, 3, 5), out: str | Path | None = None,
                  spelling: Spelling = PYTHON, **settings: Unpack[RunSettings]) -> DialSimRescored:
    """Rescore an official simulator log (`results/entire_log-*.json`): accuracy, also at each of `time_limits`
    (seconds). `judge`: llm or lexical, for natural-language answers (default: llm with `judge_models`, else
    lexical); `answer_format`: mc, mc-nl or open (default: read from the log); `out`: also write one JSON line per
    answer with both verdicts. Run settings: `concurrency`, `cache_dir`, `use_cache`, `api_base`."""
    from ragjudge.version import __version__
    from ragjudge.bench.dialsim.judge import AnswerJudge
    from ragjudge.bench.dialsim.officiallog import read_log, rescore, summarize_log
    from ragjudge.engine.context import EngineOptions, build_gateway
    from ragjudge.engine.summary import RunFacts
    from ragjudge.formats.files import output_file
    from ragjudge.formats.jsonl import write_jsonl

    flag = spelling.flag
    settings = check_settings("dialsim_score", settings)  # type: ignore[assignment]
    unused = [k for k in settings if k not in ("concurrency", "cache_dir", "use_cache", "api_base")]
    if unused:
        raise UsageError(f"{flag(unused[0])} is not used by dialsim_score")
    if answer_format not in (None, "mc", "mc-nl", "open"):
        raise UsageError(f"{flag('answer_format')} must be mc, mc-nl or open, got {answer_format!r}")
    if judge not in (None, "llm", "lexical"):
        raise UsageError(f"{flag('judge')} must be llm or lexical, got {judge!r}")
    models = names(judge_models) or []
    kind = judge or ("llm" if models else "lexical")
    if kind == "llm" and not models:
        raise UsageError(f"{flag('judge')} llm needs {flag('judge_models')} MODEL (the paper used gpt-4o-mini)")
    limits = _seconds(time_limits, flag("time_limits"))
    if out is not None:
        output_file(Path(out), f"output file ({flag('out')})")
    parsed = read_log(log, answer_format)
    llm_judge = None
    if kind == "llm" and parsed.fmt != "mc":
        engine = EngineOptions(**{"show_progress": False, **settings})
        llm_judge = AnswerJudge.load(models[0], build_gateway(engine, models[:1]), judge_dir)
    rows = asyncio.run(rescore(parsed, kind, llm_judge))  # type: ignore[arg-type]
    judged_by = [llm_judge.model] if llm_judge is not None else ["rule" if parsed.fmt == "mc" else kind]
    summary = summarize_log(parsed, rows, limits, judged_by)
    summary.run = RunFacts(ragjudge_version=__version__, bench="dialsim",
                           options={"log": str(log), "answer_format": parsed.fmt, "judge": kind,
                                    "time_limits": limits}, models={"judges": {"dialsim": judged_by}})
    if out is not None:
        write_jsonl(Path(out), rows)
    return DialSimRescored(summary=summary, rows=rows)


def _seconds(values: Sequence[float] | str, name: str) -> list[float]:
    try:
        limits = [float(v) for v in (names(values) if isinstance(values, str) else values) or []]
    except (TypeError, ValueError):
        raise UsageError(f"{name} must be numbers, got {values!r}") from None
    if any(not 0 < v < float("inf") for v in limits):
        raise UsageError(f"{name} must be seconds greater than 0, got {values!r}")
    return limits

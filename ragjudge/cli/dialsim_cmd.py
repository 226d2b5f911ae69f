"""`ragjudge dialsim`: convert LongDialQA to JSONL once; rescore the official simulator's logs.

Running the benchmark itself is `ragjudge eval --bench dialsim`.
"""

import json
from pathlib import Path
from typing import Annotated

import typer

from ragjudge.cli import common
from ragjudge.llm.defaults import DEFAULT_CONCURRENCY
from ragjudge.errors import UsageError

app = typer.Typer(help="DialSim (LongDialQA): convert the data to JSONL, rescore official simulator logs. "
                       "Run the benchmark with `ragjudge eval --bench dialsim`.", no_args_is_help=True)


@app.command("convert")
def convert_command(
    data: Annotated[Path, typer.Option("--data", help="The official pickles (with the oracle pickles), the same "
                                       "layout as JSON, or the Hugging Face parquet copy (dialsim-{show}/).")],
    out: Annotated[Path, typer.Option("--out", help="Folder for {show}_dialsim.jsonl (one line per session) and "
                                      "dialsim_shows.json: what --data reads.")],
    shows: Annotated[str | None, typer.Option("--shows", help="Comma-separated shows (default: all found).")] = None,
    fmt: common.FormatOpt = "table",
) -> None:
    """Read LongDialQA in any published layout and write ragjudge's JSONL, valid input to --data.

    Pickles are read with a loader that builds plain data only; still, only convert pickles you trust."""
    from ragjudge.bench.dialsim import layouts
    from ragjudge.bench.dialsim.longdialqa import write_jsonl_show
    from ragjudge.bench.dialsim.script import (
        BUILTIN_SHOWS,
        SHOWS_FILE,
        load_show_infos,
        write_show_infos,
    )
    from ragjudge.formats.files import output_folder

    fmt = common.check_format(fmt)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} is a file: --out must be a folder, where {{show}}_dialsim.jsonl and "
                         f"{SHOWS_FILE} are written (name a new or existing folder, or move the file away)")
    output_folder(out, "output folder (--out)")
    found = layouts.find_shows(data)
    wanted = common.split_list(shows) or list(found)
    missing = [s for s in wanted if s not in found]
    if missing:
        raise UsageError(f"--shows: {', '.join(missing)} not in {data} (found: {', '.join(found)})")
    for show in wanted:
        source = found[show][1]
        if source.resolve() == (out / f"{show}_dialsim.jsonl").resolve():
            raise UsageError(f"--out would overwrite the input {source}")
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
    if fmt == "json":
        print(json.dumps(report, indent=2))
    else:
        from rich.console import Console

        console = Console()
        for r in report:
            console.print(f"{r['show']}: {r['sessions']} sessions, {r['temporal_questions']} temporal and "
                          f"{r['fan_questions']} fan-quiz questions, oracle dates: "
                          f"{'yes' if r['oracle_dates'] else 'no'} ({r['layout']} {r['from']} -> {r['to']})",
                          highlight=False, markup=False)
            if r["skipped_questions"]:
                console.print(f"[yellow]{r['skipped_questions']} question(s) with fewer than 5 options "
                              "skipped[/yellow]")
        if custom:
            console.print(f"{', '.join(custom)}: described in {shows_file}", highlight=False, markup=False)
    for r in report:
        if not r["described"]:
            typer.echo(f"warning: show {r['show']!r} is not one of {', '.join(BUILTIN_SHOWS)} and {data} has no "
                       f"{SHOWS_FILE} entry for it: describe it (agent, generic and swapped names) in "
                       f"{shows_file} before `ragjudge eval --bench dialsim --data {out}`", err=True)


@app.command("score")
def score_command(
    log: Annotated[Path, typer.Argument(help="An official simulator log: results/entire_log-*.json.")],
    judge: Annotated[str | None, typer.Option("--judge", help="llm or lexical, for natural-language answers "
                                              "(default: llm with --judge-models, else lexical).")] = None,
    judge_models: common.JudgeModelsOpt = None,
    judge_dir: common.JudgeDirOpt = None,
    answer_format: Annotated[str | None, typer.Option("--answer-format", help="mc, mc-nl or open (default: read "
                                                      "from the log).")] = None,
    time_limits: Annotated[str, typer.Option("--time-limits", help="Seconds, comma-separated, for accuracy at "
                                             "time limits.")] = "1,3,5",
    out: Annotated[Path | None, typer.Option("--out", help="Write one JSON line per answer with both verdicts.")]
    = None,
    fmt: common.FormatOpt = "table",
    concurrency: common.ConcurrencyOpt = DEFAULT_CONCURRENCY,
    cache_dir: common.CacheDirOpt = None,
    no_cache: common.NoCacheOpt = False,
    api_base: common.ApiBaseOpt = None,
) -> None:
    """Rescore an official log with ragjudge's scorers and print both sets of figures side by side."""
    from ragjudge.version import __version__
    from ragjudge.bench.dialsim.judge import AnswerJudge
    from ragjudge.bench.dialsim.officiallog import read_log, rescore, summarize_log
    from ragjudge.engine.context import EngineOptions, build_gateway
    from ragjudge.engine.render import print_summary
    from ragjudge.engine.summary import RunFacts
    from ragjudge.formats.files import output_file
    from ragjudge.formats.jsonl import write_jsonl

    fmt = common.check_format(fmt)
    if answer_format not in (None, "mc", "mc-nl", "open"):
        raise UsageError(f"--answer-format must be mc, mc-nl or open, got {answer_format!r}")
    if judge not in (None, "llm", "lexical"):
        raise UsageError(f"--judge must be llm or lexical, got {judge!r}")
    models = common.split_list(judge_models) or []
    kind = judge or ("llm" if models else "lexical")
    if kind == "llm" and not models:
        raise UsageError("--judge llm needs --judge-models MODEL (the paper used gpt-4o-mini)")
    try:
        limits = [float(v) for v in common.split_list(time_limits) or []]
    except ValueError:
        raise UsageError(f"--time-limits must be numbers, got {time_limits!r}") from None
    if any(not 0 < v < float("inf") for v in limits):
        raise UsageError(f"--time-limits must be seconds greater than 0, got {time_limits!r}")
    if out is not None:
        output_file(out, "output file (--out)")
    parsed = read_log(log, answer_format)
    llm_judge = None
    gateway = None
    if kind == "llm" and parsed.fmt != "mc":
        engine = EngineOptions(concurrency=concurrency, cache_dir=cache_dir, use_cache=not no_cache,
                               api_base=api_base, show_progress=False)
        gateway = build_gateway(engine, models[:1])
        llm_judge = AnswerJudge.load(models[0], gateway, judge_dir)
    import asyncio

    rows = asyncio.run(rescore(parsed, kind, llm_judge))  # type: ignore[arg-type]
    judged_by = [llm_judge.model] if llm_judge is not None else ["rule" if parsed.fmt == "mc" else kind]
    summary = summarize_log(parsed, rows, limits, judged_by)
    summary.run = RunFacts(ragjudge_version=__version__, bench="dialsim",
                           options={"log": str(log), "answer_format": parsed.fmt, "judge": kind,
                                    "time_limits": limits}, models={"judges": {"dialsim": judged_by}})
    if out is not None:
        write_jsonl(out, rows)
    if fmt == "json":
        print(json.dumps(summary.to_dict(), indent=2, ensure_ascii=False))
    else:
        from rich.console import Console

        print_summary(summary, Console())
    if summary.n_errors:
        typer.echo(f"{summary.n_errors} answer(s) could not be judged (see --out or --format json)", err=True)
    raise typer.Exit(1 if summary.n_errors else 0)

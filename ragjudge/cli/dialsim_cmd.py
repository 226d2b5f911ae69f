"""`ragjudge dialsim`: convert LongDialQA to JSONL once; rescore the official simulator's logs.

Running the benchmark itself is `ragjudge eval --bench dialsim`.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from ragjudge.cli import common
from ragjudge.errors import UsageError

app = typer.Typer(help="DialSim (LongDialQA): convert the data to JSONL, rescore official simulator logs. "
                       "Run the benchmark with `ragjudge eval --bench dialsim`.", no_args_is_help=True)


@app.command("convert")
def convert_command(
    data: Annotated[Path, typer.Option("--data", help="The official pickles (with the oracle pickles), the same "
                                       "layout as JSON, or the Hugging Face parquet copy (dialsim-{show}/).")],
    out: Annotated[Path, typer.Option("--out", help="Folder for {show}_dialsim.jsonl (one line per session).")],
    shows: Annotated[str | None, typer.Option("--shows", help="Comma-separated shows (default: all found).")] = None,
    fmt: common.FormatOpt = "table",
) -> None:
    """Read LongDialQA in any published layout and write ragjudge's JSONL, valid input to --data.

    Pickles are read with a loader that builds plain data only; still, only convert pickles you trust."""
    from ragjudge.bench.dialsim import layouts
    from ragjudge.bench.dialsim.data import write_jsonl_show

    fmt = common.check_format(fmt)
    found = layouts.find_shows(data)
    wanted = common.split_list(shows) or list(found)
    missing = [s for s in wanted if s not in found]
    if missing:
        raise UsageError(f"--shows: {', '.join(missing)} not in {data} (found: {', '.join(found)})")
    report = []
    for show in wanted:
        layout, source = found[show]
        show_data = layouts.read_show(show, layout, source)
        if source.resolve() == (out / f"{show}_dialsim.jsonl").resolve():
            raise UsageError(f"--out would overwrite the input {source}")
        target = out / f"{show}_dialsim.jsonl"
        write_jsonl_show(show_data, target)
        count = {bank: sum(len(qs) for s in show_data.sessions for qs in getattr(s, bank).values())
                 for bank in ("hard_q", "easy_q")}
        report.append({"show": show, "from": str(source), "layout": layout, "to": str(target),
                       "sessions": len(show_data.sessions), "temporal_questions": count["hard_q"],
                       "fan_questions": count["easy_q"], "oracle_dates": show_data.oracle,
                       "skipped_questions": show_data.skipped_questions})
    if fmt == "json":
        print(json.dumps(report, indent=2))
        return
    console = Console()
    for r in report:
        console.print(f"{r['show']}: {r['sessions']} sessions, {r['temporal_questions']} temporal and "
                      f"{r['fan_questions']} fan-quiz questions, oracle dates: {'yes' if r['oracle_dates'] else 'no'}"
                      f" ({r['layout']} {r['from']} -> {r['to']})")
        if r["skipped_questions"]:
            console.print(f"[yellow]{r['skipped_questions']} question(s) with fewer than 5 options skipped[/yellow]")


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
    concurrency: common.ConcurrencyOpt = 8,
    cache_dir: common.CacheDirOpt = None,
    no_cache: common.NoCacheOpt = False,
    api_base: common.ApiBaseOpt = None,
) -> None:
    """Rescore an official log with ragjudge's scorers and print both sets of figures side by side."""
    from ragjudge.bench.dialsim.judge import AnswerJudge
    from ragjudge.bench.dialsim.officiallog import read_log, rescore, summarize_log
    from ragjudge.engine.context import EngineOptions, build_gateway
    from ragjudge.engine.render import Table, print_tables
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
    parsed = read_log(log, answer_format)
    llm_judge = None
    gateway = None
    if kind == "llm" and parsed.fmt != "mc":
        engine = EngineOptions(concurrency=concurrency, cache_dir=cache_dir, use_cache=not no_cache,
                               api_base=api_base, show_progress=False)
        gateway = build_gateway(engine, models[:1])
        llm_judge = AnswerJudge.load(models[0], gateway, judge_dir)
    rows = asyncio.run(rescore(parsed, kind, llm_judge))  # type: ignore[arg-type]
    summary = summarize_log(parsed, rows, limits)
    if out is not None:
        write_jsonl(out, rows)
    if fmt == "json":
        print(json.dumps(summary, indent=2, ensure_ascii=False))
    else:
        from ragjudge.engine.render import default_tables

        tables = [Table.from_dict(t) for t in summary["tables"][:1]]
        tables += default_tables({**summary, "tables": summary["tables"][1:]}, "ragjudge's scores")
        print_tables(tables, Console())
    errors = summary["counts"]["errors"]
    if errors:
        typer.echo(f"{errors} answer(s) could not be judged (see --out or --format json)", err=True)
    raise typer.Exit(1 if errors else 0)

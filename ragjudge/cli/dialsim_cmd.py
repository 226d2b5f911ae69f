"""`ragjudge dialsim`: parses the flags for `ragjudge.api.dialsim_convert` and `dialsim_score`, renders their result.
"""

import json
from pathlib import Path
from typing import Annotated

import typer

from ragjudge.cli import common
from ragjudge.defaults import DEFAULT_CONCURRENCY

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
    from ragjudge.api import dialsim_convert
    from ragjudge.bench.dialsim.script import BUILTIN_SHOWS, SHOWS_FILE
    from ragjudge.engine.bench_options import CLI

    fmt = common.check_format(fmt)
    done = dialsim_convert(data, out=out, shows=shows, spelling=CLI)
    if fmt == "json":
        print(json.dumps(done.shows, indent=2))
    else:
        from rich.console import Console

        console = Console()
        for r in done.shows:
            console.print(f"{r['show']}: {r['sessions']} sessions, {r['temporal_questions']} temporal and "
                          f"{r['fan_questions']} fan-quiz questions, oracle dates: "
                          f"{'yes' if r['oracle_dates'] else 'no'} ({r['layout']} {r['from']} -> {r['to']})",
                          highlight=False, markup=False)
            if r["skipped_questions"]:
                console.print(f"[yellow]{r['skipped_questions']} question(s) with fewer than 5 options "
                              "skipped[/yellow]")
        if done.custom:
            console.print(f"{', '.join(done.custom)}: described in {done.shows_file}", highlight=False, markup=False)
    for r in done.shows:
        if not r["described"]:
            typer.echo(f"warning: show {r['show']!r} is not one of {', '.join(BUILTIN_SHOWS)} and {data} has no "
                       f"{SHOWS_FILE} entry for it: describe it (agent, generic and swapped names) in "
                       f"{done.shows_file} before `ragjudge eval --bench dialsim --data {out}`", err=True)


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
    from ragjudge.api import dialsim_score
    from ragjudge.engine.bench_options import CLI
    from ragjudge.engine.render import show_summary

    fmt = common.check_format(fmt)
    summary = dialsim_score(log, judge=judge, judge_models=judge_models, judge_dir=judge_dir,
                            answer_format=answer_format, time_limits=time_limits, out=out, spelling=CLI,
                            **common.run_settings(concurrency=concurrency, cache_dir=cache_dir, no_cache=no_cache,
                                                  api_base=api_base)).summary
    show_summary(summary, fmt)
    if summary.n_errors:
        typer.echo(f"{summary.n_errors} answer(s) could not be judged (see --out or --format json)", err=True)
    raise typer.Exit(1 if summary.n_errors else 0)

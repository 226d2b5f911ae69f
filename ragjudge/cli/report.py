"""Print a run's summary: rich tables for people, JSON for machines, usage and where files went."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console
from rich.table import Table

from ragjudge.evaluation.session import RunResult

BREAKDOWN_TITLES = {"answerability": "By answerability", "turn": "First vs later turns", "domain": "By domain",
                    "question_type": "By question type", "multi_turn": "By multi-turn type"}
# Breakdown tables show what the paper reports: IDK-conditioned scores and answerability accuracy when an
# IDK judge ran, else the raw scores. Everything is in summary.json / --format json.
CONDITIONED = ("RB_agg_idk", "RB_llm_idk", "RL_F_idk", "answerability_acc")
RAW = ("RB_agg", "RB_llm", "RL_F", "idk_eval", "idk_lexical")


def _fmt(value: Any) -> str:
    return "-" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)


def print_report(result: RunResult, fmt: str) -> None:
    summary = result.summary
    if fmt == "json":
        print(json.dumps(summary, indent=2))
        _print_footer(result, Console(stderr=True))
        return
    console = Console()
    table = Table(title=f"ragjudge: {summary['n_tasks']} tasks")
    for col in ("metric", "mean", "n", "errors"):
        table.add_column(col, justify="left" if col == "metric" else "right")
    for name, stats in summary["metrics"].items():
        table.add_row(name, _fmt(stats["mean"]), str(stats["n"]), str(stats["errors"]))
    console.print(table)
    shown = [m for m in CONDITIONED if m in summary["metrics"]] or [m for m in RAW if m in summary["metrics"]]
    shown = shown or list(summary["metrics"])[:6]
    for dim, groups in summary["breakdowns"].items():
        t = Table(title=BREAKDOWN_TITLES.get(dim, dim))
        t.add_column(dim)
        t.add_column("tasks", justify="right")
        for m in shown:
            t.add_column(m, justify="right")
        for value, stats in groups.items():
            t.add_row(value, str(stats["n_tasks"]), *(_fmt(stats.get(m)) for m in shown))
        console.print(t)
    _print_footer(result, Console(stderr=True))


def _print_footer(result: RunResult, console: Console) -> None:
    for judge, models in result.judge_models.items():
        if models:
            console.print(f"[dim]{judge}: {', '.join(models)}[/dim]")
    if result.gateway is not None:
        usage = result.gateway.usage
        t = Table(title="LLM usage")
        t.add_column("model", no_wrap=True)
        for col in ("calls", "cached", "retries", "failed", "prompt tok", "completion tok", "cost $"):
            t.add_column(col, justify="right")
        for model, u in sorted(usage.by_model.items()):
            t.add_row(model, str(u.calls), str(u.cached), str(u.retries), str(u.failures), str(u.prompt_tokens),
                      str(u.completion_tokens), f"{u.cost:.4f}")
        console.print(t)
    failed = sum(1 for o in result.outcomes if o.failed)
    if failed:
        console.print(f"[yellow]{failed} task(s) had errors (see the 'errors' column of {result.paths.csv})[/yellow]")
    console.print(f"results: {result.paths.results}  table: {result.paths.csv}, {result.paths.parquet}  "
                  f"summary: {result.paths.summary}")

"""What `ragjudge eval --bench mtrag` prints: every metric, then the paper's breakdowns.

Breakdown tables show what the paper reports: IDK-conditioned scores and answerability accuracy when an
IDK judge ran, else the raw scores. Everything is in summary.json / --format json.
"""

from __future__ import annotations

from typing import Any

from ragjudge.engine.render import Table, breakdown_tables, metric_table

BREAKDOWN_TITLES = {"answerability": "By answerability", "turn": "First vs later turns", "domain": "By domain",
                    "question_type": "By question type", "multi_turn": "By multi-turn type"}
CONDITIONED = ("RB_agg_idk", "RB_llm_idk", "RL_F_idk", "answerability_acc")
RAW = ("RB_agg", "RB_llm", "RL_F", "idk_eval", "idk_lexical")


def tables(summary: dict[str, Any]) -> list[Table]:
    metrics = summary["metrics"]
    shown = [m for m in CONDITIONED if m in metrics] or [m for m in RAW if m in metrics] or list(metrics)[:6]
    return [metric_table(summary, f"ragjudge: {summary['n_tasks']} tasks"),
            *breakdown_tables(summary, shown, BREAKDOWN_TITLES)]

"""What `ragjudge eval --bench mtrag` prints: every metric, then the paper's breakdowns.

Breakdown tables show what the paper reports: IDK-conditioned scores and answerability accuracy when an
IDK judge ran, else the raw scores. Everything is in summary.json / --format json.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ragjudge.engine.render import Table, breakdown_tables, metric_table

if TYPE_CHECKING:
    from ragjudge.bench.base import MetricInfo

BREAKDOWN_TITLES = {"answerability": "By answerability", "turn": "First vs later turns", "domain": "By domain",
                    "question_type": "By question type", "multi_turn": "By multi-turn type"}
CONDITIONED = ("RB_agg_idk", "RB_llm_idk", "RL_F_idk", "answerability_acc")
RAW = ("RB_agg", "RB_llm", "RL_F", "idk_eval", "idk_lexical")


HEADLINE = ("RB_llm_idk", "RB_agg_idk", "RL_F_idk", "RB_llm", "RB_agg", "RL_F")
"""The paper's headline figures, best first: the IDK-conditioned reference-based scores."""


def tables(summary: dict[str, Any], infos: Sequence[MetricInfo] = ()) -> list[Table]:
    metrics = summary["metrics"]
    shown = [m for m in CONDITIONED if m in metrics] or [m for m in RAW if m in metrics] or list(metrics)[:6]
    return [metric_table(summary, f"ragjudge: {summary['n_tasks']} tasks", infos),
            *breakdown_tables(summary, shown, BREAKDOWN_TITLES)]


def headline(summary: dict[str, Any]) -> str | None:
    """`RB_agg_idk 0.541 over 37 tasks; answerability accuracy 0.757 over 37 tasks`."""
    metrics = summary.get("metrics") or {}
    parts = []
    main = next((m for m in HEADLINE if (metrics.get(m) or {}).get("mean") is not None), None)
    if main is not None:
        parts.append(f"{main} {metrics[main]['mean']:.3f} over {metrics[main]['n']} tasks")
    accuracy = metrics.get("answerability_acc") or {}
    if accuracy.get("mean") is not None:
        parts.append(f"answerability accuracy {accuracy['mean']:.3f} over {accuracy['n']} tasks")
    return "; ".join(parts) or None

"""The seven CXMArena tasks by name: `cxm-<task>` is the bench of each, and `<data>/predictions/<task>.jsonl` is where
`ragjudge cxm score` looks for a system's predictions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragjudge.errors import UsageError

TASKS = ("intent", "quality", "tool-calls", "answer-classification", "kb-refinement", "article-search",
         "multiturn-retrieval")
_ALIASES = {
    "intent-prediction": "intent", "intents": "intent",
    "agent-quality": "quality", "quality-adherence": "quality", "agent-quality-adherence": "quality", "aqm": "quality",
    "tools": "tool-calls", "tool-calling": "tool-calls", "tool-call": "tool-calls",
    "classification": "answer-classification", "multi-turn": "answer-classification",
    "multi-turn-rag": "answer-classification", "rag": "answer-classification",
    "kb": "kb-refinement", "kb-refinement-pairs": "kb-refinement",
    "search": "article-search",
    "multi-turn-retrieval": "multiturn-retrieval", "retrieval": "multiturn-retrieval",
}


def task_name(value: str) -> str:
    """A task as the user may name it (`intent`, `intent_prediction`, `cxm-intent`, `tools`...) → its name."""
    name = value.strip().lower().replace("_", "-").removeprefix("cxm-")
    name = _ALIASES.get(name, name)
    if name not in TASKS:
        raise UsageError(f"unknown CXMArena task {value!r} (available: {', '.join(TASKS)})")
    return name


def bench_name(task: str) -> str:
    return f"cxm-{task}"


def bench_class(task: str) -> type[Any]:
    """The bench class of a task, found by its registered name."""
    from ragjudge.engine import registry

    return registry.get(bench_name(task)).load()


def default_predictions(data: Path, task: str) -> Path:
    return data / "predictions" / f"{task}.jsonl"

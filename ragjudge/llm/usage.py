"""Token, cost and call accounting per model, for this invocation and, through a usage log, for the whole run.

`requests` counts what was sent to a provider (every attempt, retries and failures included): after a kill and
a resume the run's total equals what the provider received. The log (`usage.jsonl` in the run folder) gets
one line per event, written before a request is sent and after it returns, so a kill loses nothing that was
paid for; the run's totals are the sum of the log, across every invocation that resumed it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragjudge.errors import EnvironmentFault
from ragjudge.formats.jsonl import JsonlAppender, read_jsonl

COUNTERS = ("requests", "calls", "cached", "retries", "failures", "prompt_tokens", "completion_tokens", "cost",
            "batched")


@dataclass
class ModelUsage:
    requests: int = 0
    """Requests sent to the provider (attempts)."""
    calls: int = 0
    """Calls that finally succeeded."""
    cached: int = 0
    retries: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    batched: int = 0
    """Requests sent inside provider batches (`--batch`); they are part of `requests`."""

    def add(self, other: dict[str, Any]) -> None:
        for name in COUNTERS:
            setattr(self, name, getattr(self, name) + other.get(name, 0))


@dataclass
class UsageTracker:
    by_model: dict[str, ModelUsage] = field(default_factory=dict)
    log: Path | None = None
    _out: JsonlAppender | None = None

    def model(self, name: str) -> ModelUsage:
        return self.by_model.setdefault(name, ModelUsage())

    def record(self, model: str, **counts: float) -> None:
        """Add to this invocation's counters and append the event to the run's usage log."""
        self.model(model).add(counts)
        if self.log is not None:
            try:
                if self._out is None:
                    self._out = JsonlAppender(self.log)  # cuts a line torn by a kill before appending
                self._out.append({"model": model, **counts})
            except (OSError, EnvironmentFault):
                self.log = None  # accounting must never stop a run; the in-memory figures remain

    def close(self) -> None:
        if self._out is not None:
            self._out.close()
            self._out = None

    @property
    def total(self) -> ModelUsage:
        total = ModelUsage()
        for u in self.by_model.values():
            total.add(vars(u))
        return total

    def as_dict(self) -> dict[str, dict[str, float]]:
        return {m: dict(vars(u)) for m, u in sorted(self.by_model.items())}


def logged_usage(path: Path) -> dict[str, dict[str, float]]:
    """The run's totals per model: the sum of every event in its usage log (a torn last line is skipped)."""
    totals = UsageTracker()
    for _, event in read_jsonl(path, tolerate_truncated_tail=True) if path.exists() else ():
        if isinstance(event.get("model"), str):
            totals.model(event["model"]).add(event)
    return totals.as_dict()

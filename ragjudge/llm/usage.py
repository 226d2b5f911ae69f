"""Token, cost and call accounting per model, printed at the end of a run."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ModelUsage:
    calls: int = 0
    cached: int = 0
    retries: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0


@dataclass
class UsageTracker:
    by_model: dict[str, ModelUsage] = field(default_factory=dict)

    def model(self, name: str) -> ModelUsage:
        return self.by_model.setdefault(name, ModelUsage())

    @property
    def total(self) -> ModelUsage:
        total = ModelUsage()
        for u in self.by_model.values():
            for name in vars(total):
                setattr(total, name, getattr(total, name) + getattr(u, name))
        return total

    def as_dict(self) -> dict[str, dict[str, float]]:
        return {m: dict(vars(u)) for m, u in sorted(self.by_model.items())}

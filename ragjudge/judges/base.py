"""The judge interface: a batch of `JudgedItem`s in, one `Score` (the sample log's) per item out."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragjudge.errors import UsageError
from ragjudge.formats.samples import Score
from ragjudge.judges.spec import JudgeSpec
from ragjudge.llm import LLMGateway
from ragjudge.models import JudgedItem


@dataclass
class JudgeContext:
    gateway: LLMGateway | None = None
    judge_models: list[str] = field(default_factory=list)
    on_progress: Callable[[int], None] = lambda n: None
    """Called with the number of items finished, so runners can drive progress bars."""
    retry_errors: bool = False
    """Ask once more, at once, when a judge's answer cannot be parsed (it is never reused from the cache)."""
    min_panel: int | None = None
    """Panel members that must answer for a panel score (default: a majority)."""
    cache_dir: Path | None = None
    """The run's cache folder (None: $RAGJUDGE_CACHE_DIR or ~/.cache/ragjudge); RB_alg keeps embeddings there."""
    use_cache: bool = True

    @classmethod
    def of_run(cls, run: Any, judge_models: list[str], min_panel: int | None) -> JudgeContext:
        """A bench run's (`run`: the engine's RunContext, whose gateway and cache options the judges use)."""
        o = run.options
        return cls(gateway=run.gateway, judge_models=judge_models, retry_errors=o.retry_errors, min_panel=min_panel,
                   cache_dir=Path(o.cache_dir) if o.cache_dir else None, use_cache=o.use_cache)


class Judge(ABC):
    """Base of all judges. Subclasses implement `judge`; batching across items is theirs to exploit."""

    needs_llm: bool = False
    chunk_size: int = 64
    """Items per call to `judge`; each finished chunk is journaled, so a crash loses at most one chunk."""

    def __init__(self, spec: JudgeSpec):
        self.spec = spec

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def metric(self) -> str:
        return self.spec.metric

    def describe_models(self, ctx: JudgeContext) -> list[str]:
        """The model(s) behind this judge's scores, recorded in every output."""
        return []

    def runtime(self) -> dict[str, Any]:
        """How a local model behind the scores ran (device, backend), recorded in run.json; {} for none."""
        return {}

    @property
    def requires(self) -> list[str]:
        """What an item must have for this judge to apply (`reference`, `passages`)."""
        return list(self.spec.requires)

    def not_applicable(self, item: JudgedItem) -> str | None:
        """Why this item cannot be judged (missing reference or passages), or None."""
        if "reference" in self.requires and not item.reference:
            return "no reference answer"
        if "passages" in self.requires and not item.contexts:
            return "no passages"
        return None

    def result(self, **fields: object) -> Score:
        """This judge's verdict: a Score (any of its fields) under the judge's name and metric."""
        return Score(judge=self.name, metric=self.metric, **fields)  # type: ignore[arg-type]

    @abstractmethod
    async def judge(self, items: list[JudgedItem], ctx: JudgeContext) -> list[Score]:
        """Score every item, in order. Failures are Scores with `error`, never exceptions."""


def judge_runtime(judges: Iterable[Judge]) -> dict[str, Any]:
    """`{"judge_runtime": {judge: {device, backend}}}` for the judges that ran a local model; {} when none did."""
    ran = {j.name: facts for j in judges if (facts := j.runtime())}
    return {"judge_runtime": ran} if ran else {}


def require_judge_models(judges: Iterable[Judge], judge_models: list[str], offline: Iterable[str]) -> None:
    """A judge that needs an LLM without a judge model is refused before any work (`offline`: those that need none)."""
    needing = [j.name for j in judges if j.needs_llm]
    if needing and not judge_models:
        raise UsageError(f"judge(s) {', '.join(needing)} need an LLM: pass --judge-models MODEL[,MODEL...] "
                         f"(offline judges: {', '.join(offline)})")


def judges_models(judges: Iterable[Judge], judge_models: list[str]) -> dict[str, list[str]]:
    """Judge name -> the model(s) behind its scores (what run.json and the summary record)."""
    ctx = JudgeContext(judge_models=judge_models)
    return {j.name: j.describe_models(ctx) for j in judges}


class LexicalJudge(Judge):
    """An offline judge reading each answer with its spec's regexes: `classify` gives a label of `values`, and why."""

    values: dict[str, float]

    @abstractmethod
    def classify(self, text: str) -> tuple[str, str]: ...

    async def judge(self, items: list[JudgedItem], ctx: JudgeContext) -> list[Score]:
        results = [self.result(value=self.values[label], label=label, rationale=why, model="patterns")
                   for label, why in map(self.classify, (item.answer for item in items))]
        ctx.on_progress(len(items))
        return results


def unconditional(pattern: re.Pattern[str] | None, text: str, condition: re.Pattern[str]) -> bool:
    """A match of `pattern` in `text` that no condition opened before it governs (`condition` ends at the match)."""
    return pattern is not None and any(not condition.search(text, 0, m.start()) for m in pattern.finditer(text))

"""What a running bench can use: the LLM gateway (one per run, shared by solver and scorers), progress
bars, and the engine's options."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from ragjudge.llm import LLMGateway, ResponseCache
from ragjudge.llm.gateway import validate_model
from ragjudge.progress import ProgressBars

if TYPE_CHECKING:
    from ragjudge.engine.outputs import OutputPaths


class EngineOptions(BaseModel):
    """Options of the run itself, the same for every bench (recorded in run.json)."""

    model_config = ConfigDict(extra="forbid")

    concurrency: int = Field(8, ge=1, description="Concurrent LLM requests.")
    max_retries: int = Field(6, ge=0, description="Retries per LLM call on 429/5xx/timeouts.")
    timeout: float = Field(120.0, gt=0, description="Seconds per LLM request.")
    cache_dir: str | None = Field(None, description="LLM response cache folder.")
    use_cache: bool = True
    api_base: str | None = Field(None, description="Base URL of an OpenAI-compatible server.")
    limit: int | None = Field(None, ge=1, description="Only the first N samples.")
    show_progress: bool = True


@dataclass
class RunContext:
    options: EngineOptions
    gateway: LLMGateway | None = None
    bars: ProgressBars = field(default_factory=lambda: ProgressBars(None))
    paths: OutputPaths | None = None
    """Where the run writes (None: nothing is written); benches put extra files at `paths.artifact(name)`."""

    def require_gateway(self) -> LLMGateway:
        if self.gateway is None:  # a bench asked for an LLM it did not declare in llm_models()
            raise RuntimeError("this bench calls an LLM but declared no model in llm_models()")
        return self.gateway


def build_gateway(options: EngineOptions, models: list[str]) -> LLMGateway | None:
    """One gateway for the run when any model is named; every model is checked before any work."""
    models = list(dict.fromkeys(m for m in models if m))
    if not models:
        return None
    for model in models:
        validate_model(model, options.api_base)
    cache = ResponseCache(options.cache_dir) if options.use_cache else None
    return LLMGateway(cache=cache, concurrency=options.concurrency, max_retries=options.max_retries,
                      timeout=options.timeout, api_base=options.api_base)

"""The run settings, declared once: each is a field of `EngineOptions` marked `Setting(...)`, and everything else
derives from these fields: the command line's flags (`cli/common.py`), the API's typed keywords
(`ragjudge.api.RunSettings`), the engine's validation (`prepare.engine_options`) and run.json's `engine` record.
Adding a setting is one field here plus its use (docs/extending.md). Light to import: the command line reads it at
start, without the LLM stack."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.fields import FieldInfo

from ragjudge.llm.defaults import DEFAULT_CONCURRENCY, DEFAULT_MAX_RETRIES, DEFAULT_RETRY_SECONDS, DEFAULT_TIMEOUT


@dataclass(frozen=True)
class Setting:
    """Marks an EngineOptions field as a run setting a user gives (a flag, a keyword)."""

    llm: bool = True
    """It only means something to a run that calls an LLM (or encodes through a cache): given to a bench that
    calls none, it is an error, never silently ignored."""
    recorded: bool = True
    """Written in run.json's `engine` record (not a machine's own path, which says nothing about the run)."""
    flag: str | None = None
    """The command-line flag when not `--name-with-dashes` (a switch that is on by default: `--no-...`)."""
    path: bool = False
    """A file or folder: the API also takes a `Path`; it is kept as text."""


class EngineOptions(BaseModel):
    """Options of the run itself, the same for every bench (recorded in run.json)."""

    model_config = ConfigDict(extra="forbid")

    concurrency: Annotated[int, Setting()] = Field(DEFAULT_CONCURRENCY, ge=1, description="Concurrent LLM requests.")
    max_retries: Annotated[int, Setting()] = Field(
        DEFAULT_MAX_RETRIES, ge=0, description="Retries per LLM call on 429/5xx/timeouts (2 at most while its "
                                               "endpoint answers 5xx to every request).")
    timeout: Annotated[float, Setting()] = Field(DEFAULT_TIMEOUT, ge=0.1, description="Seconds per LLM request.")
    cache_dir: Annotated[str | None, Setting(recorded=False, path=True)] = Field(
        None, description="Cache folder: LLM responses and embeddings (default: $RAGJUDGE_CACHE_DIR or "
                          "~/.cache/ragjudge).")
    use_cache: Annotated[bool, Setting(flag="--no-cache")] = Field(
        True, description="Use the caches (LLM responses, embeddings).")
    encoder_backend: Annotated[Literal["auto", "torch", "onnx"] | None, Setting(llm=False)] = Field(
        None, description="What runs every local encoder (dense retrieval, RB_alg's BERTScore): onnx (ONNX Runtime "
                          "on the CPU), torch, or auto (ONNX Runtime when installed); default: each spec's own "
                          "backend.")
    api_base: Annotated[str | None, Setting()] = Field(
        None, description="Base URL of an OpenAI-compatible server (vLLM, Ollama, a proxy).")
    models: Annotated[str | None, Setting(path=True)] = Field(
        None, description="Models file (litellm router format): endpoint, key variable and rpm/tpm per model; "
                          "default $RAGJUDGE_MODELS.")
    rpm: Annotated[float | None, Setting()] = Field(
        None, gt=0, description="Requests per minute per endpoint: calls are paced below it (and learnt from "
                                "x-ratelimit headers when not given).")
    tpm: Annotated[float | None, Setting()] = Field(None, ge=1, description="Tokens per minute per endpoint (pacing).")
    retry_seconds: Annotated[float, Setting()] = Field(
        DEFAULT_RETRY_SECONDS, ge=1, description="How long one LLM request may be retried through rate limits and "
                                                 "outages.")
    preflight: Annotated[bool, Setting()] = Field(
        True, description="Check credentials and reachability of every model before starting.")
    retry_errors: Annotated[bool, Setting()] = Field(
        False, description="Ask a judge again when its answer cannot be parsed (without it, a rerun re-reads the "
                           "answer it paid for, with the parser as it is now, and sends nothing).")
    batch: Annotated[bool, Setting()] = Field(
        False, description="Send the run's LLM requests through the provider's batch interface (openai/, azure/, "
                           "litellm_proxy/ models): half the price, answers within 24 h; rerun the same command to "
                           "collect submitted batches.")
    limit: Annotated[int | None, Setting(llm=False)] = Field(None, ge=1, description="Only the first N samples.")
    show_progress: bool = True


def settings() -> dict[str, tuple[FieldInfo, Setting]]:
    """Every run setting by name, in declaration order, with its field and its marks."""
    out = {}
    for name, info in EngineOptions.model_fields.items():
        mark = next((m for m in info.metadata if isinstance(m, Setting)), None)
        if mark is not None:
            out[name] = (info, mark)
    return out


def llm_settings() -> list[str]:
    """The settings that only mean something to a run that calls an LLM."""
    return [name for name, (_, mark) in settings().items() if mark.llm]


def flag(name: str) -> str:
    """A setting's command-line flag: `--max-retries`; a switch that is on by default says the opposite,
    `--no-preflight`."""
    info, mark = settings()[name]
    if mark.flag:
        return mark.flag
    return ("--no-" if info.default is True else "--") + name.replace("_", "-")


def record(options: EngineOptions) -> dict[str, Any]:
    """run.json's `engine` record: the recorded settings' values."""
    return options.model_dump(mode="json", include={n for n, (_, mark) in settings().items() if mark.recorded})

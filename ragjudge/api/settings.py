"""The run-level settings every API function takes as keyword arguments, typed: the same settings `ragjudge eval`
takes as flags (`limit=5` is `--limit 5`, `use_cache=False` is `--no-cache`), checked by the engine's own validation
(`engine.prepare.engine_options`), so a wrong one is a one-line `UsageError` naming the parameter."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypedDict

from ragjudge.errors import UsageError


class RunSettings(TypedDict, total=False):
    """Keyword arguments of `evaluate`, `evaluate_async` and `run_bench` (all optional; absent: the default)."""

    limit: int | None
    """Only the first N samples."""
    concurrency: int
    """Concurrent LLM requests (default 16)."""
    cache_dir: str | Path | None
    """Cache folder: LLM responses and embeddings (default $RAGJUDGE_CACHE_DIR or ~/.cache/ragjudge)."""
    use_cache: bool
    """False: do not read or write the caches."""
    encoder_backend: str | None
    """What runs every local encoder: `torch`, `onnx` or `auto` (default: each spec's own `backend`)."""
    api_base: str | None
    """Base URL of an OpenAI-compatible server."""
    max_retries: int
    timeout: float
    """Seconds per LLM request."""
    models: str | Path | None
    """Models file (litellm router format): endpoint, key variable and rate limits per model."""
    rpm: float | None
    tpm: float | None
    retry_seconds: float
    preflight: bool
    """False: do not check credentials and reachability of every model first."""
    retry_errors: bool
    batch: bool


SETTING_NAMES = tuple(RunSettings.__annotations__)


def check_settings(function: str, settings: Mapping[str, Any]) -> dict[str, Any]:
    """The settings given, or a UsageError naming the first keyword `function` does not take."""
    unknown = [k for k in settings if k not in SETTING_NAMES]
    if unknown:
        raise UsageError(f"{function}() got an unknown keyword argument {unknown[0]!r} (run settings: "
                         f"{', '.join(SETTING_NAMES)}; a bench's own options go in options={{...}})")
    return {k: str(v) if isinstance(v, Path) else v for k, v in settings.items()}

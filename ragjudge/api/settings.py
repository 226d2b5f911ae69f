"""The run-level settings every API function takes as keyword arguments, typed: the same settings `ragjudge eval`
takes as flags (`limit=5` is `--limit 5`, `use_cache=False` is `--no-cache`), derived from their one declaration
(`engine.run_settings`) and checked by the engine's own validation (`engine.prepare.engine_options`), so a wrong one
is a one-line `UsageError` naming the parameter."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypedDict

from ragjudge.engine.run_settings import SETTINGS
from ragjudge.errors import UsageError

RunSettings = TypedDict(  # type: ignore[misc]  # derived from the declaration, not written out a second time
    "RunSettings", {s.name: s.type | Path if s.path else s.type for s in SETTINGS}, total=False)
"""Keyword arguments of `evaluate`, `evaluate_async` and `run_bench` (all optional; absent: the default): every
run setting (`ragjudge.engine.run_settings.SETTINGS`), with its type (a file or folder also as a `Path`)."""


def check_settings(function: str, settings: Mapping[str, Any]) -> dict[str, Any]:
    """The settings given, or a UsageError naming the first keyword `function` does not take."""
    names = RunSettings.__annotations__
    unknown = [k for k in settings if k not in names]
    if unknown:
        raise UsageError(f"{function}() got an unknown keyword argument {unknown[0]!r} (run settings: "
                         f"{', '.join(names)}; a bench's own options go in options={{...}})")
    return as_text(settings)


def as_text(values: Mapping[str, Any]) -> dict[str, Any]:
    """Paths given as `Path` kept as text, as the engine's options and run.json hold them."""
    return {str(k): str(v) if isinstance(v, Path) else v for k, v in values.items()}

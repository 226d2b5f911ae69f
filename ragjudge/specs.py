"""Where the built-in spec folders (judges/, pipelines/) live, installed or in a source checkout."""

from __future__ import annotations

import os
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def builtin_spec_dir(kind: str) -> Path:
    """`judges` or `pipelines`: inside the wheel (force-included) or beside the package in a checkout."""
    installed = _PACKAGE / "_specs" / kind
    if installed.is_dir():
        return installed
    return _PACKAGE.parent / kind


def spec_search_path(kind: str, extra: list[str | Path] | None = None) -> list[Path]:
    """User folders first (so they can override a built-in spec by name), then the built-in folder."""
    env = os.environ.get(f"RAGJUDGE_{kind.upper()}_PATH", "")
    folders = [Path(p) for p in (extra or [])] + [Path(p) for p in env.split(os.pathsep) if p]
    return folders + [builtin_spec_dir(kind)]

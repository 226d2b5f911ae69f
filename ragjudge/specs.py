"""Where the built-in spec folders (judges/, pipelines/) live, installed or in a source checkout."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from ragjudge.errors import InputError
from ragjudge.formats.files import read_text

M = TypeVar("M", bound=BaseModel)

_PACKAGE = Path(__file__).resolve().parent


def builtin_spec_dir(kind: str) -> Path:
    """`judges` or `pipelines`: inside the wheel (force-included) or beside the package in a checkout."""
    installed = _PACKAGE / "_specs" / kind
    return installed if installed.is_dir() else _PACKAGE.parent / kind


def spec_search_path(kind: str, extra: list[str | Path] | None = None) -> list[Path]:
    """User folders first (so they can override a built-in spec by name), then the built-in folder."""
    env = os.environ.get(f"RAGJUDGE_{kind.upper()}_PATH", "")
    folders = [Path(p) for p in (extra or [])] + [Path(p) for p in env.split(os.pathsep) if p]
    return folders + [builtin_spec_dir(kind)]


def load_yaml_spec(path: Path, model: type[M], kind: str, defaults: dict[str, Any] | None = None) -> M:
    """Read a YAML spec file into `model`; every problem is an InputError naming the file (and line or field)."""
    try:
        data = yaml.safe_load(read_text(path, f"{kind} spec (YAML)"))
    except RecursionError:
        raise InputError("invalid YAML: nested too deeply", file=str(path)) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise InputError(f"invalid YAML: {getattr(exc, 'problem', exc)}", file=str(path),
                         line=mark.line + 1 if mark else None) from None
    if not isinstance(data, dict):
        raise InputError(f"a {kind} spec must be a YAML mapping", file=str(path))
    try:
        return model.model_validate({**(defaults or {}), **data})
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or None
        raise InputError(err["msg"].removeprefix("Value error, "), file=str(path), field=field) from None

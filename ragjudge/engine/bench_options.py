"""Turn `-T key=value` pairs and the common flags into a bench's validated Options, with one-line errors naming
what the user typed (`-T seed`, `--gen`), what was expected and, for an unknown key, the keys the bench accepts.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from ragjudge.errors import UsageError

COMMON_FLAGS: dict[str, str] = {
    "data": "--data", "gen": "--gen", "judges": "--judges", "judge_models": "--judge-models",
    "pipeline": "--pipeline", "corpus": "--corpus", "rewrite_model": "--rewrite-model",
    "pipeline_dir": "--pipeline-dir", "index_dir": "--index-dir", "judge_dir": "--judge-dir",
    "bertscore_model": "--bertscore-model", "criteria": "--criterion",
}
"""Option field → the `ragjudge eval` flag that fills it (any bench whose Options has the field uses it): what
several benches share. An option of one bench only is a `-T` key."""


@dataclass(frozen=True)
class Spelling:
    """How an error names an option: as the user typed it, on the command line (`--gen`, `-T seed`) or in Python
    (`gen`, `options['seed']`), so a message always points at what the user can change."""

    flag: Callable[[str], str]
    task: Callable[[str], str]
    needs: Callable[[str], str]
    """How to give a required option: `--data VALUE`, `-T seed=VALUE`, `data=...`."""

    def of(self, key: str, from_flags: set[str] | None = None) -> str:
        return self.flag(key) if key in COMMON_FLAGS and (from_flags is None or key in from_flags) \
            else self.task(key)


CLI = Spelling(flag=lambda k: COMMON_FLAGS.get(k, "--" + k.replace("_", "-")), task=lambda k: f"-T {k}",
               needs=lambda k: f"{COMMON_FLAGS[k]} VALUE" if k in COMMON_FLAGS else f"-T {k}=VALUE")
PYTHON = Spelling(flag=lambda k: k, task=lambda k: f"options[{k!r}]",
                  needs=lambda k: f"{k}=..." if k in COMMON_FLAGS else f"options={{{k!r}: ...}}")


def parse_task_args(pairs: list[str] | None) -> dict[str, str]:
    """`["seed=0", "memory=session"]` → {"seed": "0", "memory": "session"}; keys use `_` (a `-` is accepted)."""
    out: dict[str, str] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            raise UsageError(f"-T {pair!r}: expected KEY=VALUE")
        if key in out:
            raise UsageError(f"-T {key} is given twice")
        out[key] = value.strip()
    return out


def build_options(bench_name: str, model: type[BaseModel], task_args: Mapping[str, Any],
                  flags: Mapping[str, Any] | None = None, spelling: Spelling = CLI) -> BaseModel:
    """Validate -T values (strings from the command line, any value from Python) and common-flag values against
    `model`; a flag the bench has no field for is an error, never silently ignored."""
    flags = {k: v for k, v in (flags or {}).items() if v is not None}
    fields = model.model_fields
    for key in flags:
        if key not in fields:
            raise UsageError(f"{spelling.flag(key)} is not used by bench {bench_name}")
        if key in task_args:
            raise UsageError(f"{key} is given twice: as {spelling.flag(key)} and as {spelling.task(key)}")
    unknown = [k for k in task_args if k not in fields]
    if unknown:
        raise UsageError(f"unknown option {spelling.task(unknown[0])} for bench {bench_name} "
                         f"(valid: {', '.join(fields) or 'none'}; see `ragjudge benches show {bench_name}`)")
    values: dict[str, Any] = {}
    for key, value in {**task_args, **flags}.items():
        values[key] = _pre(value, fields[key])
        if values[key] == [] and _is_optional(fields[key].annotation) and fields[key].default is None:
            # None is the default; an empty list given on purpose (`--judges ''`) would run nothing
            raise UsageError(f"{spelling.of(key, set(flags))} names nothing: name at least one, or leave it out "
                             "for the default")
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        raise UsageError(_describe(exc, bench_name, model, values, set(flags), spelling)) from None


def _pre(value: Any, info: FieldInfo) -> Any:
    """Comma-separated strings for list fields; empty strings for optional fields mean 'not set'."""
    if isinstance(value, str) and _is_list(info.annotation):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, str) and value == "" and _is_optional(info.annotation):
        return None
    return value


def _describe(exc: ValidationError, bench: str, model: type[BaseModel], values: dict[str, Any],
              from_flags: set[str], spelling: Spelling) -> str:
    err = exc.errors()[0]
    loc = [str(p) for p in err["loc"]]
    key = loc[0] if loc else ""
    info = model.model_fields.get(key)
    if err["type"] == "missing" and info is not None:
        how = spelling.needs(key)
        help_text = f" ({info.description})" if info.description else ""
        return f"bench {bench} needs {how}{help_text}"
    if info is None:  # a model-level check (e.g. two options that exclude each other)
        return f"bench {bench}: {err['msg'].removeprefix('Value error, ')}"
    given = values.get(key)
    expected = describe_option(info)
    message = err["msg"].removeprefix("Value error, ")
    if err["type"] in ("value_error", "assertion_error"):
        return f"{spelling.of(key, from_flags)}: {message}"
    if len(loc) > 1 and isinstance(given, list) and loc[1].isdigit() and int(loc[1]) < len(given):
        item = given[int(loc[1])]  # one value of a comma-separated list
        return f"{spelling.of(key, from_flags)}: each value must be {_item_expected(info)}, got {item!r}"
    if err["type"] in RANGE_ERRORS:
        return f"{spelling.of(key, from_flags)} must be {expected}, got {_shown(given)}"
    return f"{spelling.of(key, from_flags)}: expected {expected}, got {given!r}"


RANGE_ERRORS = {"greater_than", "greater_than_equal", "less_than", "less_than_equal", "too_short", "too_long"}


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else repr(value)


def describe_option(info: FieldInfo) -> str:
    """What a value of this option must be, with its range: 'a whole number >= 1', 'a number from 0 to 1'."""
    return describe_type(info.annotation) + _range(_bounds(info.metadata))


def _item_expected(info: FieldInfo) -> str:
    inner = _strip_optional(info.annotation)
    args = [a for a in get_args(inner) if a is not Ellipsis]
    if not args:
        return "a value"
    item = args[0]
    if get_origin(item) is typing.Annotated:
        base, *meta = get_args(item)
        return describe_type(base) + _range(_bounds(_flatten(meta)))
    return describe_type(item)


def _flatten(meta: list[Any]) -> list[Any]:
    out = []
    for m in meta:
        out.extend(getattr(m, "metadata", None) or [m])  # a pydantic Field(ge=1) inside Annotated carries metadata
    return out


def _bounds(metadata: list[Any]) -> dict[str, Any]:
    bounds: dict[str, Any] = {}
    for m in metadata:
        for name in ("ge", "gt", "le", "lt"):
            if getattr(m, name, None) is not None:
                bounds[name] = getattr(m, name)
    return bounds


def _range(bounds: dict[str, Any]) -> str:
    low = ("ge", bounds["ge"]) if "ge" in bounds else ("gt", bounds["gt"]) if "gt" in bounds else None
    high = ("le", bounds["le"]) if "le" in bounds else ("lt", bounds["lt"]) if "lt" in bounds else None
    if low and high and low[0] == "ge" and high[0] == "le":
        return f" from {low[1]} to {high[1]}"
    symbols = {"ge": ">=", "gt": ">", "le": "<=", "lt": "<"}
    parts = [f"{symbols[b[0]]} {b[1]}" for b in (low, high) if b]
    return (" " + " and ".join(parts)) if parts else ""


def _strip_optional(annotation: Any) -> Any:
    if get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return annotation


def _is_optional(annotation: Any) -> bool:
    return get_origin(annotation) in (Union, types.UnionType) and type(None) in get_args(annotation)


def _is_list(annotation: Any) -> bool:
    return get_origin(_strip_optional(annotation)) in (list, tuple)


def describe_type(annotation: Any) -> str:
    """A reader's name for a field type: 'a whole number', 'one of: a, b', 'comma-separated numbers'."""
    inner = _strip_optional(annotation)
    origin = get_origin(inner)
    if origin is Literal:
        return "one of: " + ", ".join(str(a) for a in get_args(inner))
    if origin in (list, tuple):
        args = [a for a in get_args(inner) if a is not Ellipsis]
        item = describe_type(args[0]) if args else "values"
        return "comma-separated " + _plural(item)
    if origin is typing.Annotated:
        return describe_type(get_args(inner)[0])
    if origin in (typing.Union, types.UnionType):  # e.g. a number or a keyword: "a whole number or one of: ..."
        return " or ".join(describe_type(a) for a in get_args(inner))
    names = {int: "a whole number", float: "a number", bool: "true or false", str: "text", Path: "a path"}
    return names.get(inner, getattr(inner, "__name__", str(inner)))


def _plural(item: str) -> str:
    plurals = {"a whole number": "whole numbers", "a number": "numbers", "text": "values", "a path": "paths"}
    return plurals.get(item, f"values ({item})")


def option_rows(model: type[BaseModel]) -> list[tuple[str, str, str, str]]:
    """(how to set it, type, default, help) for each option: what `ragjudge benches show` prints."""
    rows = []
    for key, info in model.model_fields.items():
        how = f"{COMMON_FLAGS[key]}, -T {key}" if key in COMMON_FLAGS else f"-T {key}"
        default = "(required)" if info.is_required() else _show_default(info.get_default(call_default_factory=True))
        rows.append((how, describe_option(info), default, info.description or ""))
    return rows


def _show_default(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value) or "-"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)

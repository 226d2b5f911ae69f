"""From what a user gave (a bench name or path, its options, the run-level settings) to a bench instance and the
engine's options: the one place both front ends validate, so `ragjudge eval` and `ragjudge.run_bench` accept and
refuse the same things, each error naming the option as that user typed it (`--limit` or `limit`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from ragjudge.engine import registry
from ragjudge.engine.bench import Bench
from ragjudge.engine.bench_options import CLI, Spelling, build_options, describe_option
from ragjudge.engine.context import EngineOptions
from ragjudge.engine.run_settings import flag, llm_settings, settings as declared
from ragjudge.errors import UsageError


def make_bench(bench: str, task_args: Mapping[str, Any], flags: Mapping[str, Any],
               spelling: Spelling = CLI, **given: Any) -> Bench[Any, Any]:
    """The bench `bench` names (a registered name, or a path to MTRAG-format tasks) with its options validated:
    `flags` are the common flags by option name (None: not given), `task_args` the bench's own options, `given`
    what the caller already holds in memory (the rag bench's `records`)."""
    cls, label, implied = registry.resolve(bench)
    flags = dict(flags)
    for key, value in implied.items():
        if flags.get(key) is not None:
            raise UsageError(f"the bench {bench!r} already names the {key}; drop {spelling.flag(key)}")
        flags[key] = value
    options = build_options(cls.name, cls.Options, task_args, flags, spelling)
    return cls(options, label=label, **given)


def engine_options(settings: Mapping[str, Any], *, bench_name: str, uses_llm: bool,
                   spelling: Spelling = CLI) -> EngineOptions:
    """The run's options from the settings given (absent or None: the default). A setting that only an LLM run
    uses, given to a bench that calls no LLM, is an error, never silently ignored."""
    known = declared()
    unknown = [k for k in settings if k not in known]
    if unknown:
        raise UsageError(f"unknown run setting {unknown[0]!r} (settings: {', '.join(known)})")
    given = {k: v for k, v in settings.items()  # a switch left at its default was not given
             if v is not None and not (isinstance(v, bool) and v == EngineOptions.model_fields[k].default)}
    named = [_name(k, spelling) for k in llm_settings() if k in given]
    if named and not uses_llm:
        raise UsageError(f"{', '.join(named)} {'is' if len(named) == 1 else 'are'} not used by bench {bench_name} "
                         "(it calls no LLM)")
    values = {k: str(v) if known[k].path else v for k, v in given.items()}
    try:
        return EngineOptions(**values)
    except ValidationError as exc:
        err = exc.errors()[0]
        key = str(err["loc"][0]) if err["loc"] else ""
        info = EngineOptions.model_fields.get(key)
        expected = describe_option(info) if info is not None else "a valid value"
        raise UsageError(f"{_name(key, spelling)} must be {expected}, got {values.get(key)!r}") from None


def _name(key: str, spelling: Spelling) -> str:
    """A run setting as the user gave it: its flag for a command-line spelling (`eval`'s, `judge`'s), else its
    keyword."""
    if spelling is CLI or spelling.flag(key).startswith("-"):
        return flag(key)
    return key

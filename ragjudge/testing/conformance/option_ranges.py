"""Check 5 (`check_option_ranges`): each numeric bench option with a declared range, given a value just outside
it, must be refused with one line that states the range as `ragjudge benches show` does."""

from __future__ import annotations

import types
import typing
from collections.abc import Iterator, Sequence
from typing import Any, Union, get_args, get_origin

from ragjudge.testing.conformance.case import CheckReport
from ragjudge.testing.conformance.outcomes import one_line_error
from ragjudge.testing.conformance.runs import BenchRuns


class OptionRangeCheck(BenchRuns):
    def check_option_ranges(self) -> CheckReport:
        """Each numeric option with a range, given a value outside it, says the range."""
        from ragjudge.engine import registry

        report = CheckReport("option ranges", self.name)
        options = registry.get(self.name).load().Options
        for key, value, range_text in option_range_faults(options):
            args = self.eval_args(0, self.data, self._fresh(f"option-{key}") / "out")
            args = _without_option(args, key)
            args[-2:-2] = ["-T", f"{key}={value}"]
            done = self.cli(args)
            problems = one_line_error(done, [], ())
            if range_text not in done.err:
                problems.append(f"the message does not state the range {range_text!r}")
            report.add_refusal(f"-T {key}={value}", done, problems)
        if not report.passed and not report.problems:
            report.skipped.append(f"no numeric option with a range (options: {', '.join(options.model_fields)})")
        return report


def option_range_faults(options: type[Any]) -> list[tuple[str, str, str]]:
    """(option, a value just outside its range, the range as the CLI states it) for each bound of each numeric
    option of a bench's Options model (list items included): what `check_option_ranges` tries."""
    return [(key, value, text) for key, info in options.model_fields.items()
            for value, text in _out_of_range_values(info)]


def _out_of_range_values(info: Any) -> Iterator[tuple[str, str]]:
    """(value just outside the range, the range as the CLI states it) for each bound of a numeric option."""
    from ragjudge.engine.bench_options import _bounds, _range

    for kind, metadata in _numeric_members(info.annotation, info.metadata):
        bounds = _bounds(metadata)
        if not bounds:
            continue
        text = _range(bounds).strip()
        step = 1 if kind is int else 0.5
        for name, bound in bounds.items():
            value = {"ge": bound - step, "gt": bound, "le": bound + step, "lt": bound}[name]
            yield (str(int(value)) if kind is int else repr(float(value))), text


def _numeric_members(annotation: Any, metadata: Sequence[Any]) -> Iterator[tuple[type, list[Any]]]:
    """(int or float, bound metadata) for each numeric part of an option's type (list items included)."""
    from ragjudge.engine.bench_options import _flatten, _strip_optional

    annotation = _strip_optional(annotation)
    origin = get_origin(annotation)
    if annotation in (int, float):
        yield annotation, list(metadata)
    elif origin is typing.Annotated:
        base, *meta = get_args(annotation)
        yield from _numeric_members(base, [*metadata, *_flatten(meta)])
    elif origin in (Union, types.UnionType):
        for member in get_args(annotation):
            yield from _numeric_members(member, metadata)
    elif origin in (list, tuple):
        items = [a for a in get_args(annotation) if a is not Ellipsis]
        if items:
            yield from _numeric_members(items[0], [])


def _without_option(args: list[str], key: str) -> list[str]:
    """`args` without `-T key=...` and without the common flag that fills `key`."""
    from ragjudge.engine.bench_options import COMMON_FLAGS

    flag = COMMON_FLAGS.get(key)
    out: list[str] = []
    skip = False
    for i, arg in enumerate(args):
        if skip:
            skip = False
            continue
        if arg in ("-T", "--task-arg") and i + 1 < len(args) and args[i + 1].replace("-", "_").startswith(f"{key}="):
            skip = True
            continue
        if flag is not None and arg == flag:
            skip = True
            continue
        if flag is not None and arg.startswith(flag + "="):
            continue
        out.append(arg)
    return out

"""What to check (a BenchCase, its FieldFaults, the fault kinds) and what a check found (a CheckReport)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ragjudge.errors import RagjudgeError

if TYPE_CHECKING:
    from ragjudge.engine.bench import Bench
    from ragjudge.testing.conformance.cli import CliResult
    from ragjudge.testing.replies import Responder

FaultKind = Literal["empty", "not_utf8", "truncated", "folder", "wrong_type", "out_of_range"]
FAULT_KINDS: tuple[FaultKind, ...] = ("empty", "not_utf8", "truncated", "folder", "wrong_type", "out_of_range")
"""Every way `check_data_fault` spoils a data file."""


@dataclass(frozen=True)
class FieldFault:
    """An explicit field fault for one data file, where the kit's guess (the first record's first field for
    `wrong_type`, its first number for `out_of_range`) does not fit: `path` into the document (for JSON Lines,
    `path[0]` is the record's index), the `value` written there, and `names`, what the error must name (default:
    the last key of `path`)."""

    path: tuple[str | int, ...]
    value: Any
    names: str = ""


@dataclass(frozen=True)
class BenchCase:
    """A bench and the small data it is checked on; every argument list may hold `{data}` (the kit's copy of `data`)
    and `{api_base}`."""

    bench: str | type[Bench[Any, Any]]
    """A registered name, or a Bench class (registered by the kit while it runs, if it is not yet)."""
    data: Path
    """A small data folder in the bench's format; the kit copies it, so it is never modified."""
    systems: Sequence[Sequence[str] | Mapping[str, Any]] = ((),)
    """Each system or configuration under test (at least two: `check_systems`), as `ragjudge eval` arguments
    (`["--gen", "lookup", "-T", "k=3"]`) or bench options (`{"gen": "lookup", "k": 3}`: the common flags for the
    options that have one, `-T` for the others). The first is the one the other checks run."""
    args: Sequence[str] = ("--data", "{data}")
    """Arguments every system shares."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Extra environment for every run."""
    server: Responder | None = None
    """Replies of a local OpenAI-compatible server for systems that call an LLM: every run of a bench that may
    call one gets `--api-base` (also `{api_base}` in arguments) and an OPENAI_API_KEY."""
    server_latency: float = 0.0
    resume: Literal["truncate", "kill"] = "truncate"
    kill_after: int = 2
    """`resume="kill"`: journal records written before the SIGKILL."""
    volatile: Sequence[str] = ()
    """Metric names (fnmatch patterns) that legitimately differ between two runs of the same thing (besides kind
    `seconds`, always left out), left out of the resume comparison."""
    rel_tol: float = 0.0
    """Relative tolerance of the resume comparison, for figures a float32 model computes in batches (a resumed run
    batches differently, which can move their last digits); 0: exact."""
    judged: bool = False
    """The results are judge scores of generated answers (MTRAG-style lines): `export` and `correlate` apply."""
    retrieval: Sequence[tuple[str, str]] | None = None
    """(run file in the output folder, qrels) pairs for `retrieval-eval`; None: every `run*.trec` the bench
    writes, with the `qrels.trec` beside it."""
    field_faults: Mapping[str, Mapping[str, FieldFault | str]] = field(default_factory=dict)
    """Per data file (path relative to `data`) and fault kind: an explicit FieldFault, or the reason to skip it."""

    @property
    def name(self) -> str:
        return self.bench if isinstance(self.bench, str) else self.bench.name


@dataclass
class CheckReport:
    """The outcome of one check: targets that passed, problems (each saying the command and what it printed),
    and targets skipped with the reason."""

    check: str
    bench: str
    passed: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def merge(self, other: CheckReport) -> CheckReport:
        self.passed += other.passed
        self.problems += other.problems
        self.skipped += other.skipped
        return self

    def add(self, target: str, problems: Sequence[str]) -> None:
        """`target` passed, or each of its problems is one, prefixed with it."""
        if problems:
            self.problems += [f"{target}: {p}" for p in problems]
        else:
            self.passed.append(target)

    def add_refusal(self, label: str, done: CliResult, problems: Sequence[str]) -> None:
        """The outcome of a command that had to be refused: passed, with the line it printed; or one problem
        listing what was wrong with the refusal and what the command printed."""
        if problems:
            self.problems.append(f"{label}: " + "; ".join(problems) + f" — {done.shown()}")
        else:
            self.passed.append(f"{label}: {done.err_lines[0]}")

    def text(self, verbose: bool = False) -> str:
        lines = [f"{self.bench}: {self.check}: {len(self.passed)} passed, {len(self.problems)} problem(s), "
                 f"{len(self.skipped)} skipped"]
        lines += [f"  PROBLEM {p}" for p in self.problems]
        if verbose:
            lines += [f"  passed {p}" for p in self.passed]
        lines += [f"  skipped {s}" for s in self.skipped]
        return "\n".join(lines)

    def assert_ok(self, *, allow_skip: bool = True) -> CheckReport:
        """For pytest: fail listing every problem; when nothing applied, skip saying why (or, with
        `allow_skip=False`, fail: a suite that must check something says so)."""
        if self.problems:
            raise AssertionError(self.text())
        if not self.passed:
            if not allow_skip:
                raise AssertionError(self.text() + "\n  nothing was checked")
            import pytest

            pytest.skip("; ".join(self.skipped) or "nothing to check")
        return self


class ConformanceError(RagjudgeError, AssertionError):
    """A step every check needs (the clean run of a system) failed."""


class NotApplicable(RagjudgeError):
    """This fault cannot be made in this file (the reason is recorded as a skip)."""


def as_args(system: Sequence[str] | Mapping[str, Any]) -> list[str]:
    """A system as `ragjudge eval` arguments: a list as it is; options {name: value} as the common flag of each
    option that has one (`--gen`), else `-T name=value` (lists comma-separated, booleans true/false)."""
    if not isinstance(system, Mapping):
        return list(system)
    from ragjudge.engine.bench_options import COMMON_FLAGS

    args: list[str] = []
    for key, value in system.items():
        text = _option_text(value)
        args += [COMMON_FLAGS[key], text] if key in COMMON_FLAGS and not isinstance(value, bool) else \
            ["-T", f"{key}={text}"]
    return args


def _option_text(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)

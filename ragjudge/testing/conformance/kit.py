"""The kit: `Conformance`, every check of one BenchCase on shared clean runs, and `check_bench`, all of them in one
call."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragjudge.testing.conformance.case import BenchCase, CheckReport, ConformanceError, as_args
from ragjudge.testing.conformance.contract import ContractChecks
from ragjudge.testing.conformance.data_faults import DataFaultCheck
from ragjudge.testing.conformance.downstream import DownstreamChecks
from ragjudge.testing.conformance.option_ranges import OptionRangeCheck
from ragjudge.testing.conformance.resume import ResumeCheck
from ragjudge.testing.conformance.state import StateCheck

if TYPE_CHECKING:
    from ragjudge.engine.bench import Bench


class Conformance(ContractChecks, StateCheck, ResumeCheck, DataFaultCheck, OptionRangeCheck, DownstreamChecks):
    """Runs the checks of one `BenchCase` under `workdir`; clean runs are made once and shared by every check.

    Use as a context manager (it may register the bench and start a local LLM server); every `check_*` returns a
    `CheckReport`, `check_all` runs them all and raises AssertionError listing every problem."""

    def check_all(self, skip: Mapping[str, str] | None = None) -> list[CheckReport]:
        """Every check; `skip` maps a check name (schema, samples, systems, state, resume, data faults, option ranges,
        downstream) to why it does not apply. Raises AssertionError listing every problem of every check."""
        skip = dict(skip or {})
        checks: dict[str, Callable[[], CheckReport]] = {
            "schema": self.check_schema, "samples": self.check_samples, "systems": self.check_systems,
            "state": self.check_state, "resume": self.check_resume,
            "data faults": self.check_data_faults, "option ranges": self.check_option_ranges,
            "downstream": self.check_downstream}
        reports = []
        for name, check in checks.items():
            if name in skip:
                reports.append(CheckReport(name, self.name, skipped=[skip[name]]))
                continue
            try:
                reports.append(check())
            except ConformanceError as exc:
                reports.append(CheckReport(name, self.name, problems=[str(exc)]))
        failing = [r for r in reports if r.problems]
        if failing:
            raise AssertionError("\n".join(r.text() for r in failing))
        return reports


def check_bench(bench: str | type[Bench[Any, Any]], *, data: Path, tmp_path: Path,
                systems: Sequence[Sequence[str] | Mapping[str, Any]], options: Mapping[str, Any] | None = None,
                skip: Mapping[str, str] | None = None, **case: Any) -> list[CheckReport]:
    """Every check on `bench` in one call (see the package docstring); raises AssertionError listing every problem.
    `options` are bench options every system shares; `case` holds any other BenchCase field (args, env, server,
    judged, retrieval, field_faults...)."""
    args = (*case.pop("args", ("--data", "{data}")), *as_args(options or {}))
    with Conformance(BenchCase(bench, data=Path(data), systems=systems, args=args, **case), tmp_path) as kit:
        return kit.check_all(skip)

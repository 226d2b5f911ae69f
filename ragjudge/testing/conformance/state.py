"""Check: a bench keeps no run state on itself (`check_state`); the instance holds its options and what they build.
A hook's work stored on `self` for a later hook carries one run into the next (the API reruns a prepared bench, a
test reuses it) and hides what each hook depends on. Each clean run is watched (`runs.watching_runs`).
"""

from __future__ import annotations

from ragjudge.testing.conformance.case import CheckReport
from ragjudge.testing.conformance.runs import BenchRuns


class StateCheck(BenchRuns):
    def check_state(self) -> CheckReport:
        """Every system's clean run leaves the bench instance as it found it (`Bench.load` returns what the run
        needs beside the samples as `Loaded(samples, data)`; the hooks read it as `ctx.data`)."""
        report = CheckReport("state", self.name)
        for system in range(len(self.case.systems)):
            run = self.clean(system)
            changed = sorted({c for run_changes in run.state for c in run_changes})
            problems = [] if run.state else ["the engine never ran (nothing to watch)"]
            if changed:
                problems.append(f"the run changed the bench instance: {', '.join(changed)}; keep run state off "
                                "self (return `Loaded(samples, data)` from load, read `ctx.data` / `ctx.facts` in the "
                                "hooks)")
            report.add(run.where, problems)
        return report

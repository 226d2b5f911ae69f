"""The conformance kit: what every bench, built in or a plugin, must do at its edges, checked in one place.

The engine cannot guarantee a bench's own edges (its summary keeps the result contract, its data errors are one
line naming the file, its options state their ranges, its results feed the other commands). The kit runs the real
`ragjudge` command line in-process, offline, on a small data folder, so a plugin gets the checks the built-in benches
get (`tests/test_conformance.py` runs it over every registered bench). What it checks and `check_bench`, all checks in
one call: docs/extending.md#check-it-with-the-conformance-kit. One pytest test per check shares the clean runs::

    @pytest.fixture(scope="module")
    def kit(tmp_path_factory):
        with Conformance(BenchCase("support-faq", data=DATA, systems=[...]), tmp_path_factory.mktemp("c")) as kit:
            yield kit

    def test_schema(kit): kit.check_schema().assert_ok()

Each `check_*` returns a `CheckReport` (passed, problems, skipped and why); each check module's docstring says what
it checks. Beyond docs/extending.md: `check_schema` also reruns a finished run (same summary) and wants run.json to
list every data file read with its sha256; `check_resume` needs `rel_tol` for float32 figures a batching moves, and
`resume="kill"` (a subprocess SIGKILLed after `kill_after` journaled records) suits benches slow enough to be
caught; `check_data_fault` makes `wrong_type`/`out_of_range` in JSON / JSON Lines only (others skipped, saying so),
in the first record's first suitable field unless a `FieldFault` says otherwise; correlate is checked against
made-up ratings (the plumbing only). Arguments may hold `{data}` (the data folder's copy) and `{api_base}` (the
local server started for `server`); a bench class not installed is registered for the kit's lifetime.
"""

from ragjudge.testing.conformance.case import FAULT_KINDS, BenchCase, CheckReport, FieldFault, as_args
from ragjudge.testing.conformance.case import ConformanceError as ConformanceError
from ragjudge.testing.conformance.case import FaultKind as FaultKind
from ragjudge.testing.conformance.cli import OFFLINE_ENV as OFFLINE_ENV
from ragjudge.testing.conformance.cli import WIDE as WIDE
from ragjudge.testing.conformance.cli import CliResult, run_cli
from ragjudge.testing.conformance.kit import Conformance, check_bench
from ragjudge.testing.conformance.option_ranges import option_range_faults
from ragjudge.testing.conformance.outcomes import LEFT_AFTER_FAILURE as LEFT_AFTER_FAILURE
from ragjudge.testing.conformance.runs import CleanRun as CleanRun

__all__ = ["FAULT_KINDS", "BenchCase", "CheckReport", "CliResult", "Conformance", "FieldFault", "as_args",
           "check_bench", "option_range_faults", "run_cli"]

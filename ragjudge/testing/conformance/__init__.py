"""The conformance kit: what every bench, built in or a plugin, must do at its edges, checked in one place.

A bench author writes `load`, `solver`, `scorers` and `summarize`; the engine does the rest. What the engine
cannot guarantee is the bench's own edges: that its summary keeps the result contract, that its data errors
are one line naming the file, that its options state their ranges, that its results files feed the other
commands. This kit runs the real `ragjudge` command line in-process (offline: no network, Hugging Face
offline) on a small data folder and checks each of those, so a plugin gets the same checks as the built-in
benches (`tests/test_conformance.py` runs it over every registered bench).

Use it from pytest, once for everything::

    from pathlib import Path
    from ragjudge.testing.conformance import check_bench

    def test_my_bench_conforms(tmp_path):
        check_bench("support-faq", data=Path("tests/data/faq"), tmp_path=tmp_path,
                    systems=[{"gen": "lookup"}, {"gen": "openai/faq-model"}],  # the second asks `server`
                    server=lambda request: "Returns are free within 30 days.")

or one pytest test per check, sharing the clean runs (a class-scoped fixture)::

    CASE = BenchCase("support-faq", data=DATA, systems=[{"gen": "lookup"}, ["--gen", "openai/faq-model"]],
                     server=lambda request: "Returns are free within 30 days.")

    @pytest.fixture(scope="module")
    def kit(tmp_path_factory):
        with Conformance(CASE, tmp_path_factory.mktemp("conformance")) as kit:
            yield kit

    def test_schema(kit): kit.check_schema().assert_ok()
    @pytest.mark.parametrize("kind", FAULT_KINDS)
    def test_bad_data(kit, kind): kit.check_data_fault(kind).assert_ok()

What is checked (each `check_*` returns a `CheckReport`: what passed, every problem, what was skipped and why):

- `check_schema`: each system's `summary.json` and `--format json` validate against the Summary model and its
  published JSON Schema (`ragjudge schema summary`), `schema` is `ragjudge.summary/1`, the headline names a
  metric with its value, the last line printed in text format is the headline's text, a rerun of a finished
  run reproduces its summary, and run.json lists every data file read with its sha256.
- `check_samples`: each system's `samples.jsonl` holds one `ragjudge.sample/1` record per sample (the model and
  its JSON Schema, `ragjudge schema sample`), unique ids, as many as the summary counts, labelled by every
  breakdown dimension the summary has.
- `check_systems`: every declared system (at least two: two `--gen`, `--pipeline` or option sets) exits 0, and
  `ragjudge report` shows them together.
- `check_state`: each system's clean run leaves the bench instance as the engine received it: no attribute set,
  replaced or filled by a hook (what a run needs besides its samples is `load`'s `Loaded(samples, data)`, which
  every hook reads as `ctx.data`; what it learns is `ctx.facts`).
- `check_resume`: a run stopped part-way gives, when rerun, exactly the clean run's metrics and breakdowns (times
  aside; `rel_tol` for float32 model figures a different batching moves). `resume="truncate"` (default) leaves
  the run folder as a kill leaves it, each journal cut to a prefix plus half a line, once while solving and once
  while scoring (a bench that journals nothing: an empty folder but its lock), then reruns: the runner's resume
  path (journal read, torn tail dropped, finished work reused and not journaled twice), without racing a fast
  bench.
  `resume="kill"` runs `python -m ragjudge` in a subprocess and SIGKILLs it once `kill_after` records are
  journaled: for benches slow enough to be caught (an LLM behind `server` with latency).
- `check_data_fault(kind)`, for every data file the bench read (run.json `inputs` under the data folder), on a
  copy of the folder: the file made `empty`, `not_utf8` (a Latin-1 byte in its first string), `truncated`
  (cut mid-line), a `folder`, or given a `wrong_type` or an `out_of_range` value in the first record's first
  suitable field (JSON / JSON Lines only: other formats are skipped, saying so). Each must exit 2 with one
  error line (progress bars aside) and no traceback, naming the file by the path given (and `file:line` where
  a line is known, the field where one was changed), with no result (summary.json, results, run.json, tables)
  written to the output folder. `FieldFault` overrides the heuristic for a file, or skips it with a reason.
- `check_option_ranges`: every numeric bench option with a declared range (pydantic `ge`/`gt`/`le`/`lt`, list
  items included), given a value just outside it, exits 2 with one line that states the range as `ragjudge
  benches show` does (`>= 1`, `from -1 to 1`).
- `check_report`, `check_retrieval_eval`, `check_export`, `check_correlate` (`check_downstream` runs those
  that apply): the results feed `ragjudge report` (HTML written), `retrieval-eval` (each run file the bench
  writes, with its qrels), `export` and `correlate` (judged benches; correlate against ratings the kit makes
  up: only the plumbing is checked); and each of them, given a results line whose field is replaced by a
  string, exits 2 with one line naming `file:line` and the field.

Arguments of a case may hold `{data}` (the data folder, or its copy) and `{api_base}` (the local OpenAI-compatible
server started for `server`). A bench class that is not installed is registered for the kit's lifetime (a
temporary entry point), so a plugin can be checked before it is packaged.

The package, one job a module: `cli` (running `ragjudge` in-process, offline), `case` (BenchCase, FieldFault,
CheckReport), `runs` (the copied data, the registered bench, the shared clean runs), `summaries` (reading,
validating and comparing summaries), `outcomes` (what a refusal must look like), one module a check (`contract`:
schema and systems, `state`, `resume`, `data_faults`, `option_ranges`, `downstream`), and `kit` (Conformance,
check_bench).
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

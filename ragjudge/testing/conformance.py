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
- `check_systems`: every declared system (at least two: two `--gen`, `--pipeline` or option sets) exits 0, and
  `ragjudge report` shows them together.
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
"""

from __future__ import annotations

import contextlib
import errno
import fnmatch
import hashlib
import io
import ipaddress
import json
import math
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import types
import typing
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Union, get_args, get_origin

if TYPE_CHECKING:
    from ragjudge.bench.base import Bench
    from ragjudge.testing.openai_server import OpenAIServer
    from ragjudge.testing.replies import Responder

__all__ = ["FAULT_KINDS", "BenchCase", "CheckReport", "CliResult", "Conformance", "FieldFault", "as_args",
           "check_bench", "option_range_faults", "run_cli"]

FaultKind = Literal["empty", "not_utf8", "truncated", "folder", "wrong_type", "out_of_range"]
FAULT_KINDS: tuple[FaultKind, ...] = ("empty", "not_utf8", "truncated", "folder", "wrong_type", "out_of_range")
"""Every way `check_data_fault` spoils a data file."""

LEFT_AFTER_FAILURE = {".ragjudge.lock", "predictions.jsonl", "judgements.jsonl", "usage.jsonl", "batches.jsonl"}
"""What a run that stopped on bad input may leave in its output folder: its lock and journals (work done before the
bad file was read, reused by the next run), never a result."""

OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
               "RAGAS_DO_NOT_TRACK": "true"}
WIDE = {"COLUMNS": "1000"}
"""Text runs print at this width, so the headline is one line however long it is."""


# ------------------------------------------------------------------------------------------- the command line

@dataclass(frozen=True)
class CliResult:
    """One `ragjudge` invocation: its arguments, exit code, stdout and stderr."""

    args: list[str]
    code: int
    out: str
    err: str

    @property
    def command(self) -> str:
        return shlex.join(["ragjudge", *self.args])

    @property
    def err_lines(self) -> list[str]:
        """stderr's lines but progress bars (a run may draw some before it meets the bad input)."""
        return [line for line in self.err.splitlines() if line.strip() and not _is_progress(line)]

    def shown(self) -> str:
        """For a failure message: the command, exit code and stderr (trimmed)."""
        err = self.err.strip()
        err = err if len(err) < 1500 else err[:700] + "\n…\n" + err[-700:]
        return f"`{self.command}` → exit {self.code}; stderr: {err or '(empty)'}"


def _is_progress(line: str) -> bool:
    return "━" in line or bool(re.search(r"\d+/\d+\s+\d+:\d\d:\d\d", line))


def run_cli(args: Sequence[str], env: Mapping[str, str] | None = None, *, offline: bool = True) -> CliResult:
    """Run the `ragjudge` entry point in this process (no interpreter start-up: a run costs what the bench costs),
    with `env` set and, when `offline`, Hugging Face offline and every non-loopback connection refused (a bench
    that reaches for the network fails loudly instead of passing on a connected machine)."""
    from ragjudge.cli import main

    out, err = io.StringIO(), io.StringIO()
    code: int = 0
    with _environ({**(OFFLINE_ENV if offline else {}), **(env or {})}), _argv(["ragjudge", *args]), \
            (_no_network() if offline else contextlib.nullcontext()), \
            contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main()
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return CliResult(list(args), code, out.getvalue(), err.getvalue())


@contextlib.contextmanager
def _environ(values: Mapping[str, str]) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@contextlib.contextmanager
def _argv(argv: list[str]) -> Iterator[None]:
    saved = sys.argv
    sys.argv = argv
    try:
        yield
    finally:
        sys.argv = saved


@contextlib.contextmanager
def _no_network() -> Iterator[None]:
    """Refuse connections to anything but this machine (the local LLM server is on 127.0.0.1)."""
    original_connect, original_connect_ex = socket.socket.connect, socket.socket.connect_ex

    def local(address: Any) -> bool:
        if not isinstance(address, tuple):
            return True  # a Unix socket
        host = str(address[0])
        if host == "localhost":
            return True
        try:
            return ipaddress.ip_address(host.split("%")[0]).is_loopback
        except ValueError:
            return False

    def connect(self: socket.socket, address: Any) -> None:
        if not local(address):
            raise OSError(errno.ENETUNREACH, f"network access refused by the conformance kit ({address[0]})")
        return original_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        if not local(address):
            return errno.ENETUNREACH
        return original_connect_ex(self, address)

    socket.socket.connect, socket.socket.connect_ex = connect, connect_ex  # type: ignore[method-assign]
    try:
        yield
    finally:
        socket.socket.connect, socket.socket.connect_ex = original_connect, original_connect_ex  # type: ignore[method-assign]


# ------------------------------------------------------------------------------------------- what to check

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
    """A bench and the small data it is checked on.

    Every argument list may hold `{data}` (the data folder: a copy of `data` the kit owns) and `{api_base}`.
    """

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


class ConformanceError(AssertionError):
    """A step every check needs (the clean run of a system) failed."""


# ------------------------------------------------------------------------------------------- the kit

@dataclass
class CleanRun:
    """One system run as a user would: in text, then again with `--format json` (a rerun of a finished run)."""

    system: int
    args: list[str]
    out: Path
    text: CliResult
    json: CliResult
    text_summary: dict[str, Any] | None
    summary: dict[str, Any]
    run_info: dict[str, Any]
    problems: list[str] = field(default_factory=list)
    """What the clean run itself showed wrong (reported by check_schema)."""


class Conformance:
    """Runs the checks of one `BenchCase` under `workdir`; clean runs are made once and shared by every check.

    Use as a context manager (it may register the bench and start a local LLM server); every `check_*` returns a
    `CheckReport`, `check_all` runs them all and raises AssertionError listing every problem."""

    def __init__(self, case: BenchCase, workdir: Path):
        if len(case.systems) < 1:
            raise ValueError("a BenchCase needs at least one system")
        self.case = case
        self.name = case.name
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.data = self._copy_data(self.workdir / "data")
        self._clean: dict[int, CleanRun] = {}
        self._stack = contextlib.ExitStack()
        self._server: OpenAIServer | None = None
        self._seq = 0

    # -- lifetime ---------------------------------------------------------------------------------------

    def __enter__(self) -> Conformance:
        if not isinstance(self.case.bench, str):
            self._stack.enter_context(self._registered(self.case.bench))
        if self.case.server is not None:
            from ragjudge.testing.openai_server import OpenAIServer

            self._server = self._stack.enter_context(OpenAIServer(self.case.server, latency=self.case.server_latency))
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._stack.close()

    @contextlib.contextmanager
    def _registered(self, cls: type[Bench[Any, Any]]) -> Iterator[None]:
        """A bench class that is not installed, registered as pip would: a dist-info with its entry point."""
        from ragjudge.bench import registry

        target = f"{cls.__module__}:{cls.__qualname__}"
        known = registry.entries().get(cls.name)
        if known is not None:
            if known.target != target:
                raise ValueError(f"bench name {cls.name!r} is taken by {known.target}")
            yield
            return
        site = Path(tempfile.mkdtemp(prefix="ragjudge-conformance-"))
        info = site / f"ragjudge_conformance_{re.sub(r'[^A-Za-z0-9]+', '_', cls.name)}-0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: ragjudge-conformance-{cls.name}\nVersion: 0\n")
        (info / "entry_points.txt").write_text(f"[ragjudge.benches]\n{cls.name} = {target}\n")
        sys.path.insert(0, str(site))
        try:
            yield
        finally:
            with contextlib.suppress(ValueError):
                sys.path.remove(str(site))
            shutil.rmtree(site, ignore_errors=True)

    def _import_path(self) -> list[str]:
        """What a `python -m ragjudge` subprocess needs on its path to find the bench as this process does: this
        process's path (with any registration above) and the folder of a bench class's top-level module."""
        extra = []
        if not isinstance(self.case.bench, str) and "." not in self.case.bench.__module__:
            module_file = getattr(sys.modules.get(self.case.bench.__module__), "__file__", None)
            extra = [str(Path(module_file).parent)] if module_file else []
        return [*extra, *(p for p in sys.path if p)]

    # -- running ----------------------------------------------------------------------------------------

    def _copy_data(self, dest: Path) -> Path:
        if dest.exists():
            shutil.rmtree(dest)
        source = Path(self.case.data)
        if not source.is_dir():
            raise ValueError(f"{source}: the case's data must be a folder")
        shutil.copytree(source, dest)
        return dest

    def _fill(self, args: Sequence[str], data: Path) -> list[str]:
        api_base = self._server.base_url if self._server is not None else ""
        return [a.replace("{data}", str(data)).replace("{api_base}", api_base) for a in args]

    def eval_args(self, system: int, data: Path, out: Path, extra: Sequence[str] = ()) -> list[str]:
        """`ragjudge eval` arguments of system `system` on `data`, writing `out`."""
        args = [*self._fill(self.case.args, data), *self._fill(as_args(self.case.systems[system]), data), *extra]
        if self._server is not None and "--api-base" not in args and self._calls_llms():
            args += ["--api-base", self._server.base_url]
        return ["eval", "--bench", self.name, *args, "--out", str(out)]

    def _calls_llms(self) -> bool:
        from ragjudge.bench import registry

        return registry.get(self.name).load().llm != "no"

    def env(self) -> dict[str, str]:
        env = {"RAGJUDGE_CACHE_DIR": str(self.workdir / "cache"), **self.case.env}
        if self._server is not None:
            env.setdefault("OPENAI_API_KEY", "sk-conformance")
        return env

    def cli(self, args: Sequence[str], env: Mapping[str, str] | None = None) -> CliResult:
        return run_cli(args, {**self.env(), **(env or {})})

    def _fresh(self, label: str) -> Path:
        self._seq += 1
        folder = self.workdir / f"{self._seq:03d}-{re.sub(r'[^A-Za-z0-9_.-]+', '_', label)[:60]}"
        folder.mkdir(parents=True)
        return folder

    def clean(self, system: int = 0) -> CleanRun:
        """System `system` run on the data (once; cached): in text format, then rerun with `--format json`."""
        if system in self._clean:
            return self._clean[system]
        out = self.workdir / "runs" / f"system{system}"
        args = self.eval_args(system, self.data, out)
        text = self.cli(args, WIDE)
        if text.code not in (0, 1) or not (out / "summary.json").exists():
            raise ConformanceError(f"{self.name}: the clean run of system {system} failed: {text.shown()}")
        text_summary = _read_json(out / "summary.json")
        text_run_info = _read_json(out / "run.json")
        again = self.cli([*args, "--format", "json"])
        if again.code not in (0, 1):
            raise ConformanceError(f"{self.name}: rerunning system {system} with --format json failed: {again.shown()}")
        run = CleanRun(system, args, out, text, again, text_summary, _read_json(out / "summary.json"),
                       _read_json(out / "run.json"))
        first, then = self._data_inputs(text_run_info), self._data_inputs(run.run_info)
        if first != then:
            run.problems.append(f"a rerun of the finished run lists other data files in run.json `inputs`: "
                                f"{sorted(first)} first, {sorted(then)} then (a file the run depends on, e.g. a "
                                "corpus behind a reused index, must be listed every time)")
        self._clean[system] = run
        return run

    def _data_inputs(self, run_info: Mapping[str, Any]) -> set[str]:
        root = self.data.resolve()
        paths = {Path(str(e.get("path", ""))).resolve() for e in run_info.get("inputs") or [] if isinstance(e, dict)}
        return {p.relative_to(root).as_posix() for p in paths if p.is_relative_to(root)}

    def inputs(self) -> dict[str, int]:
        """Every data file a system read (run.json `inputs` under the data folder), relative path → the first
        system that read it."""
        found: dict[str, int] = {}
        for system in range(len(self.case.systems)):
            for rel in sorted(self._data_inputs(self.clean(system).run_info)):
                found.setdefault(rel, system)
        return found

    # -- 1. the summary contract ------------------------------------------------------------------------

    def check_schema(self) -> CheckReport:
        """summary.json and `--format json` keep the contract; the text output ends with the headline."""
        from ragjudge.engine.summary import SCHEMA_ID, Summary, json_schema

        report = CheckReport("schema", self.name)
        schema = json_schema()
        for system in range(len(self.case.systems)):
            run = self.clean(system)
            where = f"system {system} (`{shlex.join(run.args)}`)"
            problems: list[str] = []
            summary = run.summary
            problems += _validate(summary, Summary, schema, "summary.json")
            if summary.get("schema") != SCHEMA_ID:
                problems.append(f"summary.json: schema is {summary.get('schema')!r}, not {SCHEMA_ID!r}")
            if summary.get("bench") != self.name:
                problems.append(f"summary.json: bench is {summary.get('bench')!r}, not {self.name!r}")
            headline = summary.get("headline") or {}
            metric = (summary.get("metrics") or {}).get(headline.get("metric"))
            if not headline:
                problems.append("summary.json has no headline")
            elif metric is None:
                problems.append(f"the headline names {headline.get('metric')!r}, which is not a metric")
            elif metric.get("value") != headline.get("value"):
                problems.append(f"the headline's value {headline.get('value')} is not its metric's "
                                f"{metric.get('value')}")
            try:
                printed = json.loads(run.json.out)
            except json.JSONDecodeError as exc:
                problems.append(f"--format json printed something that is not JSON ({exc}): {run.json.out[:200]!r}")
            else:
                problems += _validate(printed, Summary, schema, "--format json")
                if _without_time(printed) != _without_time(summary):
                    problems.append("--format json differs from the summary.json it wrote")
            last = run.text.out.rstrip().splitlines()[-1].strip() if run.text.out.strip() else ""
            text_headline = ((run.text_summary or {}).get("headline") or {}).get("text")
            if text_headline is not None and last != text_headline.strip():
                problems.append(f"the text output's last line is {last!r}, not the headline {text_headline!r}")
            if "Traceback" in run.text.err or "Traceback" in run.json.err:
                problems.append("a traceback on stderr")
            if run.text_summary is not None and (diff := self._differences(run.text_summary, summary)):
                problems.append("rerunning a finished run changed its summary: " + "; ".join(diff[:5]))
            problems += self._inputs_problems(run) + run.problems
            if problems:
                report.problems += [f"{where}: {p}" for p in problems]
            else:
                report.passed.append(where)
        return report

    def _inputs_problems(self, run: CleanRun) -> list[str]:
        inputs = run.run_info.get("inputs")
        if not isinstance(inputs, list):
            return ["run.json has no `inputs` list"]
        problems = []
        root = self.data.resolve()
        under = [e for e in inputs if isinstance(e, dict) and Path(str(e.get("path"))).resolve().is_relative_to(root)]
        if not under:
            problems.append(f"run.json `inputs` lists no file under the data folder {root} (read data through "
                            "ragjudge.formats.files, so errors can name the file and runs record what they read)")
        for entry in under:
            path = Path(str(entry["path"]))
            if not path.is_file():
                problems.append(f"run.json input {path} is not a file")
            elif entry.get("sha256") != hashlib.sha256(path.read_bytes()).hexdigest():
                problems.append(f"run.json input {path}: sha256 {entry.get('sha256')} is not the file's")
        return problems

    def _volatile(self, name: str, metric: Mapping[str, Any]) -> bool:
        return metric.get("kind") == "seconds" or any(fnmatch.fnmatchcase(name, p) for p in self.case.volatile)

    def _differences(self, want: dict[str, Any], got: dict[str, Any]) -> list[str]:
        return _differences(want, got, self._volatile, self.case.rel_tol)

    # -- 2. one and several systems ---------------------------------------------------------------------

    def check_systems(self) -> CheckReport:
        """Every system runs (exit 0); at least two are declared, with different options; report shows them all."""
        report = CheckReport("systems", self.name)
        if len(self.case.systems) < 2:
            report.problems.append("declare at least two systems or configurations (e.g. two --gen, --pipeline or "
                                   "-T option sets)")
        runs = []
        for system in range(len(self.case.systems)):
            run = self.clean(system)
            runs.append(run)
            if run.text.code != 0:
                report.problems.append(f"system {system}: {run.text.shown()}")
            else:
                report.passed.append(f"system {system}")
        options = [json.dumps((r.summary.get("run") or {}).get("options"), sort_keys=True) for r in runs]
        if len(set(options)) < len(options):
            report.problems.append("two systems ran with the same options: they are one configuration")
        if len(runs) > 1:
            html = self._fresh("report-systems") / "report.html"
            done = self.cli(["report", *[str(r.out) for r in runs], "--out", str(html)])
            if done.code != 0 or not _is_html(html):
                report.problems.append(f"report of every system together: {done.shown()}")
            else:
                report.passed.append("report of every system together")
        return report

    # -- 3. resume ----------------------------------------------------------------------------------------

    def check_resume(self) -> CheckReport:
        """A run stopped part-way and rerun gives the clean run's figures, reusing what it had finished."""
        report = CheckReport(f"resume ({self.case.resume})", self.name)
        clean = self.clean(0)
        if self.case.resume == "kill":
            self._resume_after_kill(clean, report)
            return report
        journaled = False
        for stage, keep in (("solving", "predictions.jsonl"), ("scoring", "judgements.jsonl")):
            records = _journal_records(clean.out / keep)
            journaled = journaled or bool(records)
            if len(records) < 2:
                continue
            folder = self._fresh(f"resume-{stage}") / "run"
            folder.mkdir()
            if stage == "scoring" and (clean.out / "predictions.jsonl").exists():
                shutil.copy2(clean.out / "predictions.jsonl", folder / "predictions.jsonl")
            _write_prefix(clean.out / keep, folder / keep, len(records) // 2)
            self._rerun_and_compare(clean, folder, f"stopped while {stage}", report)
        if not journaled:  # the bench journals nothing (its outputs are on disk already): a kill loses only the lock
            folder = self._fresh("resume-nothing-journaled") / "run"
            folder.mkdir()
            (folder / ".ragjudge.lock").write_text("0")
            self._rerun_and_compare(clean, folder, "stopped before anything was journaled (the bench journals "
                                    "nothing)", report)
        return report

    def _rerun_and_compare(self, clean: CleanRun, folder: Path, label: str, report: CheckReport,
                           env: Mapping[str, str] | None = None) -> None:
        done = self.cli(self.eval_args(0, self.data, folder, ["--format", "json"]), env)
        if done.code != clean.text.code:
            report.problems.append(f"{label}, rerun: {done.shown()} (the clean run exited {clean.text.code})")
            return
        summary = _read_json(folder / "summary.json")
        if diff := self._differences(clean.summary, summary):
            report.problems.append(f"{label}: the resumed run's figures differ from a clean run's: "
                                   + "; ".join(diff[:8]))
            return
        for journal in ("predictions.jsonl", "judgements.jsonl"):
            want = _journal_keys(clean.out / journal)
            got = _journal_keys(folder / journal)
            if sorted(got) != sorted(want):
                dup = len(got) - len(set(got))
                report.problems.append(f"{label}: {journal} after resuming holds {len(got)} records ({dup} "
                                       f"repeated), a clean run {len(want)}: finished work was not reused")
                return
        report.passed.append(label)

    def _resume_after_kill(self, clean: CleanRun, report: CheckReport) -> None:
        place = self._fresh("resume-kill")
        folder = place / "run"
        args = self.eval_args(0, self.data, folder)
        cache = {"RAGJUDGE_CACHE_DIR": str(place / "cache")}  # not the clean run's: its answers would come at once
        env = {**os.environ, **OFFLINE_ENV, **self.env(), **cache}
        env["PYTHONPATH"] = os.pathsep.join(self._import_path())
        with (place / "stderr.txt").open("w") as stderr:
            proc = subprocess.Popen([sys.executable, "-m", "ragjudge", *args], stdout=subprocess.DEVNULL,
                                    stderr=stderr, env=env)
        try:
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline and proc.poll() is None:
                if sum(len(_journal_records(folder / j)) for j in ("predictions.jsonl", "judgements.jsonl")) >= \
                        self.case.kill_after:
                    proc.send_signal(signal.SIGKILL)
                    break
                time.sleep(0.02)
            proc.wait(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        if proc.returncode != -signal.SIGKILL:
            err = (place / "stderr.txt").read_text(errors="replace").strip()[-600:]
            report.problems.append(f"the run ended (exit {proc.returncode}) before {self.case.kill_after} records "
                                   f"were journaled and it could be killed (use resume='truncate' for a fast bench); "
                                   f"`{shlex.join(['ragjudge', *args])}` stderr: {err or '(empty)'}")
            return
        if (folder / "summary.json").exists():
            report.problems.append("a killed run left a summary.json")
        self._rerun_and_compare(clean, folder, "killed", report, cache)

    # -- 4. bad data --------------------------------------------------------------------------------------

    def check_data_faults(self, kinds: Sequence[FaultKind] = FAULT_KINDS) -> CheckReport:
        report = CheckReport("data faults", self.name)
        for kind in kinds:
            report.merge(self.check_data_fault(kind))
        return report

    def check_data_fault(self, kind: FaultKind) -> CheckReport:
        """Every data file the bench read, spoilt as `kind`: exit 2, one line naming it, nothing written."""
        if kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {kind!r} (one of {', '.join(FAULT_KINDS)})")
        report = CheckReport(f"data fault: {kind}", self.name)
        inputs = self.inputs()
        if not inputs:
            report.problems.append("no data file under the data folder was recorded as read (run.json `inputs`)")
        for rel, system in inputs.items():
            folder = self._fresh(f"{kind}-{rel}")
            data = shutil.copytree(self.data, folder / "data")
            target = data / rel
            override = self.case.field_faults.get(rel, {}).get(kind)
            if isinstance(override, str):
                report.skipped.append(f"{rel}: {override}")
                continue
            try:
                expected = _spoil(target, kind, override)
            except _NotApplicable as why:
                report.skipped.append(f"{rel}: {why}")
                continue
            out = folder / "out"
            done = self.cli(self.eval_args(system, data, out))
            problems = _one_line_error(done, [target, *expected.lines], expected.names)
            problems += _nothing_written(out)
            if problems:
                report.problems.append(f"{rel} ({expected.what}): " + "; ".join(problems) + f" — {done.shown()}")
            else:
                report.passed.append(f"{rel} ({expected.what}): {done.err_lines[0]}")
        return report

    # -- 5. option ranges ---------------------------------------------------------------------------------

    def check_option_ranges(self) -> CheckReport:
        """Each numeric option with a range, given a value outside it, says the range."""
        from ragjudge.bench import registry

        report = CheckReport("option ranges", self.name)
        options = registry.get(self.name).load().Options
        for key, value, range_text in option_range_faults(options):
            args = self.eval_args(0, self.data, self._fresh(f"option-{key}") / "out")
            args = _without_option(args, key)
            args[-2:-2] = ["-T", f"{key}={value}"]
            done = self.cli(args)
            problems = _one_line_error(done, [], ())
            if range_text not in done.err:
                problems.append(f"the message does not state the range {range_text!r}")
            label = f"-T {key}={value}"
            if problems:
                report.problems.append(f"{label}: " + "; ".join(problems) + f" — {done.shown()}")
            else:
                report.passed.append(f"{label}: {done.err_lines[0]}")
        if not report.passed and not report.problems:
            report.skipped.append(f"no numeric option with a range (options: {', '.join(options.model_fields)})")
        return report

    # -- 6. the results files feed the other commands --------------------------------------------------------

    def check_downstream(self) -> CheckReport:
        """Every command that applies: report, retrieval-eval (run files written), export and correlate (judged)."""
        report = self.check_report()
        if self.retrieval_runs():
            report.merge(self.check_retrieval_eval())
        if self.case.judged:
            report.merge(self.check_export()).merge(self.check_correlate())
        return report

    def check_report(self) -> CheckReport:
        report = CheckReport("report", self.name)
        clean = self.clean(0)
        html = self._fresh("report") / "report.html"
        done = self.cli(["report", str(clean.out), "--out", str(html)])
        if done.code != 0 or not _is_html(html):
            report.problems.append(f"report of the clean run: {done.shown()}")
        else:
            report.passed.append("report")
        self._mistyped(clean.out / "results.jsonl", report, lambda run, path: [
            "report", str(run), "--out", str(path.parent / "report.html")], folder=True)
        return report

    def retrieval_runs(self) -> list[tuple[Path, Path]]:
        """(run file, qrels) pairs `retrieval-eval` is checked on: declared, or the bench's run*.trec + qrels.trec."""
        out = self.clean(0).out
        if self.case.retrieval is not None:
            return [(out / run, Path(self._fill([qrels], self.data)[0])) for run, qrels in self.case.retrieval]
        qrels = out / "qrels.trec"
        return [(run, qrels) for run in sorted(out.glob("run*.trec"))] if qrels.exists() else []

    def check_retrieval_eval(self) -> CheckReport:
        from ragjudge.engine.summary import Summary, json_schema

        report = CheckReport("retrieval-eval", self.name)
        pairs = self.retrieval_runs()
        if not pairs:
            report.skipped.append("the bench writes no run file (run*.trec with qrels.trec) and the case declares none")
        for run, qrels in pairs:
            if not run.exists():
                report.problems.append(f"{run.name}: the declared run file was not written")
                continue
            done = self.cli(["retrieval-eval", str(run), "--qrels", str(qrels), "--format", "json"])
            problems = [] if done.code == 0 else [done.shown()]
            if done.code == 0:
                try:
                    problems += _validate(json.loads(done.out), Summary, json_schema(), "its --format json")
                except json.JSONDecodeError:
                    problems.append(f"--format json printed no JSON: {done.out[:200]!r}")
            if problems:
                report.problems.append(f"retrieval-eval {run.name}: " + "; ".join(problems))
            else:
                report.passed.append(f"retrieval-eval {run.name}")
            self._mistyped(run, report, lambda _, path, qrels=qrels: [
                "retrieval-eval", str(path), "--qrels", str(qrels), "--format", "json"])
        return report

    def check_export(self) -> CheckReport:
        report = CheckReport("export", self.name)
        clean = self.clean(0)
        target = self._fresh("export") / "export.json"
        done = self.cli(["export", str(clean.out), "--out", str(target)])
        if done.code != 0 or not target.exists():
            report.problems.append(f"export of the clean run: {done.shown()}")
        else:
            report.passed.append("export")
        self._mistyped(clean.out / "results.jsonl", report, lambda run, path: [
            "export", str(run), "--out", str(path.parent / "export.json")], folder=True)
        return report

    def check_correlate(self) -> CheckReport:
        """correlate against ratings the kit makes up from the exported tasks: the plumbing, not the figures."""
        report = CheckReport("correlate", self.name)
        clean = self.clean(0)
        folder = self._fresh("correlate")
        exported = folder / "export.json"
        done = self.cli(["export", str(clean.out), "--out", str(exported)])
        if done.code != 0:
            report.problems.append(f"export (needed to make the ratings): {done.shown()}")
            return report
        humans, model = _made_up_ratings(_read_json(exported))
        (folder / "humans.json").write_text(json.dumps(humans))
        common = ["--bootstrap", "0", "--format", "json"]
        done = self.cli(["correlate", str(folder / "humans.json"), "--judges", f"{model}={clean.out}", *common])
        if done.code != 0:
            report.problems.append(f"correlate: {done.shown()}")
        else:
            report.passed.append("correlate")
        self._mistyped(clean.out / "results.jsonl", report, lambda run, path: [
            "correlate", str(folder / "humans.json"), "--judges", f"{model}={run}", *common], folder=True)
        return report

    def _mistyped(self, results: Path, report: CheckReport, command: Callable[[Path, Path], list[str]], *,
                  folder: bool = False) -> None:
        """Each candidate field of one results line replaced by a string: exit 2 naming file:line and field."""
        if not results.exists():
            report.problems.append(f"{results.name} was not written")
            return
        try:
            faults = list(_mistyped_fields(results))
        except _NotApplicable as why:
            report.skipped.append(f"mistyped field in {results.name}: {why}")
            return
        for line, key, text in faults:
            place = self._fresh(f"mistyped-{report.check}-{key}")
            if folder:  # the whole run folder (report and export read run.json beside the results)
                run = place / "run"
                shutil.copytree(results.parent, run)
                path = run / results.name
            else:
                path = place / results.name
                run = path
            lines = results.read_text(encoding="utf-8").splitlines(keepends=True)
            lines[line - 1] = text
            path.write_text("".join(lines), encoding="utf-8")
            done = self.cli(command(run, path))
            problems = _one_line_error(done, [f"{path}:{line}"], (key,) if key else ())
            label = f"{report.check}: {results.name} line {line} {'field ' + repr(key) if key else ''} mistyped"
            if problems:
                report.problems.append(f"{label}: " + "; ".join(problems) + f" — {done.shown()}")
            else:
                report.passed.append(f"{label}: {done.err_lines[0]}")

    # -- everything -------------------------------------------------------------------------------------------

    def check_all(self, skip: Mapping[str, str] | None = None) -> list[CheckReport]:
        """Every check; `skip` maps a check name (schema, systems, resume, data faults, option ranges, downstream)
        to why it does not apply. Raises AssertionError listing every problem of every check."""
        skip = dict(skip or {})
        checks: dict[str, Callable[[], CheckReport]] = {
            "schema": self.check_schema, "systems": self.check_systems, "resume": self.check_resume,
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
    """Every check on `bench` in one call (see the module docstring); raises AssertionError listing every problem.
    `options` are bench options every system shares; `case` holds any other BenchCase field (args, env, server,
    judged, retrieval, field_faults...)."""
    args = (*case.pop("args", ("--data", "{data}")), *as_args(options or {}))
    with Conformance(BenchCase(bench, data=Path(data), systems=systems, args=args, **case), tmp_path) as kit:
        return kit.check_all(skip)


# ------------------------------------------------------------------------------------------- helpers

def as_args(system: Sequence[str] | Mapping[str, Any]) -> list[str]:
    """A system as `ragjudge eval` arguments: a list as it is; options {name: value} as the common flag of each
    option that has one (`--gen`), else `-T name=value` (lists comma-separated, booleans true/false)."""
    if not isinstance(system, Mapping):
        return list(system)
    from ragjudge.bench.options import COMMON_FLAGS

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


def _read_json(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ConformanceError(f"{path}: cannot be read as JSON ({exc})") from None


def _validate(data: Any, model: Any, schema: dict[str, Any], where: str) -> list[str]:
    import jsonschema
    from pydantic import ValidationError

    problems = []
    try:
        model.model_validate(data)
    except ValidationError as exc:
        problems.append(f"{where} does not validate against the Summary model: {str(exc).splitlines()[:3]}")
    try:
        jsonschema.validate(data, schema)
    except jsonschema.ValidationError as exc:
        problems.append(f"{where} does not validate against the JSON Schema: {exc.message[:300]} at "
                        f"{'/'.join(str(p) for p in exc.absolute_path)}")
    return problems


def _without_time(summary: dict[str, Any]) -> dict[str, Any]:
    out = dict(summary)
    if isinstance(out.get("run"), dict):
        out["run"] = {k: v for k, v in out["run"].items() if k != "seconds"}
    return out


def _differences(want: dict[str, Any], got: dict[str, Any], volatile: Callable[[str, Mapping[str, Any]], bool],
                 rel_tol: float = 0.0) -> list[str]:
    """Where two summaries of the same run differ: samples, errors, every metric's figures and every breakdown
    group's (volatile metrics aside), the headline."""

    def same(a: Any, b: Any) -> bool:
        if rel_tol and isinstance(a, float) and isinstance(b, float):
            return math.isclose(a, b, rel_tol=rel_tol, abs_tol=rel_tol * 1e-2)
        if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b):
            return all(same(x, y) for x, y in zip(a, b))
        if isinstance(a, dict) and isinstance(b, dict) and set(a) == set(b):
            return all(same(a[k], b[k]) for k in a)
        return a == b

    diffs = []
    for key in ("n_samples", "n_errors"):
        if want.get(key) != got.get(key):
            diffs.append(f"{key} {want.get(key)} → {got.get(key)}")
    metrics_want, metrics_got = want.get("metrics") or {}, got.get("metrics") or {}
    if set(metrics_want) != set(metrics_got):
        diffs.append(f"metrics {sorted(set(metrics_want) ^ set(metrics_got))} only in one")
    kept = {name for name, m in metrics_want.items() if not volatile(name, m)}
    for name in sorted(kept & set(metrics_got)):
        a, b = metrics_want[name], metrics_got[name]
        for part in ("value", "n", "errors", "std", "ci"):
            if not same(a.get(part), b.get(part)):
                diffs.append(f"{name}.{part} {a.get(part)} → {b.get(part)}")
    for key, breakdown in (want.get("breakdowns") or {}).items():
        other = (got.get("breakdowns") or {}).get(key)
        if other is None:
            diffs.append(f"breakdown {key} missing")
            continue
        groups_a, groups_b = breakdown.get("groups") or {}, other.get("groups") or {}
        if set(groups_a) != set(groups_b):
            diffs.append(f"breakdown {key}: groups {sorted(set(groups_a) ^ set(groups_b))} only in one")
            continue
        for group, stats in groups_a.items():
            for name, stat in (stats.get("metrics") or {}).items():
                if name in kept and not same(stat, (groups_b[group].get("metrics") or {}).get(name)):
                    diffs.append(f"breakdown {key}/{group}/{name} {stat} → "
                                 f"{(groups_b[group].get('metrics') or {}).get(name)}")
    head_a, head_b = want.get("headline") or {}, got.get("headline") or {}
    if head_a.get("metric") in kept and not same(head_a.get("value"), head_b.get("value")):
        diffs.append(f"headline {head_a.get('text')!r} → {head_b.get('text')!r}")
    return diffs


def _journal_records(path: Path) -> list[bytes]:
    """The complete lines of a journal (a torn last line left out)."""
    if not path.is_file():
        return []
    data = path.read_bytes()
    lines = data.split(b"\n")
    return [line for line in lines[:-1] if line.strip()]


def _journal_keys(path: Path) -> list[tuple[str, str]]:
    """(stage, sample) of each finished record (failures are retried on resume, so they may repeat)."""
    keys = []
    for line in _journal_records(path):
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        value = record.get("value")
        if isinstance(value, dict) and not value.get("error"):
            keys.append((str(record.get("stage")), str(record.get("key"))))
    return keys


def _write_prefix(journal: Path, dest: Path, keep: int) -> None:
    """The first `keep` records of `journal` and half of the next: what a kill mid-write leaves."""
    records = _journal_records(journal)
    torn = records[keep][: max(1, len(records[keep]) // 2)] if keep < len(records) else b""
    dest.write_bytes(b"".join(r + b"\n" for r in records[:keep]) + torn)


def _one_line_error(done: CliResult, names: Sequence[Path | str | re.Pattern[str]], fields: Sequence[str]
                    ) -> list[str]:
    """Exit 2, one `error:` line on stderr and no traceback, naming each of `names` (a Path: as given, or resolved;
    a pattern: matching) and each of `fields`."""
    problems = []
    if done.code != 2:
        problems.append(f"exit {done.code}, not 2")
    lines = done.err_lines
    if "Traceback" in done.err:
        problems.append("a traceback")
    if len(lines) != 1:
        problems.append(f"{len(lines)} lines on stderr, not one")
    message = "\n".join(lines)
    if lines and not lines[0].startswith("error: "):
        problems.append("the line does not start with 'error: '")
    for name in names:
        if isinstance(name, re.Pattern):
            if not name.search(message):
                problems.append(f"it does not name {name.pattern} (with the line)")
            continue
        spellings = {str(name)} if not isinstance(name, Path) else {str(name), str(name.resolve())}
        if not any(s in message for s in spellings):
            problems.append(f"it does not name {name}")
    for key in fields:
        if key not in message:
            problems.append(f"it does not name the field {key!r}")
    return problems


def _nothing_written(out: Path) -> list[str]:
    if not out.exists():
        return []
    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()
                     and p.relative_to(out).as_posix() not in LEFT_AFTER_FAILURE)
    return [f"it wrote {', '.join(written)} to the output folder"] if written else []


def _is_html(path: Path) -> bool:
    try:
        head = path.read_text(encoding="utf-8", errors="replace")[:2000].lower()
    except OSError:
        return False
    return "<html" in head or "<!doctype html" in head


# -- spoiling a data file --------------------------------------------------------------------------------------

class _NotApplicable(Exception):
    """This fault cannot be made in this file (the reason is recorded as a skip)."""


@dataclass
class _Expected:
    what: str
    lines: list[str | re.Pattern[str]] = field(default_factory=list)
    """What the error must contain: `file:line` (text, or a pattern when the line is the reader's to say)."""
    names: tuple[str, ...] = ()
    """Fields the error must name."""


def _document(path: Path) -> tuple[str, Any]:
    """("jsonl", records with their line numbers) or ("json", the document); _NotApplicable otherwise."""
    try:
        text = path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError) as exc:
        raise _NotApplicable(f"not UTF-8 text ({exc.__class__.__name__})") from None
    if path.suffix.lower() != ".jsonl":
        try:
            return "json", json.loads(text)
        except json.JSONDecodeError:
            pass
    records = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                records.append((number, json.loads(line)))
            except json.JSONDecodeError:
                raise _NotApplicable("not JSON or JSON Lines: field faults apply to JSON and JSON Lines files "
                                     "only") from None
    if not records:
        raise _NotApplicable("no record")
    return "jsonl", records


def _spoil(path: Path, kind: FaultKind, override: FieldFault | None) -> _Expected:
    if kind == "empty":
        path.write_bytes(b"")
        return _Expected("empty")
    if kind == "folder":
        path.unlink()
        path.mkdir()
        return _Expected("a folder")
    data = path.read_bytes()
    if kind == "not_utf8":
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            raise _NotApplicable("a binary file (not UTF-8 to begin with)") from None
        quote = re.search(rb'"[A-Za-z]', data) or re.search(rb"[A-Za-z]", data)
        if quote is None:
            raise _NotApplicable("no text to put a Latin-1 byte in")
        at = quote.start() + (1 if data[quote.start():quote.start() + 1] == b'"' else 0)
        path.write_bytes(data[:at] + b"\xe9" + data[at:])  # é in Latin-1
        line = data.count(b"\n", 0, at) + 1
        return _Expected(f"byte 0xe9 on line {line}", [f"{path}:{line}"])
    if kind == "truncated":
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            raise _NotApplicable("a binary file") from None
        lines = data.splitlines(keepends=True)
        candidates = [i for i, line in enumerate(lines) if len(line.strip()) >= 2]
        if not candidates:
            raise _NotApplicable("no line long enough to cut")
        index = candidates[len(candidates) // 2]
        start = sum(len(line) for line in lines[:index])
        body = lines[index].rstrip(b"\r\n")
        path.write_bytes(data[: start + max(1, len(body) // 2)])
        if path.suffix.lower() == ".json" and _is_json(data):  # a JSON parser locates the end of the document
            return _Expected(f"cut in the middle of line {index + 1}", [re.compile(re.escape(str(path)) + r":\d+")])
        return _Expected(f"cut in the middle of line {index + 1}", [f"{path}:{index + 1}"])
    # wrong_type / out_of_range: a field of the first record
    fmt, doc = _document(path)
    if override is not None:
        where, value, names = override.path, override.value, override.names
    else:
        first = doc[0][1] if fmt == "jsonl" else doc
        prefix: tuple[str | int, ...] = (0,) if fmt == "jsonl" else ()
        if kind == "wrong_type":
            where, old = _first_field(first, prefix)
            value = _wrong_type(old)
        else:
            found = _first_number(first, prefix)
            if found is None:
                raise _NotApplicable("no number in the first record (out_of_range needs one: give a FieldFault "
                                     "for another field)")
            where, old = found
            value = -1 if isinstance(old, int) else -1.5
        names = ""
    key = names or next((str(p) for p in reversed(where) if isinstance(p, str)), "")
    if fmt == "jsonl":
        records = [r for _, r in doc]
        _set(records, where, value)
        number = doc[where[0]][0]  # type: ignore[index]
        text_lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        text_lines[number - 1] = json.dumps(records[where[0]], ensure_ascii=False) + "\n"  # type: ignore[index]
        path.write_text("".join(text_lines), encoding="utf-8")
        lines = [f"{path}:{number}"]
    else:
        _set(doc, where, value)
        pretty = b"\n" in data.strip()
        path.write_text(json.dumps(doc, ensure_ascii=False, indent=2 if pretty else None), encoding="utf-8")
        lines = []
    shown = "/".join(str(p) for p in where)
    return _Expected(f"{kind} at {shown}: {json.dumps(value)}", lines, (key,) if key else ())


def _is_json(data: bytes) -> bool:
    try:
        json.loads(data)
        return True
    except (json.JSONDecodeError, UnicodeDecodeError):
        return False


def _first_field(record: Any, prefix: tuple[str | int, ...]) -> tuple[tuple[str | int, ...], Any]:
    """The first field with a value: a record's first key, a list's first item, a map of records' first record's."""
    if isinstance(record, dict):
        if not prefix and record and all(isinstance(v, dict) and v for v in record.values()):
            key = next(iter(record))  # a map of records (id → record): its first record's first field
            return _first_field(record[key], (key,))
        for key, value in record.items():
            if value is not None:
                return (*prefix, key), value
        raise _NotApplicable("the first record has no field with a value")
    if isinstance(record, list):
        if not record:
            raise _NotApplicable("the first record is an empty list")
        if isinstance(record[0], dict) and not prefix:
            return _first_field(record[0], (*prefix, 0))
        return (*prefix, 0), record[0]
    raise _NotApplicable("the document is a single value")


def _first_number(record: Any, prefix: tuple[str | int, ...], depth: int = 0
                  ) -> tuple[tuple[str | int, ...], Any] | None:
    if depth > 4:
        return None
    items: list[tuple[str | int, Any]] = list(record.items()) if isinstance(record, dict) else \
        list(enumerate(record)) if isinstance(record, list) else []
    for key, value in items:  # this level first, then nested records
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return (*prefix, key), value
    for key, value in items:
        if isinstance(value, (dict, list)):
            found = _first_number(value, (*prefix, key), depth + 1)
            if found is not None:
                return found
    return None


def _wrong_type(value: Any) -> Any:
    """A value of another JSON type than `value`'s, one no lenient reader turns back into the right one."""
    if isinstance(value, bool):
        return "not a boolean"
    if isinstance(value, (int, float)):
        return "not a number"
    if isinstance(value, str):
        return {"not": "a string"}
    if isinstance(value, list):
        return "not a list"
    return "not an object"


def _set(doc: Any, path: tuple[str | int, ...], value: Any) -> None:
    target = doc
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value


def _mistyped_fields(results: Path) -> Iterator[tuple[int, str, str]]:
    """(line, field, new line text) for one results line's fields replaced by a string: its objects (e.g.
    `metrics`), else its lists, else its numbers and booleans. JSON Lines; TREC runs: the rank and score."""
    text = results.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    numbered = [(i + 1, line) for i, line in enumerate(lines) if line.strip()]
    if not numbered:
        raise _NotApplicable("the file is empty")
    number, line = numbered[1] if len(numbered) > 1 else numbered[0]
    try:
        record = json.loads(line)
    except json.JSONDecodeError:
        columns = line.split()
        if len(columns) == 6:  # a TREC run line: qid Q0 docid rank score tag
            for index, name in ((3, "rank"), (4, "score")):
                changed = list(columns)
                changed[index] = "high"
                yield number, name, " ".join(changed) + "\n"
            return
        raise _NotApplicable("neither JSON Lines nor a TREC run") from None
    if not isinstance(record, dict):
        raise _NotApplicable("its lines are not JSON objects")
    for kinds in ((dict,), (list,), (int, float, bool)):
        keys = [k for k, v in record.items() if isinstance(v, kinds)]
        if keys:
            for key in keys:
                yield number, key, json.dumps({**record, key: "high"}, ensure_ascii=False) + "\n"
            return
    raise _NotApplicable("no field but text")


def _made_up_ratings(exported: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """An InspectorRAGet file with the exported tasks and one human metric, rated 1-4 by two made-up annotators."""
    evaluations = exported.get("evaluations") or []
    models = [m.get("model_id") for m in exported.get("models") or []]
    model = str(models[0] if models else (evaluations[0].get("model_id") if evaluations else "model"))
    for i, ev in enumerate(evaluations):
        ev["annotations"] = {"kit_rating": {"a1": {"value": 1 + i % 4}, "a2": {"value": 1 + (i * 3 + 1) % 4}}}
    humans = {**exported, "metrics": [{"name": "kit_rating", "display_name": "kit_rating", "author": "human",
                                       "type": "numerical", "aggregator": "average", "range": [1, 4, 1]}],
              "evaluations": evaluations}
    return humans, model


# -- option ranges ----------------------------------------------------------------------------------------------

def _strip_optional(annotation: Any) -> Any:
    if get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return annotation


def _numeric_members(annotation: Any, metadata: Sequence[Any]) -> Iterator[tuple[type, list[Any], bool]]:
    """(int or float, bound metadata, is a list item) for each numeric part of an option's type."""
    annotation = _strip_optional(annotation)
    origin = get_origin(annotation)
    if annotation in (int, float):
        yield annotation, list(metadata), False
    elif origin is typing.Annotated:
        base, *meta = get_args(annotation)
        flat = [m for item in meta for m in (getattr(item, "metadata", None) or [item])]
        for kind, bounds, _ in _numeric_members(base, [*metadata, *flat]):
            yield kind, bounds, False
    elif origin in (Union, types.UnionType):
        for member in get_args(annotation):
            yield from _numeric_members(member, metadata)
    elif origin in (list, tuple):
        items = [a for a in get_args(annotation) if a is not Ellipsis]
        if items:
            for kind, bounds, _ in _numeric_members(items[0], []):
                yield kind, bounds, True


def option_range_faults(options: type[Any]) -> list[tuple[str, str, str]]:
    """(option, a value just outside its range, the range as the CLI states it) for each bound of each numeric
    option of a bench's Options model (list items included): what `check_option_ranges` tries."""
    return [(key, value, text) for key, info in options.model_fields.items()
            for value, text in _out_of_range_values(info)]


def _out_of_range_values(info: Any) -> Iterator[tuple[str, str]]:
    """(value just outside the range, the range as the CLI states it) for each bound of a numeric option."""
    from ragjudge.bench.options import _bounds, _range

    for kind, metadata, _ in _numeric_members(info.annotation, info.metadata):
        bounds = _bounds(metadata)
        if not bounds:
            continue
        text = _range(bounds).strip()
        step = 1 if kind is int else 0.5
        for name, bound in bounds.items():
            value = {"ge": bound - step, "gt": bound, "le": bound + step, "lt": bound}[name]
            yield (str(int(value)) if kind is int else repr(float(value))), text


def _without_option(args: list[str], key: str) -> list[str]:
    """`args` without `-T key=...` and without the common flag that fills `key`."""
    from ragjudge.bench.options import COMMON_FLAGS

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

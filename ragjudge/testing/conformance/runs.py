"""The kit's base: a BenchCase's data copied, its bench registered and its LLM server started for the kit's
lifetime, `ragjudge` run on it, and each system's clean run made once and shared by every check (the bench instance
watched while it runs: what `check_state` reads)."""

from __future__ import annotations

import contextlib
import fnmatch
import re
import shlex
import shutil
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from ragjudge.testing.conformance.case import BenchCase, ConformanceError, as_args
from ragjudge.testing.conformance.cli import WIDE, CliResult, run_cli
from ragjudge.testing.conformance.summaries import differences, read_output_json

if TYPE_CHECKING:
    from ragjudge.engine.bench import Bench
    from ragjudge.testing.openai_server import OpenAIServer


def attributes(obj: object) -> dict[str, tuple[int, ...]]:
    """Each instance attribute: the identity of its value and, for a dict, list or set, of what it holds (an
    attribute set, rebound, deleted or a container filled in place is a change)."""
    out = {}
    for name, value in vars(obj).items():
        inner: tuple[Any, ...] = ()
        if isinstance(value, dict):
            inner = (*map(id, value), *map(id, value.values()))
        elif isinstance(value, (list, set)):
            inner = tuple(map(id, value))
        out[name] = (id(value), len(inner), *inner)
    return out


def changes(before: dict[str, tuple[int, ...]], after: dict[str, tuple[int, ...]]) -> list[str]:
    """The attributes a run set, replaced, filled or deleted, as `self.NAME (how)`."""
    found = [f"self.{n} (set)" for n in after if n not in before]
    found += [f"self.{n} (deleted)" for n in before if n not in after]
    found += [f"self.{n} ({'filled or emptied' if before[n][0] == after[n][0] else 'replaced'})"
              for n in before if n in after and before[n] != after[n]]
    return found


@contextlib.contextmanager
def watching_runs() -> Iterator[list[list[str]]]:
    """While open, every engine run in this process is watched: one list of changes per run."""
    from ragjudge.engine import runner

    seen: list[list[str]] = []
    engine_run = runner.run

    def watched(bench: Any, *args: Any, **kwargs: Any) -> Any:
        before = attributes(bench)
        try:
            return engine_run(bench, *args, **kwargs)
        finally:
            seen.append(changes(before, attributes(bench)))

    runner.run = watched  # type: ignore[assignment]
    try:
        yield seen
    finally:
        runner.run = engine_run  # type: ignore[assignment]


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
    state: list[list[str]] = field(default_factory=list)
    """Per engine run of the text invocation: the bench instance's attributes it changed (read by check_state)."""

    @property
    def where(self) -> str:
        return f"system {self.system} (`{shlex.join(self.args)}`)"


class BenchRuns:
    """Runs one `BenchCase` under `workdir`: a context manager (it may register the bench and start a local LLM
    server); clean runs are made once and shared."""

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

    def __enter__(self) -> Self:
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
        from ragjudge.engine import registry

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
        source = Path(self.case.data)
        if not source.is_dir():
            raise ValueError(f"{source}: the case's data must be a folder")
        shutil.rmtree(dest, ignore_errors=True)
        return shutil.copytree(source, dest)

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
        from ragjudge.engine import registry

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

    # -- the clean runs ---------------------------------------------------------------------------------

    def clean(self, system: int = 0) -> CleanRun:
        """System `system` run on the data (once; cached): in text format, then rerun with `--format json`."""
        if system in self._clean:
            return self._clean[system]
        out = self.workdir / "runs" / f"system{system}"
        args = self.eval_args(system, self.data, out)
        with watching_runs() as state:
            text = self.cli(args, WIDE)
        if text.code not in (0, 1) or not (out / "summary.json").exists():
            raise ConformanceError(f"{self.name}: the clean run of system {system} failed: {text.shown()}")
        text_summary = read_output_json(out / "summary.json")
        text_run_info = read_output_json(out / "run.json")
        again = self.cli([*args, "--format", "json"])
        if again.code not in (0, 1):
            raise ConformanceError(f"{self.name}: rerunning system {system} with --format json failed: {again.shown()}")
        run = CleanRun(system, args, out, text, again, text_summary, read_output_json(out / "summary.json"),
                       read_output_json(out / "run.json"), state=state)
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

    def _volatile(self, name: str, metric: Mapping[str, Any]) -> bool:
        return metric.get("kind") == "seconds" or any(fnmatch.fnmatchcase(name, p) for p in self.case.volatile)

    def _differences(self, want: dict[str, Any], got: dict[str, Any]) -> list[str]:
        """Where two summaries of the same run differ (this case's volatile metrics aside, within its rel_tol)."""
        return differences(want, got, self._volatile, self.case.rel_tol)

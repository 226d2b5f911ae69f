"""The pytest hooks and the `rag_judge` fixture. Nothing heavy happens unless a test uses the fixture, so
installing ragjudge costs other test suites nothing.

PYTEST_DONT_REWRITE
"""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ragjudge.errors import RagjudgeError
from ragjudge.pytest_plugin.config import RECALL, Settings, add_options, settings_from
from ragjudge.pytest_plugin.dataset import MARKER_HELP, parametrize_from_marker

if TYPE_CHECKING:
    from ragjudge.pytest_plugin.evaluator import Evaluator
    from ragjudge.pytest_plugin.report import Recorder
    from ragjudge.pytest_plugin.result import RagJudge


class SessionState:
    """The session's settings, evaluations and (lazily) its evaluator; registered as a plugin object so
    that its hooks see this session's state and nothing else."""

    def __init__(self, settings: Settings, recorder: Recorder):
        self.settings = settings
        self.recorder = recorder
        self.report: dict[str, Any] | None = None
        self.report_file: Path | None = None
        self.worker_reports: list[dict[str, Any]] = []
        """pytest-xdist (controller): the reports its workers sent."""
        self._evaluator: Evaluator | None = None

    @property
    def evaluator(self) -> Evaluator:
        if self._evaluator is None:
            from ragjudge.pytest_plugin.evaluator import Evaluator

            self._evaluator = Evaluator(self.settings)
        return self._evaluator

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """Fail before running anything if a configured judge model cannot be served."""
        if self.settings.judge_models and not self.settings.offline:
            try:
                self.evaluator.validate_models()
            except RagjudgeError as exc:
                raise pytest.UsageError(f"ragjudge: {exc}") from None

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.recorder.record_outcome(report)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """Build the report; a pytest-xdist worker hands it to the controller, which writes the one file."""
        from ragjudge.pytest_plugin.report import build_report, merge_reports, write_report

        usage = self._evaluator.usage if self._evaluator is not None else {"requests_sent": 0, "calls": 0,
                                                                           "cached": 0, "by_model": {}}
        own = build_report(self.recorder, self.settings, usage)
        worker_output = getattr(session.config, "workeroutput", None)
        if worker_output is not None:  # a worker: its controller reports for the whole session
            worker_output["ragjudge_report"] = own
            return
        reports = self.worker_reports if self.distributed(session.config) else [own]
        if not any(r["evaluations"] for r in reports) and self.settings.report is None:
            return
        self.report = merge_reports(reports) if reports else own
        if self.settings.report is not None:
            self.report_file = self.settings.report
            write_report(self.report_file, self.report)

    @pytest.hookimpl(optionalhook=True)  # an xdist hook: unknown, and never called, without pytest-xdist
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """pytest-xdist (controller): a worker finished and sent its report."""
        report = getattr(node, "workeroutput", {}).get("ragjudge_report")
        if report is not None:
            self.worker_reports.append(report)

    @staticmethod
    def distributed(config: pytest.Config) -> bool:
        """This process is a pytest-xdist controller: the tests ran in workers."""
        return bool(getattr(config.option, "numprocesses", None)) and getattr(config.option, "dist", "no") != "no"

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        from ragjudge.pytest_plugin.report import summary_lines

        if self.report is None:
            return
        terminalreporter.write_sep("=", "ragjudge")
        if self.report["evaluations"]:
            for line in summary_lines(self.report):
                terminalreporter.write_line(line)
        else:
            terminalreporter.write_line("no evaluations")
        if self.report_file is not None:
            terminalreporter.write_line(f"report: {self.report_file}")

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self._evaluator is not None:
            self._evaluator.close()
            self._evaluator = None


STATE = pytest.StashKey[SessionState]()
SESSION_PLUGIN = "ragjudge-session"
PENDING_SKIPS = pytest.StashKey[list[str]]()
JUDGE = pytest.StashKey[Any]()


def _judge_names(config: pytest.Config) -> list[str]:
    """Names of the available judge specs (file stems), without parsing them: cheap at configure time."""
    from ragjudge.specs import spec_search_path

    extra = [str(p) for p in config.getini("ragjudge_judge_dirs")]
    names = {p.stem for folder in spec_search_path("judges", extra) if folder.is_dir() for p in folder.glob("*.y*ml")}
    return sorted(names | {RECALL})


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    from ragjudge.pytest_plugin.report import Recorder

    config.addinivalue_line("markers", MARKER_HELP)
    state = SessionState(settings_from(config, lambda: _judge_names(config)), Recorder())
    config.stash[STATE] = state
    config.pluginmanager.register(state, SESSION_PLUGIN)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    parametrize_from_marker(metafunc)


@pytest.fixture
def rag_judge(request: pytest.FixtureRequest) -> RagJudge:
    """Evaluate one turn of your RAG app with ragjudge's judges: `rag_judge.evaluate(question=..., answer=...,
    conversation=[...], passages=[...], reference=..., expected_answerable=..., expected_passage_ids=[...],
    judges=[...])` returns a RagResult with each judge's score, rationale and error."""
    from ragjudge.pytest_plugin.result import RagJudge

    state = request.config.stash[STATE]
    pending: list[str] = []
    request.node.stash[PENDING_SKIPS] = pending  # fresh for each run of the test
    judge = RagJudge(state.evaluator, state.recorder, test=request.node.nodeid, pending_skips=pending)
    request.node.stash[JUDGE] = judge
    return judge


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, Any]:
    """Checks that needed an unavailable LLM judge: a test where no check ran is skipped; a test where checks ran
    passes or fails on those, and the checks that could not run are reported as skipped (a warning in pytest's
    summary, the JSON report's checks)."""
    result = yield
    pending = item.stash.get(PENDING_SKIPS, None)
    if pending:
        judge = item.stash.get(JUDGE, None)
        if judge is None or not any(r.checks_ran() for r in judge.results):
            raise _skip_at_test("; ".join(pending))
        import warnings

        for reason in pending:
            warnings.warn_explicit(SkippedCheck(reason), SkippedCheck, str(item.path), item.location[1] or 0)
    return result


class SkippedCheck(UserWarning):
    """A check of a test that passed on its other checks could not run (no judge model for its LLM judge)."""


def _skip_at_test(reason: str) -> BaseException:
    """A skip reported at the test's location (as skip markers are), not at this hook's line."""
    try:
        return pytest.skip.Exception(reason, _use_item_location=True)  # type: ignore[call-arg]
    except TypeError:  # a pytest without the (private) argument: the reason is what matters
        return pytest.skip.Exception(reason)

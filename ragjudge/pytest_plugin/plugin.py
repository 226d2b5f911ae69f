"""The pytest hooks and the `rag_judge` fixture.

Nothing heavy happens unless a test uses the fixture: no judge is built, no model loaded, no cache
opened, so installing ragjudge costs other test suites nothing.

PYTEST_DONT_REWRITE
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest

from ragjudge.errors import RagjudgeError
from ragjudge.pytest_plugin.config import RECALL, Settings, add_options, settings_from
from ragjudge.pytest_plugin.dataset import MARKER, MARKER_HELP, parametrize_from_marker

if TYPE_CHECKING:
    from ragjudge.pytest_plugin.evaluator import Evaluator
    from ragjudge.pytest_plugin.report import Recorder
    from ragjudge.pytest_plugin.result import RagJudge


@dataclass
class SessionState:
    settings: Settings
    recorder: Recorder
    _evaluator: Evaluator | None = None
    report: dict[str, Any] | None = field(default=None)

    @property
    def evaluator(self) -> Evaluator:
        if self._evaluator is None:
            from ragjudge.pytest_plugin.evaluator import Evaluator

            self._evaluator = Evaluator(self.settings)
        return self._evaluator

    def close(self) -> None:
        if self._evaluator is not None:
            self._evaluator.close()


STATE = pytest.StashKey[SessionState]()
PENDING_SKIPS = pytest.StashKey[list[str]]()


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
    config.stash[STATE] = SessionState(settings=settings_from(config, _judge_names(config)), recorder=Recorder())


def pytest_sessionstart(session: pytest.Session) -> None:
    """Fail before running anything if a configured judge model cannot be served."""
    state = session.config.stash[STATE]
    if state.settings.judge_models and not state.settings.offline:
        try:
            state.evaluator.validate_models()
        except RagjudgeError as exc:
            raise pytest.UsageError(f"ragjudge: {exc}") from None


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    parametrize_from_marker(metafunc)


@pytest.fixture
def rag_judge(request: pytest.FixtureRequest) -> RagJudge:
    """Evaluate one turn of your RAG app with ragjudge's judges: `rag_judge.evaluate(question=..., answer=...,
    conversation=[...], passages=[...], reference=..., expected_answerable=..., expected_passage_ids=[...],
    judges=[...])` returns a RagResult with each judge's score, rationale and error."""
    from ragjudge.pytest_plugin.result import RagJudge

    state = request.config.stash[STATE]
    pending = request.node.stash.setdefault(PENDING_SKIPS, [])
    return RagJudge(state.evaluator, state.recorder, test=request.node.nodeid, pending_skips=pending)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, Any]:
    """A test whose every runnable check passed, but some needed an unavailable LLM judge, is skipped."""
    result = yield
    pending = item.stash.get(PENDING_SKIPS, None)
    if pending:
        pytest.skip("; ".join(pending))
    return result


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    state = _state(report)
    if state is not None:
        state.recorder.record_outcome(report)


def _state(report: pytest.TestReport) -> SessionState | None:
    return _CURRENT.get("state")


_CURRENT: dict[str, SessionState] = {}

"""ragjudge's pytest plugin: judge a RAG app's answers in its test suite (docs/pytest-plugin.md). Registered through
the `pytest11` entry point, so installing ragjudge is enough; `-p ragjudge.pytest_plugin` loads it where it is not
installed (and is harmless where it is), `-p no:ragjudge.pytest_plugin` turns it off.

PYTEST_DONT_REWRITE
"""

from typing import TYPE_CHECKING, Any

# The hooks and the fixture: what pytest loads in every test suite once ragjudge is installed. They
# import nothing heavy; the helpers below (pydantic models, judges) load when a test suite imports them.
from ragjudge.pytest_plugin.plugin import (
    pytest_addoption,
    pytest_configure,
    pytest_generate_tests,
    pytest_runtest_call,
    rag_judge,
)

if TYPE_CHECKING:
    from ragjudge.pytest_plugin.assertions import (
        assert_criterion,
        assert_grounded,
        assert_idk_correct,
        assert_matches_reference,
        assert_retrieves,
    )
    from ragjudge.pytest_plugin.dataset import load_tasks, read_dataset
    from ragjudge.pytest_plugin.means import assert_mean
    from ragjudge.pytest_plugin.recall import recall_at_k
    from ragjudge.pytest_plugin.result import Check, RagJudge, RagResult

_LAZY = {
    "assert_criterion": "assertions", "assert_grounded": "assertions", "assert_idk_correct": "assertions", "assert_matches_reference": "assertions",
    "assert_retrieves": "assertions", "load_tasks": "dataset", "read_dataset": "dataset", "recall_at_k": "recall",
    "Check": "result", "RagJudge": "result", "RagResult": "result", "assert_mean": "means",
}


def __getattr__(name: str) -> Any:
    """`from ragjudge.pytest_plugin import assert_grounded` imports the helper's module on first use (PEP 562).
    No `__dir__`: pytest scans the plugin module's names for hooks and fixtures, which must not import these."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "Check",
    "RagJudge",
    "RagResult",
    "assert_criterion",
    "assert_grounded",
    "assert_idk_correct",
    "assert_matches_reference",
    "assert_mean",
    "assert_retrieves",
    "load_tasks",
    "pytest_addoption",
    "pytest_configure",
    "pytest_generate_tests",
    "pytest_runtest_call",
    "rag_judge",
    "read_dataset",
    "recall_at_k",
]

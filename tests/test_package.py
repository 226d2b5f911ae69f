"""The package as others use it: every public exception is a RagjudgeError (one `except` catches whatever ragjudge
raises on purpose, and the CLI prints it as one line), and the package says it is typed (PEP 561's py.typed)."""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

from ragjudge.errors import RagjudgeError

PACKAGE = Path(__file__).resolve().parents[1] / "ragjudge"


def _module_names() -> list[str]:
    """Every module of the package, folders without `__init__.py` (`retrieval/`) included, which pkgutil skips;
    `__main__` runs the CLI when imported."""
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] != "__main__":
            names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def test_every_public_exception_is_a_ragjudge_error() -> None:
    found: dict[str, type[BaseException]] = {}
    for name in _module_names():
        module = importlib.import_module(name)
        for attr, obj in vars(module).items():
            if inspect.isclass(obj) and issubclass(obj, BaseException) and obj.__module__ == name \
                    and not attr.startswith("_"):
                found[f"{name}.{attr}"] = obj
    assert "ragjudge.retrieval.base.StaleIndex" in found and "ragjudge.llm.faults.LLMError" in found  # walked all
    stray = sorted(name for name, cls in found.items() if not issubclass(cls, (RagjudgeError, Warning)))
    assert not stray, f"exceptions that are not RagjudgeErrors (warnings may stay Warnings): {stray}"


def test_exceptions_keep_the_bases_their_callers_catch() -> None:
    from ragjudge.errors import EnvironmentFault, RagjudgeWarning
    from ragjudge.retrieval.es import ElasticsearchUnreachable
    from ragjudge.testing.conformance.case import ConformanceError

    assert issubclass(ConformanceError, AssertionError)  # a failed conformance step fails the test, as asserts do
    assert issubclass(ElasticsearchUnreachable, EnvironmentFault)
    assert issubclass(RagjudgeWarning, UserWarning)


def test_py_typed_ships_in_the_package() -> None:
    """The wheel takes every file of the package folder (pyproject.toml: `packages = ["ragjudge"]`)."""
    assert (PACKAGE / "py.typed").is_file()

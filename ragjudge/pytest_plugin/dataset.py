"""Dataset-driven tests: one test per task of a file of MTRAG tasks or plain RAG records, the task id as test id.

Either `@pytest.mark.parametrize("task", load_tasks(path))` or `@pytest.mark.ragjudge_dataset(path)` (the path
relative to the test file). A bad file is a collection error naming file, line and field.

PYTEST_DONT_REWRITE
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ragjudge.errors import InputError

if TYPE_CHECKING:  # the plugin imports this module in every test suite: pydantic models only on use
    from ragjudge.models import Task

MARKER = "ragjudge_dataset"
MARKER_HELP = (f"{MARKER}(path, argname='task', answerability=None, limit=None): run the test once per task of "
               "an MTRAG-format file or of a file of plain RAG records (path relative to the test file), the "
               "task id as the test id")


def read_dataset(path: str | Path, *, answerability: str | Iterable[str] | None = None,
                 limit: int | None = None) -> list[Task]:
    """Tasks of an MTRAG generation-task (or evaluation-input) file or folder, or of a file of plain RAG records
    (JSONL, JSON, CSV, Parquet), optionally filtered."""
    from ragjudge.formats.files import input_file
    from ragjudge.formats.mtrag import read_tasks
    from ragjudge.formats.rag_records import holds_mtrag_tasks, read_rag_records
    from ragjudge.models import ANSWERABILITY_VALUES

    if not Path(path).is_dir():
        input_file(path, "dataset file")
    tasks = read_tasks(path) if holds_mtrag_tasks(Path(path)) else [r.task() for r in read_rag_records(path)]
    if answerability is not None:
        wanted = {answerability.upper()} if isinstance(answerability, str) else {a.upper() for a in answerability}
        unknown = sorted(wanted - set(ANSWERABILITY_VALUES))
        if unknown:
            raise InputError(f"unknown value(s) {', '.join(unknown)} (expected {', '.join(ANSWERABILITY_VALUES)})",
                             field="answerability")
        tasks = [t for t in tasks if t.answerability in wanted]
    return tasks[:limit]


def load_tasks(path: str | Path, *, answerability: str | Iterable[str] | None = None,
               limit: int | None = None) -> list[Any]:
    """`pytest.param(task, id=task.task_id)` for each task, for `@pytest.mark.parametrize("task", ...)`. A relative
    `path` is relative to the current directory: prefer `Path(__file__).parent / "tasks.jsonl"`."""
    __tracebackhide__ = True
    try:
        tasks = read_dataset(path, answerability=answerability, limit=limit)
    except InputError as exc:
        error = str(exc)
    else:
        return [pytest.param(task, id=task.task_id) for task in tasks]
    pytest.fail(f"ragjudge dataset: {error}", pytrace=False)  # outside `except`: no chained traceback


def parametrize_from_marker(metafunc: pytest.Metafunc) -> None:
    """`pytest_generate_tests` for the `ragjudge_dataset` marker."""
    marker = metafunc.definition.get_closest_marker(MARKER)
    if marker is None:
        return
    if len(marker.args) != 1:
        pytest.fail(f"{MARKER} takes one path argument, got {len(marker.args)}", pytrace=False)
    options = dict(marker.kwargs)
    argname = options.pop("argname", "task")
    unknown = sorted(set(options) - {"answerability", "limit"})
    if unknown:
        pytest.fail(f"{MARKER}: unknown argument(s) {', '.join(unknown)} (expected argname, answerability, limit)",
                    pytrace=False)
    if argname not in metafunc.fixturenames:
        pytest.fail(f"{MARKER}: the test has no {argname!r} argument to receive the task", pytrace=False)
    metafunc.parametrize(argname, load_tasks(metafunc.definition.path.parent / marker.args[0], **options))

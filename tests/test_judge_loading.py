"""Start-up work in the background (judges.loading): each job once per process, in the order asked, in the asking
run's context; its result or its error reaches whoever awaits it."""

from __future__ import annotations

import asyncio
import contextvars
import threading

import pytest

from ragjudge.judges import loading

WHICH: contextvars.ContextVar[str] = contextvars.ContextVar("which", default="none")


def test_a_job_runs_once_in_the_background_in_the_callers_context() -> None:
    ran: list[tuple[str, str]] = []
    gate = threading.Event()

    def first() -> str:
        gate.wait(30)
        ran.append(("first", WHICH.get()))
        return threading.current_thread().name

    def second() -> str:
        ran.append(("second", WHICH.get()))
        return "second"

    WHICH.set("run A")
    job = loading.start("test: first", first)
    assert loading.start("test: first", lambda: "never") is job  # the same job, not run again
    later = loading.start("test: second", second)
    assert not later.done()  # queued behind the first: one thread, in order
    gate.set()
    assert asyncio.run(loading.ready("test: first", lambda: "never")) == "ragjudge-loading"
    assert later.result(30) == "second"
    assert ran == [("first", "run A"), ("second", "run A")]


def test_a_failed_job_fails_where_it_is_awaited() -> None:
    def broken() -> None:
        raise ImportError("no module named 'ragas'")

    with pytest.raises(ImportError, match="ragas"):
        asyncio.run(loading.ready("test: broken", broken))

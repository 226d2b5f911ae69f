"""Start-up work in the background (judges.loading): each job once per process, in the order asked, in the asking
run's context; its result or its error reaches whoever awaits it."""

from __future__ import annotations

import asyncio
import contextvars
import gc
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


def test_the_end_of_a_run_drops_warm_ups_not_started_and_waits_for_the_job_under_way() -> None:
    """Why: a daemon thread stopped by the interpreter's exit in the middle of an import keeps that module's lock, and
    an import at exit would wait forever (a second Ctrl-C hung so)."""
    gate = threading.Event()
    finished: list[str] = []

    def slow() -> None:
        gate.wait(30)
        finished.append("slow")

    running = loading.start("test: running", slow)
    warm_up = loading.start("test: warm-up", lambda: finished.append("warm-up"), optional=True)
    threading.Timer(0.2, gate.set).start()
    loading.settle()
    assert running.done() and warm_up.cancelled() and finished == ["slow"]
    again = loading.start("test: warm-up", lambda: finished.append("warm-up again"), optional=True)
    assert again is not warm_up and again.result(30) is None and finished == ["slow", "warm-up again"]


def test_a_job_runs_with_the_cyclic_collector_paused_and_what_it_made_moves_to_the_oldest_generation() -> None:
    """Why: imports and model loads make objects that live as long as the process; the collector's passes over them
    while a judge's libraries loaded cost about 1.2 s of CPU in a six-judge run (issue 44), 0.1 s paused."""
    assert gc.isenabled()

    def load() -> tuple[bool, list[list[int]]]:
        return gc.isenabled(), [[i] for i in range(1000)]  # containers the collector tracks, as an import makes

    enabled_inside, made = loading.start("test: collector", load).result(30)
    assert not enabled_inside and gc.isenabled()
    oldest = {id(o) for o in gc.get_objects(generation=2)}
    assert id(made) in oldest and all(id(d) in oldest for d in made)  # not left young: no young pass walks them


def test_a_failed_job_turns_the_collector_on_again_and_a_process_s_own_settings_stay() -> None:
    def broken() -> None:
        raise RuntimeError("load failed")

    with pytest.raises(RuntimeError):
        loading.start("test: collector broken", broken).result(30)
    assert gc.isenabled()
    gc.disable()  # a process that runs without the cyclic collector keeps it off
    try:
        assert loading.start("test: collector off", gc.isenabled).result(30) is False
        assert not gc.isenabled()
    finally:
        gc.enable()
    gc.freeze()  # a process that froze objects (before a fork) finds them still frozen
    try:
        loading.start("test: collector frozen", lambda: [[] for _ in range(100)]).result(30)
        assert gc.get_freeze_count() > 0 and gc.isenabled()
    finally:
        gc.unfreeze()

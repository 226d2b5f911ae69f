"""Issue 41, item 5: Ctrl-C keeps the answers of the LLM calls in flight (a rerun never pays twice for a prompt
that was answered), and a provider answering 5xx to everything is given up on after RAGAS's 3 attempts per call."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest

from conftest import ctrl_c_default, run_cli
from ragjudge.engine.interrupt import run_keeping_answers
from ragjudge.llm import LLMError, LLMGateway, ResponseCache
from ragjudge.testing.openai_server import OpenAIServer, Reply, Request

MODEL = "openai/judge"


def records_jsonl(n: int) -> list[str]:
    return [json.dumps({"id": f"s{i}", "question": f"What does policy {i} cover?",
                        "answer": f"Policy {i} covers water damage number {i}.",
                        "contexts": [f"Policy {i} covers water damage from burst pipes, case {i}."]}) for i in range(n)]


def calls(server: OpenAIServer) -> Counter:
    """How many times each distinct prompt reached the server."""
    return Counter((r.model, json.dumps(r.messages)) for r in server.requests)


# -- Ctrl-C --------------------------------------------------------------------------------------------------------

N_SAMPLES = 150  # x 2 prompts (faithfulness: the answer's statements, then their verdicts) = the 300 requests
LATENCY = 3.0  # the issue's; everything in flight together in three waves keeps the test to seconds
CONCURRENCY = 100


def judge_args(server: OpenAIServer, source: Path, out: Path, cache: Path) -> list[str]:
    return ["judge", str(source), "--judges", "faithfulness", "--judge-models", MODEL, "--api-base", server.base_url,
            "--concurrency", str(CONCURRENCY), "--cache-dir", str(cache), "--out", str(out), "--format", "json"]


def start(args: list[str]) -> subprocess.Popen:
    """`python -m ragjudge ARGS` as a terminal runs it: Ctrl-C (SIGINT) interrupts it."""
    return subprocess.Popen([sys.executable, "-m", "ragjudge", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "OPENAI_API_KEY": "sk-test"}, preexec_fn=ctrl_c_default)


def wait_until(condition: Callable[[], bool], what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened: {what}")
        time.sleep(0.02)


def test_ctrl_c_waits_for_the_calls_in_flight_so_a_rerun_pays_for_no_prompt_twice(tmp_path: Path, monkeypatch,
                                                                                    capsys) -> None:
    """The issue's scenario: 300 requests at 3 s latency, one Ctrl-C while calls are in flight, then a rerun. Before,
    the calls in flight were abandoned and the rerun paid for them again; now they finish first (said on screen),
    their answers are cached and the samples they complete journaled, so both runs together send each prompt once:
    exactly what one uninterrupted run sends."""
    from ragjudge.testing.ragas_model import NLI, ragas_model

    source = tmp_path / "rows.jsonl"
    source.write_text("\n".join(records_jsonl(N_SAMPLES)) + "\n")
    with OpenAIServer(ragas_model(), latency=LATENCY) as server:
        args = judge_args(server, source, tmp_path / "out.jsonl", tmp_path / "cache")
        proc = start(args)
        # mid-run: the first wave answered, verdicts on their way (statements are sent ahead, while ragas imports:
        # the second wave may hold statements only)
        wait_until(lambda: len(server.requests) > CONCURRENCY and server.in_flight >= 10
                   and any(NLI in r.prompt for r in list(server.requests)), "verdicts in flight")
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
        assert proc.returncode == 130, stderr
        assert "Traceback" not in stderr and "rerun the same command to resume" in stderr
        waited = re.search(r"interrupted: waiting up to [\d.]+ s for (\d+) LLM calls in flight to finish "
                           r"\(Ctrl-C again to stop now\)", stderr)
        assert waited is not None and int(waited.group(1)) >= 10, stderr
        sent_first = len(server.requests)
        assert CONCURRENCY < sent_first < 2 * N_SAMPLES  # really stopped midway
        verdicts_answered = sum(NLI in r.prompt for r in server.requests)
        [journal_file] = tmp_path.rglob("*judgements.jsonl")  # the scores' journal, beside the results or in a folder
        journal = [json.loads(line) for line in journal_file.read_text().splitlines()]
        finished = [line for line in journal if "error" not in line["value"]]
        assert len(journal) == len(finished) == verdicts_answered > 0  # a sample's last answer: the sample is kept

        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        code, out, err = run_cli(args, monkeypatch, capsys)  # the rerun (in-process: nothing interrupts it)
        assert code == 0, err
        assert json.loads(out)["metrics"]["faithfulness"]["n"] == N_SAMPLES
        per_prompt = calls(server)
    # each prompt once across both runs: what one uninterrupted run sends (its cache and in-flight sharing send a
    # prompt once), 150 statements prompts and 150 verdicts prompts
    assert len(server.requests) == len(per_prompt) == 2 * N_SAMPLES


def test_a_second_ctrl_c_stops_at_once(tmp_path: Path) -> None:
    """Calls that would take a minute: the first Ctrl-C says it waits for them, the second stops the run there."""
    import threading

    from ragjudge.testing.ragas_model import ragas_model

    source = tmp_path / "rows.jsonl"
    source.write_text("\n".join(records_jsonl(20)) + "\n")
    with OpenAIServer(ragas_model(), latency=60) as server:
        proc = start(judge_args(server, source, tmp_path / "out.jsonl", tmp_path / "cache"))
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.extend(iter(proc.stderr.readline, "")), daemon=True)
        reader.start()
        wait_until(lambda: server.in_flight >= 20, "every statements call in flight")
        proc.send_signal(signal.SIGINT)
        wait_until(lambda: any("Ctrl-C again to stop now" in line for line in lines), "the first Ctrl-C said so")
        assert proc.poll() is None  # waiting for the calls in flight
        stopped = time.monotonic()
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=50)  # the calls in flight would take 60 s
        reader.join(timeout=10)
    assert time.monotonic() - stopped < 50
    assert proc.returncode == 130
    stderr = "".join(lines)
    assert "Traceback" not in stderr and "rerun the same command to resume" in stderr
    assert "still in flight after" not in stderr  # stopped by the second Ctrl-C, not by the end of the wait


@pytest.fixture
def python_ctrl_c() -> Any:
    """Python's own Ctrl-C handler in this process for a test that presses Ctrl-C here, even when the suite runs as a
    background job (`cmd &` in a script starts it with SIGINT ignored, and Python then installs no handler, which
    `run_keeping_answers` rightly leaves alone); the handler found is put back after."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def ctrl_c_when(server: OpenAIServer, in_flight: int) -> Callable[[], Coroutine[Any, Any, None]]:
    """A coroutine that presses Ctrl-C (SIGINT to this process) once `in_flight` requests are being answered."""

    async def press() -> None:
        while server.in_flight < in_flight:
            await asyncio.sleep(0.01)
        signal.raise_signal(signal.SIGINT)

    return press


async def ask_three(gw: LLMGateway, server: OpenAIServer) -> None:
    """Three questions at once, each followed by a second one once answered (as a judge's second stage is)."""

    async def two_stages(i: int) -> None:
        await gw.complete(MODEL, [{"role": "user", "content": f"question {i}"}])
        await gw.complete(MODEL, [{"role": "user", "content": f"follow-up {i}"}])

    await asyncio.gather(*(two_stages(i) for i in range(3)), ctrl_c_when(server, 3)())


@pytest.mark.usefixtures("python_ctrl_c")
def test_the_wait_for_calls_in_flight_is_bounded(tmp_path: Path) -> None:
    lines: list[str] = []
    with OpenAIServer(latency=30) as server:
        gw = LLMGateway(cache=ResponseCache(tmp_path / "cache"), api_base=server.base_url, api_key="sk-test")
        started = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            run_keeping_answers(ask_three(gw, server), gw, lines.append, grace=0.5)
        assert time.monotonic() - started < 20  # the answers would take 30 s
    assert lines == ["interrupted: waiting up to 0.5 s for 3 LLM calls in flight to finish (Ctrl-C again to stop "
                     "now)", "interrupted: 3 LLM calls still in flight after 0.5 s: stopping without them"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # Python's own handler is back


@pytest.mark.usefixtures("python_ctrl_c")
def test_answers_that_arrive_while_waiting_are_cached_and_nothing_new_is_sent(tmp_path: Path) -> None:
    with OpenAIServer(latency=1) as server:
        gw = LLMGateway(cache=ResponseCache(tmp_path / "cache"), api_base=server.base_url, api_key="sk-test")
        with pytest.raises(KeyboardInterrupt):
            run_keeping_answers(ask_three(gw, server), gw, lambda line: None)
        assert server.chat_count() == 3  # no follow-up was sent
        again = LLMGateway(cache=ResponseCache(tmp_path / "cache"), api_base=server.base_url, api_key="sk-test")
        answers = [asyncio.run(again.complete(MODEL, [{"role": "user", "content": f"question {i}"}]))
                   for i in range(3)]
        assert server.chat_count() == 3 and all(a.cached for a in answers)


@pytest.mark.usefixtures("python_ctrl_c")
def test_with_nothing_in_flight_ctrl_c_stops_at_once(tmp_path: Path) -> None:
    lines: list[str] = []

    async def busy() -> None:
        signal.raise_signal(signal.SIGINT)
        await asyncio.sleep(30)

    with OpenAIServer() as server:
        gw = LLMGateway(cache=None, api_base=server.base_url, api_key="sk-test")
        started = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            run_keeping_answers(busy(), gw, lines.append)
    assert time.monotonic() - started < 20 and lines == []


# -- a provider that is down ----------------------------------------------------------------------------------------

def always_500(request: Request) -> Reply:
    return Reply(status=500, content="the model server crashed")


def test_an_endpoint_answering_500_to_everything_costs_three_attempts_per_call(monkeypatch) -> None:
    """50 samples x faithfulness at default settings (6 retries, backoff from 1 s): before, 7 attempts per call and
    at least 31.5 s of backoff; now 3 attempts, every sample an error naming HTTP 500, in seconds."""
    import ragjudge
    from ragjudge.judges import ragas_judge  # noqa: F401  (imports are not what the bound is about)
    from ragjudge.llm._litellm import litellm

    litellm()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    records = [json.loads(line) for line in records_jsonl(50)]
    with OpenAIServer(always_500) as server:
        started = time.monotonic()
        result = ragjudge.evaluate(records, metrics=["faithfulness"], judge_models=[MODEL],
                                   api_base=server.base_url, show_progress=False)
        seconds = time.monotonic() - started
        per_call = calls(server)
    assert len(per_call) == 50 and max(per_call.values()) == 3  # one statements prompt per sample, 3 tries each
    assert seconds < 15
    errors = [s.scores["faithfulness"].error or "" for s in result.samples]
    assert len(errors) == 50 and all("(HTTP 500) after 3 attempts" in e for e in errors), errors[0]
    assert result.summary.metrics["faithfulness"].errors == 50 and result.exit_code == 1


async def test_a_lone_call_stops_at_three_attempts_once_the_endpoint_fails_everything(tmp_path: Path) -> None:
    with OpenAIServer(always_500) as server:
        gw = LLMGateway(cache=ResponseCache(tmp_path / "cache"), api_base=server.base_url, api_key="sk-test",
                        backoff_base=0.01)
        with pytest.raises(LLMError) as err:
            await gw.complete(MODEL, [{"role": "user", "content": "hi"}])
        assert server.chat_count() == 3  # max_retries 6 would make it 7
    assert "HTTP 500" in str(err.value) and "after 3 attempts" in str(err.value)
    assert f"{server.base_url} answered HTTP 5xx to the last 3 requests for this model" in str(err.value)


async def test_a_flaky_endpoint_that_still_answers_keeps_the_full_retries(tmp_path: Path) -> None:
    """A 5xx now and then between answers is no outage: a call keeps its retries while other calls succeed."""
    with OpenAIServer(lambda r: Reply(status=503, content="busy") if "doomed" in r.prompt else "fine") as server:
        gw = LLMGateway(cache=ResponseCache(tmp_path / "cache"), api_base=server.base_url, api_key="sk-test",
                        backoff_base=0.2, backoff_max=0.2, max_retries=4)
        doomed = asyncio.ensure_future(gw.complete(MODEL, [{"role": "user", "content": "doomed"}]))
        i = 0
        while not doomed.done():  # answers keep arriving between the doomed call's attempts
            await gw.complete(MODEL, [{"role": "user", "content": f"question {i}"}])
            i += 1
        with pytest.raises(LLMError) as err:
            await doomed
        assert sum("doomed" in r.prompt for r in server.requests) == 5  # 1 + max_retries
    assert "after 5 attempts" in str(err.value) and "answered HTTP 5xx" not in str(err.value)


async def test_an_outage_is_not_held_against_the_endpoint_once_it_answers(tmp_path: Path) -> None:
    """No call is refused unsent: in the failing state each call still tries (up to 3 times), and the first answer
    ends the state; a transient 5xx is retried through, as before."""
    with OpenAIServer(lambda r: "ok") as server:
        gw = LLMGateway(cache=ResponseCache(tmp_path / "cache"), api_base=server.base_url, api_key="sk-test",
                        backoff_base=0.01)
        server.fail_next(3, status=502)
        with pytest.raises(LLMError):  # the outage: 3 attempts
            await gw.complete(MODEL, [{"role": "user", "content": "a"}])
        server.fail_next(2, status=500)  # still failing, but this call's third attempt is answered
        assert (await gw.complete(MODEL, [{"role": "user", "content": "b"}])).text == "ok"
        assert gw.streaks[MODEL].count == 0
        server.fail_next(1, status=503)
        assert (await gw.complete(MODEL, [{"role": "user", "content": "c"}])).text == "ok"
        assert server.chat_count() == 3 + 3 + 2

"""Issue 41, item 5: Ctrl-C keeps the answers of the LLM calls in flight (a rerun never pays twice for a prompt
that was answered), and a provider answering 5xx to everything is given up on after RAGAS's 3 attempts per call."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from conftest import ctrl_c_default, run_cli
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
    assert "answered HTTP 5xx to its last 3 requests" in str(err.value)


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
    assert "after 5 attempts" in str(err.value) and "5xx to its last" not in str(err.value)


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
        assert gw.streaks[(server.base_url, "openai/judge")].count == 0
        server.fail_next(1, status=503)
        assert (await gw.complete(MODEL, [{"role": "user", "content": "c"}])).text == "ok"
        assert server.chat_count() == 3 + 3 + 2

"""Pacing to a provider's rate limit: never above the configured RPM, 429s pause the endpoint and retry by time
(not by a small number of attempts), limits learnt from headers, oldest request first, one work queue."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from conftest import run_cli
from ragjudge.llm import LLMGateway, ModelRoutes
from ragjudge.llm.limiter import RateLimiter
from ragjudge.testing.openai_server import OpenAIServer, Request


def gateway(server: OpenAIServer, **kw) -> LLMGateway:
    rpm, tpm = kw.pop("rpm", None), kw.pop("tpm", None)
    return LLMGateway(routes=ModelRoutes(api_base=server.base_url, rpm=rpm, tpm=tpm), api_key="sk-test",
                      backoff_base=0.05, **kw)


async def ask_many(gw: LLMGateway, n: int) -> None:
    await asyncio.gather(*(gw.complete("openai/judge", [{"role": "user", "content": f"q{i}"}]) for i in range(n)))


def most_in_window(times: list[float], seconds: float) -> int:
    times = sorted(times)
    return max(sum(1 for t in times[i:] if t < start + seconds) for i, start in enumerate(times))


def test_paced_requests_never_exceed_the_rpm() -> None:
    """--rpm 300 with 16 slots free: the server sees the requests spread at 5 a second, never a burst."""
    with OpenAIServer(latency=0.05) as server:
        gw = gateway(server, rpm=300, concurrency=16)

        async def run() -> None:  # one call first: litellm's first call sets up its client, which delays it
            await gw.complete("openai/judge", [{"role": "user", "content": "warm-up"}])
            await ask_many(gw, 30)

        asyncio.run(run())
    arrivals = sorted(server.arrivals)[1:]
    assert len(arrivals) == 30
    assert arrivals[-1] - arrivals[0] >= 29 * 60 / 300 * 0.95  # 300 a minute on average, at most
    assert most_in_window(arrivals, 2.0) <= 10 + 1  # and in any two seconds (one more for timer jitter)
    limiter = next(iter(gw.limiters.values()))
    assert limiter.stats.started == 31 and limiter.stats.rate_limited == 0


def test_a_models_files_rpm_paces_that_model(tmp_path: Path) -> None:
    """rpm: 300 for one model in the models file: its requests are spread at 5 a second; a model without one is not
    paced (its own server)."""
    with OpenAIServer(latency=0.05) as paced, OpenAIServer(latency=0.05) as free:
        models = tmp_path / "models.yaml"
        models.write_text(f"""model_list:
  - model_name: slow
    litellm_params: {{model: openai/slow, api_base: "{paced.base_url}", rpm: 300}}
  - model_name: fast
    litellm_params: {{model: openai/fast, api_base: "{free.base_url}"}}
""")
        gw = LLMGateway(routes=ModelRoutes.load(models), api_key="sk-test", concurrency=16)

        async def run() -> None:
            for name in ("slow", "fast"):
                await gw.complete(name, [{"role": "user", "content": "warm-up"}])
            await asyncio.gather(*(gw.complete(name, [{"role": "user", "content": f"q{i}"}])
                                   for i in range(20) for name in ("slow", "fast")))

        asyncio.run(run())
    slow, fast = sorted(paced.arrivals)[1:], sorted(free.arrivals)[1:]
    assert len(slow) == len(fast) == 20
    assert slow[-1] - slow[0] >= 19 * 60 / 300 * 0.95 and most_in_window(slow, 2.0) <= 10 + 1
    # not paced: overlapping, and well inside the 3.8 s that 300 a minute would take (on any machine's speed)
    assert free.peak_in_flight >= 2 and fast[-1] - fast[0] < 19 * 60 / 300 / 2


def test_paced_tokens_never_exceed_the_tpm() -> None:
    """--tpm 600,000 with requests of 1,000 estimated tokens (a short prompt + max_tokens): 600 a minute, spread
    evenly from the first one like --rpm; not a minute's worth of tokens in a burst at the start, which a
    provider counting tokens per minute would see on top of the next minute's pace (twice its limit)."""
    with OpenAIServer(latency=0.05) as server:
        gw = gateway(server, tpm=600_000, concurrency=16)

        async def run() -> None:
            await gw.complete("openai/judge", [{"role": "user", "content": "warm-up"}], max_tokens=1000)
            await asyncio.gather(*(gw.complete("openai/judge", [{"role": "user", "content": f"q{i}"}], max_tokens=1000)
                                   for i in range(20)))

        asyncio.run(run())
    arrivals = sorted(server.arrivals)[1:]
    assert len(arrivals) == 20
    assert arrivals[-1] - arrivals[0] >= 19 * 60 / 600 * 0.95
    assert most_in_window(arrivals, 1.0) <= 10 + 1


def test_a_token_limit_announced_in_headers_is_learnt_unless_one_was_given() -> None:
    headers = {"x-ratelimit-limit-requests": "5000", "x-ratelimit-limit-tokens": "2000000"}
    learnt = RateLimiter()
    learnt.on_success(headers)
    assert (learnt.target_rpm, learnt.tpm) == (5000, 2_000_000)
    given = RateLimiter(rpm=100, tpm=50_000)
    given.on_success(headers)
    assert (given.target_rpm, given.tpm) == (100, 50_000)


def test_without_a_limit_it_is_learnt_from_the_providers_headers() -> None:
    """No --rpm: the x-ratelimit-limit-requests header sets the pace after the first answers."""
    with OpenAIServer(latency=0.05, rate_limit=(10, 2.0)) as server:
        gw = gateway(server, concurrency=4)
        asyncio.run(ask_many(gw, 30))
    limiter = next(iter(gw.limiters.values()))
    assert limiter.target_rpm == 300
    assert len(server.requests) - server.rate_limited == 30  # every item answered
    assert server.rate_limited <= 1  # before the first answer taught the limit, at most 4 were in flight


async def test_requests_sent_before_the_limit_was_learnt_count_against_it() -> None:
    """8 requests let through at once before the first answer teaches 300 RPM: the pace counts those 8 as already
    sent, so the 9th waits its turn (8 intervals of 0.2 s after the first) rather than adding a window's worth on top
    (on the limiter's own clock: an HTTP server sees a loaded client's sends spread out)."""
    limiter = RateLimiter(max_in_flight=16)
    first = time.monotonic()
    for _ in range(8):
        await limiter.acquire(time.monotonic())
    limiter.release()
    limiter.on_success({"x-ratelimit-limit-requests": "300"}, latency=0.1)
    await limiter.acquire(time.monotonic())
    assert time.monotonic() - first >= 8 * 60 / 300 * 0.95


def test_429s_are_retried_by_time_not_by_a_small_attempt_count() -> None:
    """Ten 429s in a row with max_retries=2: the request waits them out and succeeds."""
    with OpenAIServer() as server:
        server.fail_next(10, status=429, retry_after=0.05)
        gw = gateway(server, max_retries=2)
        response = asyncio.run(gw.complete("openai/judge", [{"role": "user", "content": "hi"}]))
    assert response.text == "OK" and len(server.requests) == 11
    usage = gw.usage.model("openai/judge")
    assert (usage.requests, usage.retries, usage.failures, usage.calls) == (11, 10, 0, 1)


def test_429s_give_up_when_the_retry_time_is_spent() -> None:
    from ragjudge.llm import LLMError

    with OpenAIServer() as server:
        server.fail_next(1000, status=429, retry_after=0.2)
        gw = gateway(server, retry_seconds=1.0)
        with pytest.raises(LLMError, match="HTTP 429"):
            asyncio.run(gw.complete("openai/judge", [{"role": "user", "content": "hi"}]))
    assert 3 <= len(server.requests) <= 8  # about 1 s of 0.2 s waits, then it stops


def test_a_429_pauses_the_endpoint_and_steps_the_rate_down_once() -> None:
    async def go() -> RateLimiter:
        limiter = RateLimiter(rpm=600)
        await limiter.acquire(0.0)
        for _ in range(5):  # a burst of 429s from requests already in flight is one signal
            limiter.on_rate_limited(0.3)
        started = time.monotonic()
        await limiter.acquire(1.0)
        assert time.monotonic() - started >= 0.25  # nobody starts during the pause
        return limiter

    limiter = asyncio.run(go())
    assert limiter.rpm == pytest.approx(600 * 0.8) and limiter.stats.rate_limited == 5
    for _ in range(20):
        limiter.on_success()
    assert limiter.rpm == pytest.approx(600)  # successes bring it back


def test_waiting_requests_go_oldest_first() -> None:
    async def go() -> list[float]:
        limiter = RateLimiter(rpm=6000)
        limiter.on_rate_limited(0.2)  # everyone waits; then the oldest goes first
        order: list[float] = []

        async def one(born: float) -> None:
            await limiter.acquire(born)
            order.append(born)

        await asyncio.gather(*(one(b) for b in (5.0, 1.0, 4.0, 2.0, 3.0)))
        return order

    assert asyncio.run(go()) == [1.0, 2.0, 3.0, 4.0, 5.0]


def _judge_responder(request: Request) -> str:
    if "[The Start of Reference Answer]" in request.prompt:
        return "Fine.\nRating: [[7]]"
    return "no"


def test_one_work_queue_for_every_judge(tmp_path: Path, monkeypatch, capsys) -> None:
    """IDK and a 3-member RB_llm panel over 12 tasks: the judges' requests are in flight together (judge after
    judge, every IDK request would come before the first RB_llm one)."""
    source = tmp_path / "preds.jsonl"
    source.write_text("".join(json.dumps({
        "task_id": f"c{i}::1", "input": [{"speaker": "user", "text": f"question {i}?"}],
        "targets": [{"speaker": "agent", "text": f"answer {i}"}], "answerability": ["ANSWERABLE"],
        "contexts": [{"document_id": f"d{i}", "text": f"passage {i}", "score": 1.0}],
        "predictions": [{"text": f"response {i}"}]}) + "\n" for i in range(12)))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with OpenAIServer(_judge_responder, latency=1.0) as server:
        code, out, err = run_cli(["judge", str(source), "--judges", "idk,rb_llm", "--judge-models",
                                  "openai/a,openai/b,openai/c", "--api-base", server.base_url, "--concurrency", "16",
                                  "--out", str(tmp_path / "out.jsonl"), "--format", "json"], monkeypatch, capsys)
    assert code == 0, err
    assert len(server.requests) == 12 * 4
    kinds = ["rb_llm" if "[The Start of Reference Answer]" in r.prompt else "idk" for r in server.requests]
    # the first wave of 16 holds the 12 IDK requests and 4 RB_llm ones: RB_llm did not wait for IDK to finish
    # Judge after judge would also put 4 RB_llm requests in the first 16 (12 IDK, then RB_llm once they are done):
    # in one queue, the first RB_llm request is sent before the last IDK one, or while IDK requests are out.
    first = kinds.index("rb_llm")
    assert kinds[:16].count("rb_llm") == 4
    assert first < 12 or server.requests[first].in_flight_at_arrival > 0, (first, kinds[:16])
    assert json.loads(out)["metrics"]["RB_llm"]["value"] == pytest.approx(0.7)

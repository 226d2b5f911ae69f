"""Concurrency that finds the provider's pace (issue 44): each endpoint's in-flight limit starts at `concurrency` and
grows while answers come back as fast, settles under a provider's concurrency limit from its 429s, stops growing
when answers slow with load, and stays put with `fixed_concurrency`. Counted by the local server (requests in
flight when each arrived), not by a wall clock; the one time bound compares with what fixed 16 could do at best."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from conftest import run_cli
from ragjudge.llm import LLMGateway, ModelRoutes
from ragjudge.llm.limiter import InFlightLimit
from ragjudge.testing.openai_server import OpenAIServer, Reply, Request


async def ask(gateway: LLMGateway, n: int) -> float:
    """`n` distinct chat requests at once; the seconds they took."""
    started = time.perf_counter()
    await asyncio.gather(*(gateway.complete("openai/j", [{"role": "user", "content": f"q{i}"}]) for i in range(n)))
    return time.perf_counter() - started


def gateway_for(server: OpenAIServer, **kw) -> LLMGateway:
    return LLMGateway(cache=None, api_base=server.base_url, api_key="x", backoff_base=0.05, **kw)


def in_flight_limit(gateway: LLMGateway) -> InFlightLimit:
    [limiter] = gateway.limiters.values()
    assert limiter.in_flight_limit is not None
    return limiter.in_flight_limit


async def test_the_default_grows_past_sixteen_while_answers_come_back_as_fast() -> None:
    """Answers after 2 s and no limit: the default run's in-flight count climbs past its starting 16, and 96
    requests take well under the 12 s that 16 at a time would take at best, on any machine (the latency is long
    enough for a loaded client to keep up)."""
    n, latency = 96, 2.0
    with OpenAIServer(latency=latency) as server:
        gateway = gateway_for(server)
        await ask(gateway, 1)  # litellm's first call sets up its client
        elapsed = await ask(gateway, n)
    limit = in_flight_limit(gateway)
    assert limit.start == 16 and limit.peak >= 48
    assert server.peak_in_flight >= 32  # the server saw twice as many at once as fixed 16 can give it
    fixed_best = n / 16 * latency  # 16 at a time: 6 rounds of 2 s
    assert elapsed < 0.8 * fixed_best


async def test_a_providers_concurrency_limit_is_found_from_its_429s() -> None:
    """A provider answering at most 24 requests at once (429 beyond): the limit climbs from 16 and settles near 24;
    the one overshoot of the climb aside (at most a limit's worth), few requests are refused, and every one is
    answered in the end."""
    k, n = 24, 120
    with OpenAIServer(latency=1.0, max_in_flight=k) as server:
        gateway = gateway_for(server)
        await ask(gateway, 1)
        await ask(gateway, n)  # raises if any request failed
    limit = in_flight_limit(gateway)
    accepted = [r for r in server.requests if (r.in_flight_at_arrival or 0) < k]
    assert len(accepted) == n + 1
    assert server.refused_at, "the limit never reached the provider's"
    first = server.refused_at[0]
    assert server.rate_limited <= k + n // 20
    assert sum(1 for t in server.refused_at if t > first + 1.0) <= 5  # once settled, a 429 now and then
    assert server.peak_in_flight >= k and limit.peak > k  # it climbed from 16 to the provider's limit
    assert k // 2 <= limit.value <= k + 2  # and came back under it


async def test_a_429_under_a_known_rate_steps_the_rate_down_not_the_requests_in_flight() -> None:
    """With --rpm, a 429 is answered by the pace (0.8x), once: the in-flight limit, which the pace keeps well below,
    stays where it was (cutting both would answer one signal twice, and at a long latency starve the pace)."""
    with OpenAIServer() as server:
        server.fail_next(1, status=429, retry_after=0.05)
        gateway = LLMGateway(cache=None, routes=ModelRoutes(api_base=server.base_url, rpm=6000), api_key="x")
        await ask(gateway, 10)
    [limiter] = gateway.limiters.values()
    assert server.requests and limiter.stats.rate_limited == 1 and limiter.rpm == 6000 * 0.8
    assert in_flight_limit(gateway).value >= 16


async def test_the_limit_stops_growing_when_answers_slow_with_load() -> None:
    """A server that answers slower the more it holds (50 ms + 40 ms per request in flight): more in flight buys
    nothing, and the limit stops growing soon and comes back to its start, instead of climbing as it does at a
    constant latency."""

    def queueing(request: Request) -> Reply:
        return Reply(content="ok", delay=0.05 + 0.04 * (request.in_flight_at_arrival or 0))

    with OpenAIServer(queueing) as server:
        gateway = gateway_for(server)
        await ask(gateway, 1)
        await ask(gateway, 120)
    limit = in_flight_limit(gateway)
    assert limit.peak <= 48 and server.peak_in_flight <= 48  # doubling each round trip, it would have sent all 120 at once
    assert limit.value <= 20  # and it came back to where it started


async def test_fixed_concurrency_stays_fixed() -> None:
    """`fixed_concurrency`: exactly `concurrency` in flight, never more, however fast the answers, and a 429 from a
    provider's concurrency limit does not move it either."""
    with OpenAIServer(latency=0.2) as server:
        gateway = gateway_for(server, concurrency=8, fixed_concurrency=True)
        await ask(gateway, 80)
    assert server.peak_in_flight == 8 and in_flight_limit(gateway).peak == 8
    with OpenAIServer(latency=0.2, max_in_flight=6) as server:
        gateway = gateway_for(server, concurrency=8, fixed_concurrency=True)
        await ask(gateway, 40)
    assert server.rate_limited > 0 and in_flight_limit(gateway).value == 8


def test_fixed_concurrency_from_the_command_line_and_where_the_limit_went_in_run_json(tmp_path: Path, monkeypatch,
                                                                                     capsys) -> None:
    """`--fixed-concurrency` (off by default) holds `ragjudge judge` to `--concurrency`, and run.json records it, with
    each endpoint's in-flight limit (where it settled, and its peak) under `rate_limits`."""
    source = tmp_path / "preds.jsonl"
    source.write_text("".join(json.dumps({
        "task_id": f"c{i}::1", "input": [{"speaker": "user", "text": f"question {i}?"}],
        "predictions": [{"text": f"response {i}"}]}) + "\n" for i in range(24)))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    runs = {}
    for name, flags in (("fixed", ["--fixed-concurrency"]), ("adaptive", [])):
        with OpenAIServer(lambda request: "no", latency=0.3) as server:
            code, _, err = run_cli(["judge", str(source), "--judges", "idk", "--judge-models", "openai/j",
                                    "--api-base", server.base_url, "--concurrency", "4", *flags,
                                    "--out", str(tmp_path / f"{name}.jsonl")], monkeypatch, capsys)
            assert code == 0, err
        runs[name] = (json.loads((tmp_path / f"{name}.run.json").read_text()), server.peak_in_flight)
    (fixed, fixed_peak), (adaptive, adaptive_peak) = runs["fixed"], runs["adaptive"]
    assert fixed["engine"]["fixed_concurrency"] is True and adaptive["engine"]["fixed_concurrency"] is False
    [fixed_limits] = fixed["rate_limits"].values()
    [adaptive_limits] = adaptive["rate_limits"].values()
    assert fixed_peak == 4 and (fixed_limits["in_flight_limit"], fixed_limits["in_flight_limit_peak"]) == (4, 4)
    assert adaptive_peak > 4 and adaptive_limits["in_flight_limit_peak"] > 4

"""The LLM gateway against a local OpenAI-compatible server: retries, cache, accounting, no leaked keys."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from ragjudge.llm import LLMError, LLMGateway, ResponseCache
from ragjudge.testing.openai_server import OpenAIServer, Reply, scripted

MESSAGES = [{"role": "user", "content": "Say hi"}]
KEY = "sk-secret-test-key-123456"


def gateway(server: OpenAIServer, tmp_path: Path, **kw) -> LLMGateway:
    return LLMGateway(cache=ResponseCache(tmp_path / "cache"), api_base=server.base_url, api_key=KEY,
                      backoff_base=0.01, **kw)


async def test_answers_are_cached_and_a_rerun_sends_nothing(tmp_path: Path) -> None:
    with OpenAIServer(scripted([], default="hello there")) as server:
        first = await gateway(server, tmp_path).complete("openai/judge-a", MESSAGES)
        assert (first.text, first.cached) == ("hello there", False)
        assert first.prompt_tokens > 0 and first.completion_tokens == 2
        again = gateway(server, tmp_path)  # a new run, same cache folder
        second = await again.complete("openai/judge-a", MESSAGES)
        assert (second.text, second.cached) == ("hello there", True)
        assert server.chat_count() == 1
        assert again.usage.model("openai/judge-a").cached == 1 and again.requests_sent == 0
        # temperature 0 by default, and it is part of the key: another temperature is another call
        assert server.requests[0].body["temperature"] == 0
        await again.complete("openai/judge-a", MESSAGES, temperature=0.7)
        assert server.chat_count() == 2


async def test_429_with_retry_after_and_500_are_retried(tmp_path: Path) -> None:
    with OpenAIServer(scripted([], default="ok")) as server:
        server.fail_next(1, status=429, retry_after=0.3)
        server.fail_next(1, status=500)
        gw = gateway(server, tmp_path)
        started = time.perf_counter()
        response = await gw.complete("openai/judge-a", MESSAGES)
        assert response.text == "ok"
        assert server.chat_count() == 3
        assert time.perf_counter() - started >= 0.3  # Retry-After honoured
        assert gw.usage.model("openai/judge-a").retries == 2


async def test_timeouts_and_garbage_are_retried(tmp_path: Path) -> None:
    with OpenAIServer(scripted([], default="fine")) as server:
        gw = gateway(server, tmp_path, timeout=0.5)
        server.hang_next(1, 2.0)
        assert (await gw.complete("openai/judge-a", MESSAGES)).text == "fine"
        assert server.chat_count() == 2
        server.garbage_next(1)
        assert (await gw.complete("openai/judge-a", [{"role": "user", "content": "again"}])).text == "fine"
        assert server.chat_count() == 4


async def test_gives_up_after_max_retries_with_a_redacted_error(tmp_path: Path) -> None:
    with OpenAIServer(scripted([], default=Reply(content=f"boom {KEY}", status=500))) as server:
        gw = gateway(server, tmp_path, max_retries=2)
        with pytest.raises(LLMError) as err:
            await gw.complete("openai/judge-a", MESSAGES)
        assert server.chat_count() == 3
        assert "HTTP 500" in str(err.value) and "after 3 attempts" in str(err.value)
        assert KEY not in str(err.value)
        assert gw.usage.model("openai/judge-a").failures == 1


async def test_client_errors_are_not_retried(tmp_path: Path) -> None:
    with OpenAIServer(scripted([], default=Reply(content="bad request", status=400))) as server:
        with pytest.raises(LLMError):
            await gateway(server, tmp_path).complete("openai/judge-a", MESSAGES)
        assert server.chat_count() == 1


async def test_api_key_never_reaches_the_cache(tmp_path: Path) -> None:
    with OpenAIServer(scripted([], default="ok")) as server:
        await gateway(server, tmp_path).complete("openai/judge-a", MESSAGES)
    for file in (tmp_path / "cache").iterdir():
        assert KEY.encode() not in file.read_bytes()


async def test_concurrency_limit_is_respected(tmp_path: Path) -> None:
    import asyncio

    with OpenAIServer(scripted([], default="ok"), latency=0.2) as server:
        gw = LLMGateway(cache=None, api_base=server.base_url, api_key="x", concurrency=4)
        started = time.perf_counter()
        await asyncio.gather(*(gw.complete("openai/j", [{"role": "user", "content": str(i)}]) for i in range(8)))
        elapsed = time.perf_counter() - started
        assert 0.4 <= elapsed < 1.2  # two waves of four, not one of eight nor eight of one

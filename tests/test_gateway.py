"""The LLM gateway against a local OpenAI-compatible server: retries, cache, accounting, no leaked keys,
for chat completions and embeddings."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from ragjudge.llm import LLMError, LLMGateway, ResponseCache
from ragjudge.testing import openai_server
from ragjudge.testing.openai_server import (
    EMBEDDING_DIM,
    OpenAIServer,
    Reply,
    embed_text,
    scripted,
)

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
        # the hang well past the timeout, and the timeout long enough for a loaded machine's retry to answer within it
        # (at 0.5 s, a first call slowed by the machine could time out as well, and the test fail for that)
        gw = gateway(server, tmp_path, timeout=2.0)
        server.hang_next(1, 6.0)
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
        gw = LLMGateway(cache=None, api_base=server.base_url, api_key="x", concurrency=4, fixed_concurrency=True)
        started = time.perf_counter()
        await asyncio.gather(*(gw.complete("openai/j", [{"role": "user", "content": str(i)}]) for i in range(8)))
        assert time.perf_counter() - started >= 0.4  # at least two waves ...
        assert server.peak_in_flight == 4  # ... of four at once: not one of eight, nor eight of one


# -- embeddings ---------------------------------------------------------------------------------------

EMBED_MODEL = "openai/text-embedding-3-small"


class _EmbeddingFaults(openai_server._Handler):
    """The shared test server injects faults into chat requests only; this handler also fails the next
    queued embedding requests, with an OpenAI-style error body (and Retry-After when given)."""

    def _embeddings(self, request: openai_server.Request) -> None:
        faults = self.server.owner.embedding_faults
        if faults:
            status, retry_after, message = faults.pop(0)
            self._send_error(status, message, retry_after)
        else:
            super()._embeddings(request)


@contextmanager
def embedding_server(latency: float = 0.0) -> Iterator[OpenAIServer]:
    with OpenAIServer(latency=latency) as server:
        server.embedding_faults = []  # (status, retry_after, message), consumed in order
        server._httpd.RequestHandlerClass = _EmbeddingFaults
        yield server


def close(vectors: list[list[float]], texts: list[str], dim: int = EMBEDDING_DIM) -> bool:
    return np.allclose(vectors, [embed_text(t, dim) for t in texts], atol=1e-6)


def embedding_inputs(server: OpenAIServer) -> list[list[str]]:
    return [r.body["input"] for r in server.requests if r.path.endswith("/embeddings")]


async def test_embeddings_come_back_in_order_and_a_rerun_sends_nothing(tmp_path: Path) -> None:
    texts = ["Mars has a thin atmosphere", "bread dough rises", "index funds are cheap"]
    with embedding_server() as server:
        gw = gateway(server, tmp_path)
        first = await gw.embed(EMBED_MODEL, texts, dimensions=16)
        assert close(first.vectors, texts, 16)
        assert (first.cached, first.prompt_tokens) == (0, 12)  # the server counts words
        assert embedding_inputs(server) == [texts] and server.requests[0].body["dimensions"] == 16
        usage = gw.usage.model(EMBED_MODEL)
        assert (usage.calls, usage.cached, usage.prompt_tokens) == (1, 0, 12)

        again = gateway(server, tmp_path)  # a new run, same cache folder
        second = await again.embed(EMBED_MODEL, texts, dimensions=16)
        assert second.vectors == first.vectors  # exactly: the cache keeps every bit
        assert (second.cached, second.prompt_tokens, again.requests_sent) == (3, 0, 0)
        assert again.usage.model(EMBED_MODEL).cached == 3 and len(embedding_inputs(server)) == 1
        # the parameters are part of the key: another size is another request
        other = await again.embed(EMBED_MODEL, texts[:1], dimensions=8)
        assert close(other.vectors, texts[:1], 8)
        assert len(embedding_inputs(server)) == 2
    for file in (tmp_path / "cache").iterdir():
        assert KEY.encode() not in file.read_bytes()


async def test_only_texts_missing_from_the_cache_are_sent_once(tmp_path: Path) -> None:
    with embedding_server() as server:
        gw = gateway(server, tmp_path)
        await gw.embed(EMBED_MODEL, ["alpha", "beta"])
        response = await gw.embed(EMBED_MODEL, ["beta", "gamma", "alpha", "gamma"])
        assert embedding_inputs(server) == [["alpha", "beta"], ["gamma"]]
        assert close(response.vectors, ["beta", "gamma", "alpha", "gamma"])
        assert response.cached == 2 and gw.usage.model(EMBED_MODEL).calls == 2
        assert (await gw.embed(EMBED_MODEL, [])).vectors == [] and len(embedding_inputs(server)) == 2


async def test_embedding_429_with_retry_after_and_500_are_retried(tmp_path: Path) -> None:
    with embedding_server() as server:
        server.embedding_faults += [(429, 0.3, "slow down"), (500, None, "oops")]
        gw = gateway(server, tmp_path)
        started = time.perf_counter()
        response = await gw.embed(EMBED_MODEL, ["retry me"])
        assert time.perf_counter() - started >= 0.3  # Retry-After honoured
        assert close(response.vectors, ["retry me"])
        assert len(embedding_inputs(server)) == 3 and gw.requests_sent == 3
        usage = gw.usage.model(EMBED_MODEL)
        assert (usage.retries, usage.calls, usage.failures) == (2, 1, 0)


async def test_embedding_failure_gives_up_redacted_and_caches_nothing(tmp_path: Path) -> None:
    other_key = "sk-embedding-only-key-987654"
    with embedding_server() as server:
        server.embedding_faults += [(500, None, f"boom {other_key}")] * 3 + [(401, None, "bad key")]
        gw = gateway(server, tmp_path, max_retries=2)
        with pytest.raises(LLMError) as err:
            await gw.embed(EMBED_MODEL, ["never"], api_key=other_key)  # a per-call key is a secret too
        assert "HTTP 500" in str(err.value) and "after 3 attempts" in str(err.value)
        assert other_key not in str(err.value) and KEY not in str(err.value)
        assert len(embedding_inputs(server)) == 3 and gw.usage.model(EMBED_MODEL).failures == 1
        with pytest.raises(LLMError, match="HTTP 401"):  # not retried
            await gw.embed(EMBED_MODEL, ["never"])
        assert len(embedding_inputs(server)) == 4 and len(gw.cache) == 0
        assert close((await gw.embed(EMBED_MODEL, ["never"])).vectors, ["never"])


async def test_chat_and_embeddings_share_the_concurrency_limit(tmp_path: Path) -> None:
    import asyncio

    with embedding_server(latency=0.2) as server:
        gw = LLMGateway(cache=None, api_base=server.base_url, api_key="x", concurrency=2, fixed_concurrency=True)
        started = time.perf_counter()
        await asyncio.gather(gw.complete("openai/j", MESSAGES), gw.embed(EMBED_MODEL, ["a"]),
                             gw.complete("openai/j", [{"role": "user", "content": "2"}]), gw.embed(EMBED_MODEL, ["b"]))
        assert time.perf_counter() - started >= 0.4  # at least two waves ...
        assert server.peak_in_flight == 2  # ... of two at once: one limit for both kinds


async def test_identical_requests_in_flight_together_are_sent_once(tmp_path: Path) -> None:
    """Two systems giving the same answer to a task ask the judge the same question at the same time: one call."""
    import asyncio

    with OpenAIServer(scripted([], default="shared"), latency=0.2) as server:
        gw = gateway(server, tmp_path)
        answers = await asyncio.gather(*(gw.complete("openai/judge-a", MESSAGES) for _ in range(5)),
                                       gw.complete("openai/judge-a", [{"role": "user", "content": "other"}]))
        assert server.chat_count() == 2
        assert [a.text for a in answers] == ["shared"] * 6
        assert sorted(a.cached for a in answers[:5]) == [False, True, True, True, True]
        usage = gw.usage.model("openai/judge-a")
        assert (usage.requests, usage.calls, usage.cached) == (2, 2, 4)
        fresh = await gw.complete("openai/judge-a", MESSAGES, fresh=True)  # re-asking is never shared
        assert fresh.cached is False and server.chat_count() == 3


async def test_a_shared_request_that_fails_fails_for_everyone_waiting(tmp_path: Path) -> None:
    import asyncio

    with OpenAIServer(scripted([], default="x"), latency=0.1) as server:
        server.fail_next(5, status=400)
        gw = gateway(server, tmp_path)
        results = await asyncio.gather(*(gw.complete("openai/judge-a", MESSAGES) for _ in range(3)),
                                       return_exceptions=True)
        assert server.chat_count() == 1 and all(isinstance(r, LLMError) for r in results)


async def test_an_endpoint_from_the_environment_is_called_paced_and_named(tmp_path: Path, monkeypatch) -> None:
    """No api_base given: litellm sends to $OPENAI_BASE_URL, and the gateway paces, counts and names that server
    (one limiter and one breaker for every model on it), not "openai"."""
    import asyncio
    import socket

    from ragjudge.llm import ProviderUnreachable

    monkeypatch.delenv("OPENAI_API_BASE", raising=False)
    with OpenAIServer(scripted([], default="hi")) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        gw = LLMGateway(cache=None, api_key=KEY, backoff_base=0.01)
        answers = await asyncio.gather(gw.complete("openai/a", MESSAGES), gw.complete("openai/b", MESSAGES))
        assert [a.text for a in answers] == ["hi", "hi"] and server.chat_count() == 2
        assert list(gw.limiters) == [server.base_url] and list(gw.breakers) == [server.base_url]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", closed)
    gw = LLMGateway(cache=None, api_key=KEY, backoff_base=0.01, breaker_threshold=1)
    with pytest.raises(ProviderUnreachable, match=rf"^cannot reach {re.escape(closed)} \(model openai/a\)"):
        await gw.complete("openai/a", MESSAGES)

"""A run's default concurrency starts at RAGAS's worker count, 16 requests in flight (issue 44), counted by the server;
it grows from there only on answers (tests/test_adaptive_concurrency.py)."""

from __future__ import annotations

import asyncio

from ragjudge.engine.context import EngineOptions
from ragjudge.llm import LLMGateway
from ragjudge.testing.openai_server import OpenAIServer, scripted


async def test_a_default_run_starts_with_sixteen_requests_in_flight() -> None:
    with OpenAIServer(scripted([], default="ok")) as server:
        server.hang_next(16, 3.0)  # the first wave stays in flight long enough for all of it to arrive
        gateway = LLMGateway(cache=None, api_base=server.base_url, api_key="x",
                             concurrency=EngineOptions().concurrency)
        calls = asyncio.gather(*(gateway.complete("openai/j", [{"role": "user", "content": str(i)}])
                                 for i in range(24)))
        while server.in_flight < 16:  # sixteen at once...
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.5)
        assert len(server.requests) == 16  # ...and no more while none has answered
        await calls
        assert LLMGateway().concurrency == 16

"""A run's default concurrency is RAGAS's worker count, 16 requests in flight (issue 44), counted by the server."""

from __future__ import annotations

import asyncio

from ragjudge.engine.context import EngineOptions
from ragjudge.llm import LLMGateway
from ragjudge.testing.openai_server import OpenAIServer, scripted


async def test_a_default_run_keeps_sixteen_requests_in_flight() -> None:
    with OpenAIServer(scripted([], default="ok")) as server:
        server.hang_next(16, 5.0)  # the first wave stays in flight long enough for all of it to arrive
        gateway = LLMGateway(cache=None, api_base=server.base_url, api_key="x",
                             concurrency=EngineOptions().concurrency)
        await asyncio.gather(*(gateway.complete("openai/j", [{"role": "user", "content": str(i)}])
                               for i in range(24)))
        assert server.peak_in_flight == 16  # sixteen at once, never more
        assert LLMGateway().concurrency == 16

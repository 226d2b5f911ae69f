"""A response's cost is litellm's own computation for the call, read back rather than computed twice (issue 44):
litellm's prices for a model it knows, 0 for one it does not, and the same in the run's usage."""

from __future__ import annotations

import pytest

from ragjudge.llm import LLMGateway
from ragjudge.llm._litellm import litellm
from ragjudge.testing.openai_server import OpenAIServer, scripted


async def test_cost_is_litellms_price_for_the_call_and_zero_without_one(monkeypatch: pytest.MonkeyPatch) -> None:
    computed = []
    original = litellm().completion_cost
    monkeypatch.setattr(litellm(), "completion_cost", lambda *a, **kw: computed.append(1) or original(*a, **kw))
    with OpenAIServer(scripted([], default="a short answer")) as server:
        gateway = LLMGateway(cache=None, api_base=server.base_url, api_key="x")
        priced = await gateway.complete("openai/gpt-4o-mini", [{"role": "user", "content": "hello there " * 30}])
        unpriced = await gateway.complete("openai/judge-a", [{"role": "user", "content": "hello"}])
    prompt, completion = litellm().cost_per_token(model="gpt-4o-mini", prompt_tokens=priced.prompt_tokens,
                                                  completion_tokens=priced.completion_tokens)
    assert priced.prompt_tokens > 0 and priced.cost > 0
    assert priced.cost == pytest.approx(prompt + completion, rel=1e-12)
    assert unpriced.cost == 0.0
    assert computed == []  # read from litellm's response, not priced a second time
    assert gateway.usage.model("openai/gpt-4o-mini").cost == pytest.approx(priced.cost, rel=1e-12)

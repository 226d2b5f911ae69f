"""Every LLM call ragjudge makes goes through `LLMGateway` (litellm underneath; `openai/` models over the OpenAI fast
path, `openai_client`, without importing litellm).

Names are imported on first use (PEP 562): `ragjudge.llm.redact`, which the command line imports at start, must not
pull in litellm."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragjudge.llm.cache import ResponseCache, open_cache
    from ragjudge.llm.gateway import EmbeddingResponse, LLMError, LLMGateway, LLMResponse, ProviderUnreachable
    from ragjudge.llm.routes import ModelRoute, ModelRoutes
    from ragjudge.llm.usage import UsageTracker

_EXPORTS = {
    "ResponseCache": "cache", "open_cache": "cache", "EmbeddingResponse": "gateway", "LLMError": "gateway",
    "LLMGateway": "gateway", "LLMResponse": "gateway", "ProviderUnreachable": "gateway", "ModelRoute": "routes",
    "ModelRoutes": "routes", "UsageTracker": "usage",
}

__all__ = ["EmbeddingResponse", "LLMError", "LLMGateway", "LLMResponse", "ModelRoute", "ModelRoutes",
           "ProviderUnreachable", "ResponseCache", "UsageTracker", "open_cache"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ragjudge.llm' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"ragjudge.llm.{module}"), name)

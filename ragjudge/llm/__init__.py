"""Every LLM call ragjudge makes goes through `LLMGateway` (litellm underneath)."""

from ragjudge.llm.cache import ResponseCache, open_cache
from ragjudge.llm.gateway import EmbeddingResponse, LLMError, LLMGateway, LLMResponse, ProviderUnreachable
from ragjudge.llm.routes import ModelRoute, ModelRoutes
from ragjudge.llm.usage import UsageTracker

__all__ = ["EmbeddingResponse", "LLMError", "LLMGateway", "LLMResponse", "ModelRoute", "ModelRoutes",
           "ProviderUnreachable", "ResponseCache", "UsageTracker", "open_cache"]

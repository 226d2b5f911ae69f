"""Every LLM call ragjudge makes goes through `LLMGateway` (litellm underneath)."""

from ragjudge.llm.cache import ResponseCache, open_cache
from ragjudge.llm.gateway import EmbeddingResponse, LLMError, LLMGateway, LLMResponse
from ragjudge.llm.usage import UsageTracker

__all__ = ["EmbeddingResponse", "LLMError", "LLMGateway", "LLMResponse", "ResponseCache", "UsageTracker", "open_cache"]

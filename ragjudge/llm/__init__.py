"""Every LLM call ragjudge makes goes through `LLMGateway` (litellm underneath)."""

from ragjudge.llm.cache import ResponseCache
from ragjudge.llm.gateway import LLMError, LLMGateway, LLMResponse
from ragjudge.llm.usage import UsageTracker

__all__ = ["LLMError", "LLMGateway", "LLMResponse", "ResponseCache", "UsageTracker"]

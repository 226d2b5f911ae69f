"""Check every model a run will call before any paid work: credentials present, endpoint reachable.

Credentials: litellm's own key validation (`validate_environment`), or the models file's key variable.
Reachability: one free request per endpoint, `GET …/models` (OpenAI-compatible servers and OpenAI,
Anthropic), which also proves the key is accepted; for a custom `api_base` of another kind, that the server
answers at all. A run whose judge cannot be reached stops here, in seconds, instead of after generating.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ragjudge.errors import UsageError
from ragjudge.llm._litellm import litellm
from ragjudge.llm.faults import ProviderUnreachable, is_connection_error
from ragjudge.llm.redact import redact
from ragjudge.llm.routes import ModelRoute

OPENAI_COMPATIBLE = {"openai", "hosted_vllm", "openai_like", "custom_openai", "lm_studio", "deepseek", "groq",
                     "together_ai", "fireworks_ai", "mistral"}
TIMEOUT = 10.0


def check_credentials(route: ModelRoute, key: str | None) -> None:
    if key:
        return
    if route.api_key_env:
        raise UsageError(f"model {route.name}: the models file takes its key from ${route.api_key_env}, "
                         "which is not set")
    try:
        env = litellm().validate_environment(model=route.model, api_base=route.api_base)
    except Exception:  # litellm does not know how to check this provider: the first call will tell
        return
    missing = env.get("missing_keys") or []
    if missing and not env.get("keys_in_environment"):
        raise UsageError(f"model {route.name}: no credentials: set {', '.join(missing)} "
                         "(or api_key: os.environ/VARIABLE for it in a --models file)")


def _probe(route: ModelRoute, key: str | None) -> tuple[str, dict[str, str]] | None:
    """The URL and headers of a free request that reaches the endpoint, or None to skip."""
    provider = route.provider
    if provider in OPENAI_COMPATIBLE and (route.api_base or provider == "openai"):
        base = (route.api_base or "https://api.openai.com/v1").rstrip("/")
        return f"{base}/models", ({"Authorization": f"Bearer {key}"} if key else {})
    if provider == "anthropic" and not route.api_base:
        return "https://api.anthropic.com/v1/models", {"x-api-key": key or "", "anthropic-version": "2023-06-01"}
    if route.api_base:
        return route.api_base, {}
    return None


async def _reach(route: ModelRoute, key: str | None, client: Any) -> None:
    probe = _probe(route, key)
    if probe is None:
        return
    url, headers = probe
    try:
        response = await client.get(url, headers=headers, timeout=TIMEOUT)
    except Exception as exc:
        reason = "connection refused or host unreachable" if is_connection_error(exc) else type(exc).__name__
        raise ProviderUnreachable(redact(f"cannot reach {route.endpoint} (model {route.name}): {reason}",
                                         (key or "",))) from None
    if response.status_code in (401, 403):
        raise UsageError(f"model {route.name}: {route.endpoint} rejected the credentials "
                         f"(HTTP {response.status_code})")


async def preflight(routes: list[ModelRoute], keys: dict[str, str | None]) -> None:
    """Raise UsageError (missing or rejected key) or ProviderUnreachable before any work is done."""
    import httpx

    for route in routes:
        check_credentials(route, keys.get(route.name))
    seen: dict[str, ModelRoute] = {}
    for route in routes:  # one probe per endpoint
        seen.setdefault(route.endpoint, route)
    async with httpx.AsyncClient(follow_redirects=True) as client:
        await asyncio.gather(*(_reach(r, keys.get(r.name), client) for r in seen.values()))

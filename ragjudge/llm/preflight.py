"""Check every model a run will call before any paid work: credentials present, endpoint reachable.

Credentials: litellm's own key validation (`validate_environment`), or the models file's key variable.
Reachability: one free request per endpoint, to the very server litellm will send the run's requests to
(`ModelRoute.target`: an explicit api_base, else the variables litellm reads, `OPENAI_BASE_URL`,
`AZURE_API_BASE`..., else the provider's default), with the key litellm would send: `GET …/models` for
OpenAI-compatible servers, OpenAI and Anthropic, `GET …/openai/models` for Azure, which also proves the key is
accepted; for a server of another kind, that it answers at all. A run whose judge cannot be reached stops here,
in seconds, instead of after generating.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from ragjudge.errors import UsageError
from ragjudge.llm import openai_client
from ragjudge.llm._litellm import litellm
from ragjudge.llm.faults import ProviderUnreachable, is_connection_error
from ragjudge.llm.redact import redact
from ragjudge.llm.routes import ModelRoute, Target, _openai_handler, resolve_target

OPENAI_COMPATIBLE = {"openai", "hosted_vllm", "openai_like", "custom_openai", "lm_studio", "deepseek", "groq",
                     "together_ai", "fireworks_ai", "mistral"}
"""Providers whose servers answer OpenAI's `GET /models` (besides those litellm sends through its OpenAI
handler)."""
TIMEOUT = 10.0
_AZURE_AD = ("AZURE_AD_TOKEN", "AZURE_CLIENT_ID", "AZURE_USERNAME", "AZURE_FEDERATED_TOKEN_FILE")
"""Variables of Azure's token (Entra ID) sign-in, which litellm uses when there is no key."""


def check_credentials(route: ModelRoute, key: str | None) -> None:
    if key:
        return
    if route.api_key_env:
        raise UsageError(f"model {route.name}: the models file takes its key from ${route.api_key_env}, "
                         "which is not set")
    if route.provider == "azure":  # litellm's validate_environment asks for more than its Azure handler needs
        _check_azure(route)
        return
    if openai_client.fast_name(route.model) is not None:  # what litellm's validate_environment says for openai/
        env: dict[str, Any] = {"keys_in_environment": bool(os.environ.get("OPENAI_API_KEY")),
                               "missing_keys": [] if os.environ.get("OPENAI_API_KEY") else ["OPENAI_API_KEY"]}
    else:
        try:
            env = litellm().validate_environment(model=route.model, api_base=route.api_base)
        except Exception:  # litellm does not know how to check this provider: the first call will tell
            return
    missing = env.get("missing_keys") or []
    if missing and not env.get("keys_in_environment"):
        raise UsageError(f"model {route.name}: no credentials: set {', '.join(missing)} "
                         "(or api_key: os.environ/VARIABLE for it in a --models file)")


def _check_azure(route: ModelRoute) -> None:
    """What litellm's Azure handler (`_complete_azure` in litellm/main.py) cannot do without: an endpoint
    (api_base, `AZURE_API_BASE`), and a key (`AZURE_API_KEY`, `AZURE_OPENAI_API_KEY`) or an Entra ID token; the
    API version has a default (`AZURE_API_VERSION`, else litellm's)."""
    target = resolve_target(route.model, route.api_base, with_key=True)
    if not target.api_base:
        raise UsageError(f"model {route.name}: no Azure endpoint: set AZURE_API_BASE (or --api-base, or api_base "
                         "for it in a --models file)")
    ll = litellm()
    if not target.api_key and not any(os.environ.get(v) for v in _AZURE_AD) and not getattr(
            ll, "enable_azure_ad_token_refresh", False) and "azure_ad_token" not in route.params:
        raise UsageError(f"model {route.name}: no credentials: set AZURE_API_KEY (or AZURE_AD_TOKEN, or api_key: "
                         "os.environ/VARIABLE for it in a --models file)")


def _azure_version(route: ModelRoute) -> str:
    """The api-version litellm's Azure handler sends: api_version, litellm.api_version, AZURE_API_VERSION, or
    litellm.AZURE_DEFAULT_API_VERSION (`_complete_azure` in litellm/main.py)."""
    ll = litellm()
    return str(route.params.get("api_version") or getattr(ll, "api_version", None)
               or os.environ.get("AZURE_API_VERSION") or ll.AZURE_DEFAULT_API_VERSION)


def _probe(route: ModelRoute, target: Target) -> tuple[str, dict[str, str]] | None:
    """The URL and headers of a free request to the server litellm will call, or None to skip."""
    base, key, provider = target.api_base, target.api_key, target.provider
    if not base:  # litellm leaves the URL to the provider's SDK (Bedrock, Vertex...): the first call tells
        return None
    base = base.rstrip("/")
    if provider == "azure":
        return (f"{base}/openai/models?api-version={_azure_version(route)}", {"api-key": key} if key else {})
    if provider == "anthropic":
        return (f"{base.removesuffix('/v1/messages').removesuffix('/v1')}/v1/models",
                {"x-api-key": key, "anthropic-version": "2023-06-01"} if key else {})
    if provider in OPENAI_COMPATIBLE or _openai_handler(provider):
        return f"{base}/models", ({"Authorization": f"Bearer {key}"} if key else {})
    return base, {}


async def _reach(route: ModelRoute, key: str | None, client: Any) -> None:
    target = resolve_target(route.model, route.api_base, key, with_key=True)
    probe = _probe(route, target)
    if probe is None:
        return
    url, headers = probe
    secrets = (key or "", target.api_key or "")
    try:
        response = await client.get(url, headers=headers, timeout=TIMEOUT)
    except Exception as exc:
        reason = "connection refused or host unreachable" if is_connection_error(exc) else type(exc).__name__
        raise ProviderUnreachable(redact(f"cannot reach {route.endpoint} (model {route.name}): {reason}",
                                         secrets)) from None
    if headers and response.status_code in (401, 403):  # only a key we sent can be refused
        raise UsageError(redact(f"model {route.name}: {route.endpoint} rejected the credentials "
                                f"(HTTP {response.status_code})", secrets))


async def preflight(routes: list[ModelRoute], keys: dict[str, str | None]) -> None:
    """Raise UsageError (missing or rejected key) or ProviderUnreachable before any work is done."""
    import httpx

    for route in routes:
        check_credentials(route, keys.get(route.name))
    seen: dict[tuple[str, str | None], ModelRoute] = {}
    for route in routes:  # one probe per endpoint and key
        seen.setdefault((route.endpoint, route.api_key_env), route)
    async with httpx.AsyncClient(follow_redirects=True) as client:
        await asyncio.gather(*(_reach(r, keys.get(r.name), client) for r in seen.values()))

"""Where each model is served: endpoint, key and rate limits, per model.

`--api-base` sends every model to one server. A models file (`--models FILE` or `$RAGJUDGE_MODELS`) in
litellm's router format says it per model, so one judge panel can mix a local vLLM model with a provider's:

    model_list:
      - model_name: local-llama                  # the name used in --gen / --judge-models
        litellm_params:
          model: hosted_vllm/meta-llama/Llama-3.3-70B-Instruct
          api_base: http://gpu-box:8000/v1
          api_key: os.environ/VLLM_KEY           # keys only by environment variable: never in files or logs
          rpm: 600                               # optional pacing (requests / tokens per minute)
          tpm: 200000
      - model_name: openai/gpt-4o-mini
        litellm_params: {model: openai/gpt-4o-mini, rpm: 5000}

A model not in the file is served as litellm would serve it, at `--api-base` if given.

Where a model is served when neither says (`ModelRoute.target`) is decided exactly as litellm decides it when
it sends the request: the same precedence (an explicit api_base, then `litellm.api_base`, then the environment
variables litellm reads for that provider: `OPENAI_BASE_URL`, `OPENAI_API_BASE`, `AZURE_API_BASE`,
`HOSTED_VLLM_API_BASE`, `ANTHROPIC_API_BASE`..., then the provider's default URL), so the preflight probes, the
breaker names and the limiter paces the server the completions really go to.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from ragjudge.errors import InputError, UsageError
from ragjudge.formats.files import read_text
from ragjudge.llm import openai_client
from ragjudge.llm._litellm import litellm
from ragjudge.llm.redact import display_url

ENV_PREFIX = "os.environ/"

_OPENAI_HANDLER_NAMED = frozenset({"openai", "custom_openai", "deepinfra", "perplexity", "nvidia_nim", "cerebras",
                                   "baseten", "sambanova", "volcengine", "anyscale", "nebius", "wandb", "clarifai"})
"""Providers litellm 1.106's `completion()` (litellm/main.py) sends through its OpenAI handler
(`_complete_custom_openai`) by name; every provider in `litellm.openai_compatible_providers` or litellm's JSON
provider registry goes there too, unless an earlier branch of that dispatch has a handler of its own:"""
_OWN_HANDLER = frozenset({"azure", "azure_text", "deepseek", "azure_ai", "text-completion-openai", "fireworks_ai",
                          "together_ai", "heroku", "ragflow", "xai", "groq", "bedrock_mantle", "a2a", "gigachat", "sap",
                          "aiohttp_openai", "cometapi", "minimax", "hosted_vllm", "edenai", "fal_ai"})


@dataclass(frozen=True)
class Target:
    """Where litellm sends a model's requests, resolved as litellm resolves it (`resolve_target`)."""

    provider: str
    api_base: str | None
    """The base URL, or None when litellm leaves it to the provider's own SDK (Bedrock, Vertex, ...)."""
    api_key: str | None = field(default=None, repr=False)
    """The key litellm would send (only when asked for, for the preflight; never recorded)."""


def _secret(name: str) -> str | None:
    """A variable as litellm reads it (`get_secret_str`: the environment, or a secret manager it is set up with)."""
    from litellm.secret_managers.main import get_secret_str

    return get_secret_str(name) or None


def _openai_handler(provider: str) -> bool:
    """Does litellm's `completion()` send this provider through `_complete_custom_openai`?"""
    if provider in _OWN_HANDLER:
        return False
    if provider in _OPENAI_HANDLER_NAMED or provider in litellm().openai_compatible_providers:
        return True
    try:
        from litellm.llms.openai_like.json_loader import JSONProviderRegistry

        return bool(JSONProviderRegistry.exists(provider))
    except Exception:  # an older or newer litellm without the registry
        return False


def resolve_target(model: str, api_base: str | None = None, api_key: str | None = None, *,
                   with_key: bool = False) -> Target:
    """The provider, base URL and (with `with_key`) key litellm will use for `model`, by litellm's own rules.

    First `litellm.get_llm_provider`, the call `completion()` itself starts with: it fills the base URL and key
    of the providers it knows from their own variables or defaults (`GROQ_API_BASE`, `DEEPSEEK_API_BASE`,
    `LM_STUDIO_API_BASE`, `HOSTED_VLLM_API_KEY`...). What is still unset the provider's handler in
    litellm/main.py falls back on; mirrored here for the handlers the preflight can probe, each citing it. An
    `openai/` model of the fast path is answered by `openai_client`, by the same rules, without litellm."""
    if openai_client.fast_name(model) is not None:  # litellm: provider openai, then OpenAIGPTConfig's rules
        key = openai_client.api_key(api_key) if with_key else None
        return Target("openai", openai_client.base_url(api_base), key)
    ll = litellm()
    try:
        _, provider, dynamic_key, base = ll.get_llm_provider(model=model, api_base=api_base, api_key=api_key)
    except Exception:  # an unknown provider: `validate_model` says so in one line
        return Target(model.split("/", 1)[0], api_base, api_key if with_key else None)
    provider = str(provider)
    key = dynamic_key if dynamic_key is not None else api_key  # completion(): `api_key = dynamic_api_key`
    if provider == "azure":
        # _complete_azure: api_base or litellm.api_base or AZURE_API_BASE; key: api_key or litellm.api_key or
        # litellm.azure_key or AZURE_OPENAI_API_KEY or AZURE_API_KEY
        base = base or ll.api_base or _secret("AZURE_API_BASE")
        key = key or ll.api_key or ll.azure_key or _secret("AZURE_OPENAI_API_KEY") or _secret("AZURE_API_KEY")
    elif provider == "hosted_vllm":
        # _complete_hosted_vllm: api_base or litellm.api_base or HOSTED_VLLM_API_BASE
        base = base or ll.api_base or _secret("HOSTED_VLLM_API_BASE")
    elif provider == "anthropic":
        # _complete_anthropic: api_base or litellm.api_base or ANTHROPIC_API_BASE or ANTHROPIC_BASE_URL or the
        # default (it appends /v1/messages); the key as AnthropicModelInfo.get_api_key reads it
        from litellm.llms.anthropic.common_utils import AnthropicModelInfo

        base = base or ll.api_base or AnthropicModelInfo.get_api_base()
        key = AnthropicModelInfo.get_api_key(key)
    elif _openai_handler(provider) or provider in ("text-completion-openai", "aiohttp_openai"):
        # _complete_custom_openai resolves the base with `_resolve_openai_api_base` (api_base, litellm.api_base,
        # OPENAI_BASE_URL, OPENAI_API_BASE, https://api.openai.com/v1; _complete_text_completion_openai and
        # _complete_aiohttp_openai spell out the same chain) and the key as below: the same rules as litellm's
        # OpenAIGPTConfig.get_api_base / get_api_key, which we call
        base = ll.OpenAIGPTConfig.get_api_base(base)
        key = ll.OpenAIGPTConfig.get_api_key(key)
    else:  # the other handlers start from litellm.api_base too (`api_base or litellm.api_base or ...`)
        base = base or ll.api_base
    return Target(provider, str(base) if base else None, (str(key) if key else None) if with_key else None)


class ModelRoute(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    """The name the user writes; also the name usage is reported under."""
    model: str
    """The litellm model string sent to the provider."""
    api_base: str | None = None
    api_key_env: str | None = None
    rpm: float | None = None
    tpm: float | None = None
    params: dict[str, Any] = {}
    """Other litellm parameters from the models file (api_version, ...)."""

    @property
    def target(self) -> Target:
        """Where litellm will send this model's requests: the explicit api_base, else the variables litellm reads
        for the provider, else its default. Resolved at each use, like litellm does at each call (tens of
        microseconds; a cached value would go stale in a `model_copy`)."""
        return resolve_target(self.model, self.api_base)

    @property
    def provider(self) -> str:
        return self.target.provider

    @property
    def endpoint(self) -> str:
        """What a rate limit and a breaker belong to, and what messages name: the URL litellm sends to (without
        credentials), or the provider's name when litellm leaves the URL to the provider's SDK."""
        target = self.target  # resolved once: the limiter and the breaker ask for it on every request
        return display_url(target.api_base) if target.api_base else target.provider

    def api_key(self) -> str | None:
        return os.environ.get(self.api_key_env) if self.api_key_env else None

    def call_params(self) -> dict[str, Any]:
        """Parameters for litellm that select the endpoint (never the key: it is passed apart, never cached)."""
        params = dict(self.params)
        if self.api_base:
            params["api_base"] = self.api_base
        return params


class ModelRoutes:
    def __init__(self, routes: dict[str, ModelRoute] | None = None, *, api_base: str | None = None,
                 rpm: float | None = None, tpm: float | None = None, source: str | None = None):
        self.routes = routes or {}
        self.api_base = api_base
        self.rpm = rpm
        self.tpm = tpm
        self.source = source

    def route(self, name: str) -> ModelRoute:
        if name in self.routes:
            return self.routes[name]
        return ModelRoute(name=name, model=name, api_base=self.api_base, rpm=self.rpm, tpm=self.tpm)

    @classmethod
    def load(cls, path: str | Path | None, *, api_base: str | None = None, rpm: float | None = None,
             tpm: float | None = None) -> ModelRoutes:
        path = path or os.environ.get("RAGJUDGE_MODELS") or None
        if path is None:
            return cls(api_base=api_base, rpm=rpm, tpm=tpm)
        path = Path(path)
        if not path.is_file():
            raise UsageError(f"models file {path} does not exist" if not path.exists() else
                             f"models file {path} is not a file")
        try:
            raw = yaml.safe_load(read_text(path, "models file"))
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            raise InputError(f"not valid YAML/JSON: {str(exc).splitlines()[0]}", file=str(path),
                             line=mark.line + 1 if mark is not None else None) from None
        items = raw.get("model_list") if isinstance(raw, dict) else None
        if not isinstance(items, list):
            raise InputError("expected a 'model_list' (litellm router format)", file=str(path), field="model_list")
        routes = {}
        for i, item in enumerate(items):
            route = _route(item, path, i, default_rpm=rpm, default_tpm=tpm)
            if route.name in routes:
                raise InputError(f"model_name {route.name!r} appears twice", file=str(path),
                                 field=f"model_list[{i}].model_name")
            routes[route.name] = route
        return cls(routes, api_base=api_base, rpm=rpm, tpm=tpm, source=str(path))

    def describe(self) -> dict[str, Any]:
        """For run.json: names, models and endpoints; never keys."""
        return {"source": self.source, "api_base": self.api_base, "rpm": self.rpm, "tpm": self.tpm,
                "models": {n: json.loads(r.model_dump_json(exclude={"params"})) for n, r in self.routes.items()}}


def _route(item: Any, path: Path, i: int, *, default_rpm: float | None, default_tpm: float | None) -> ModelRoute:
    where = {"file": str(path)}
    if not isinstance(item, dict) or not isinstance(item.get("model_name"), str):
        raise InputError("each entry needs a model_name", field=f"model_list[{i}].model_name", **where)
    params = dict(item.get("litellm_params") or {})
    name = item["model_name"]
    key = params.pop("api_key", None)
    if key is not None and not (isinstance(key, str) and key.startswith(ENV_PREFIX)):
        raise InputError("give the key as os.environ/VARIABLE: keys are never read from files",
                         field=f"model_list[{i}].litellm_params.api_key", **where)
    info = item.get("model_info") or {}
    try:
        return ModelRoute(name=name, model=str(params.pop("model", name)), api_base=params.pop("api_base", None),
                          api_key_env=key[len(ENV_PREFIX):] if key else None,
                          rpm=params.pop("rpm", info.get("rpm", default_rpm)),
                          tpm=params.pop("tpm", info.get("tpm", default_tpm)), params=params)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise InputError(err["msg"], field=f"model_list[{i}].litellm_params.{err['loc'][0]}", **where) from None

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
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from ragjudge.errors import InputError, UsageError
from ragjudge.formats.files import read_text
from ragjudge.llm._litellm import litellm

ENV_PREFIX = "os.environ/"


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
    def provider(self) -> str:
        try:
            return str(litellm().get_llm_provider(model=self.model, api_base=self.api_base)[1])
        except Exception:  # checked with a clear message by `validate`
            return self.model.split("/", 1)[0]

    @property
    def endpoint(self) -> str:
        """What a rate limit and a breaker belong to: the server's URL, or the provider's name."""
        return self.api_base or self.provider

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

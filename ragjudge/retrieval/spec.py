"""Declarative pipeline specs (YAML; where they are found: docs/pipelines.md). The user's folders are searched before
the built-in `pipelines/`; the file name is the spec's name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ragjudge.errors import InputError, UsageError
from ragjudge.retrieval.corpus import ChunkingSpec
from ragjudge.specs import load_yaml_spec, spec_search_path

QueryStrategyName = Literal["last_turn", "all_user_turns", "full_conversation", "rewrite"]


class RetrieverSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    options: dict[str, Any] = Field(default_factory=dict)


class QuerySpec(BaseModel):
    """How a conversation becomes a query (applies to MTRAG tasks; ready-made BEIR queries are used as is)."""

    model_config = ConfigDict(extra="forbid")

    strategy: QueryStrategyName = "last_turn"
    model: str | None = None
    """rewrite: the litellm model that rewrites (the CLI's --rewrite-model overrides it)."""
    params: dict[str, Any] = Field(default_factory=dict)
    """rewrite: extra completion parameters (max_tokens, seed...); temperature is 0 unless set here."""


class PipelineSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    description: str = ""
    retriever: RetrieverSpec
    query: QuerySpec = Field(default_factory=QuerySpec)
    k: int = Field(10, ge=1)
    chunking: ChunkingSpec | None = None
    """Split corpus lines (documents) into passages; null when the corpus already holds passages."""
    strip_speaker_tags: bool = True
    """Drop MTRAG's `|user|:` / `|agent|:` turn markers from queries (they are markup, not words)."""
    source: str | None = Field(None, exclude=True)

    def record(self) -> dict[str, Any]:
        """What runs and results record: the full spec and where it came from."""
        return {**self.model_dump(mode="json"), "source": self.source}


def load_spec_file(path: str | Path) -> PipelineSpec:
    path = Path(path)
    spec = load_yaml_spec(path, PipelineSpec, "pipeline", defaults={"name": path.stem})
    if spec.name != path.stem:
        raise InputError(f"name {spec.name!r} must match the file name {path.stem!r}", file=str(path), field="name")
    return spec.model_copy(update={"source": str(path)})


def available_pipelines(extra_dirs: list[str | Path] | None = None) -> dict[str, Path]:
    """Spec name → file; user folders override built-in specs of the same name."""
    found: dict[str, Path] = {}
    for folder in reversed(spec_search_path("pipelines", extra_dirs)):
        if not folder.is_dir():
            if folder in [Path(d) for d in extra_dirs or []]:
                raise UsageError(f"pipeline spec folder not found: {folder}")
            continue
        for path in sorted(folder.glob("*.y*ml")):
            found[path.stem] = path
    return found


def load_pipeline(name: str, extra_dirs: list[str | Path] | None = None) -> PipelineSpec:
    """A spec by name, or a path to a spec file."""
    if name.endswith((".yaml", ".yml")) or "/" in name:
        if not Path(name).is_file():
            raise UsageError(f"pipeline spec file not found: {name}")
        return load_spec_file(name)
    specs = available_pipelines(extra_dirs)
    if name not in specs:
        raise UsageError(f"unknown pipeline {name!r} (available: {', '.join(sorted(specs)) or 'none'})")
    return load_spec_file(specs[name])

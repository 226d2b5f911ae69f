"""Generators by name: what `--gen` names."""

from __future__ import annotations

from ragjudge.generation.base import Generator


def build_generator(name: str, **kwargs: object) -> Generator:
    """`extractive` is the offline baseline; any other name is a litellm model."""
    if name == "extractive":
        from ragjudge.generation.extractive import ExtractiveGenerator

        return ExtractiveGenerator()
    from ragjudge.generation.llm import LLMGenerator

    return LLMGenerator(name, **kwargs)  # type: ignore[arg-type]

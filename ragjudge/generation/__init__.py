"""Generators: turn a task (conversation + passages) into an answer."""

from ragjudge.generation.base import GenerationInput, Generator
from ragjudge.generation.registry import build_generator

__all__ = ["GenerationInput", "Generator", "build_generator"]

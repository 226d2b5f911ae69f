"""The generator interface: a batch of tasks with their passages in, one Prediction per task out."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass

from ragjudge.models import Passage, Prediction, Task

IDK_SENTENCE = "I do not have specific information"


@dataclass(frozen=True)
class GenerationInput:
    task: Task
    passages: list[Passage]


class Generator(ABC):
    name: str
    needs_llm: bool = False

    @abstractmethod
    async def generate(self, items: list[GenerationInput], on_progress: Callable[[int], None]) -> list[Prediction]:
        """Answer every item, in order; a failed item is a Prediction with `error` set."""

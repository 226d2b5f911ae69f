"""An offline baseline generator: the passage sentences that best overlap the conversation. It needs no model, so
the whole loop runs anywhere; below an overlap threshold it says the IDK sentence, exercising IDK judges and
conditioning.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ragjudge.generation.base import IDK_SENTENCE, GenerationInput, Generator
from ragjudge.models import Prediction

_WORD = re.compile(r"[a-z0-9]+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
STOPWORDS = frozenset(
    "a an and are as at be been but by can could did do does for from had has have how i if in into is it its "
    "me my of on or our so than that the their them then there these they this to was we were what when where "
    "which who whom why will with would you your about also any just more most not some such tell please "
    "should much many one".split()
)


def content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in STOPWORDS and len(w) > 1}


class ExtractiveGenerator(Generator):
    name = "extractive"

    def __init__(self, *, min_overlap: float = 0.34, max_words: int = 120, history_weight: float = 0.3):
        self.min_overlap = min_overlap
        self.max_words = max_words
        self.history_weight = history_weight

    def answer(self, item: GenerationInput) -> str:
        question = content_words(item.task.question)
        history = set().union(*(content_words(t.text) for t in item.task.history if t.speaker == "user")) - question
        scored: list[tuple[float, int, str]] = []
        for p_index, passage in enumerate(item.passages):
            for s_index, sentence in enumerate(_SENTENCE.split(passage.text.strip())):
                words = content_words(sentence)
                if not words:
                    continue
                score = len(words & question) + self.history_weight * len(words & history)
                scored.append((score, p_index * 1000 + s_index, sentence.strip()))
        if not question or not scored:
            return f"{IDK_SENTENCE} to answer that."
        scored.sort(key=lambda s: (-s[0], s[1]))
        best = scored[0][0]
        if best / len(question) < self.min_overlap:
            return f"{IDK_SENTENCE} about that in the documents."
        chosen: list[tuple[int, str]] = []
        words = 0
        for score, order, sentence in scored:
            if score <= best / 2 or words >= self.max_words:
                break
            chosen.append((order, sentence))
            words += len(sentence.split())
        return " ".join(s for _, s in sorted(chosen))

    async def generate(self, items: list[GenerationInput], on_progress: Callable[[int], None]) -> list[Prediction]:
        predictions = []
        for item in items:
            predictions.append(Prediction(task_id=item.task.task_id, text=self.answer(item), model=self.name))
            on_progress(1)
        return predictions

"""The agents that play the main character (`--gen`; each: docs/benches/dialsim.md#options). `mc-idk` scores the
unanswerable share, the floor every agent must beat; `mc-random` is seeded; `mc-lexical` weights an item 1/rank (all
alike for memories in date order), a no-LLM check that memory and retrieval carry the answer. A litellm model gets
the system message "You are a helpful assistant.".
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass

from ragjudge.bench.dialsim.memory import Recall
from ragjudge.bench.dialsim.metrics import normalize, phrase_in
from ragjudge.bench.dialsim.plan import OPTION_LETTERS, PlannedQuestion
from ragjudge.bench.dialsim.prompts import PARAMS, SYSTEM, AnswerFormat
from ragjudge.errors import UsageError
from ragjudge.llm import LLMGateway

IDK_TEXT = "I don't know."


@dataclass
class Answer:
    text: str
    model: str | None = None
    cached: bool = False
    seconds: float = 0.0
    """Time the model took to answer (0 for offline agents; unknown, 0, for a cached reply)."""


class Agent(ABC):
    name: str

    @abstractmethod
    async def answer(self, q: PlannedQuestion, fmt: AnswerFormat, recall: Recall, prompt: str) -> Answer: ...


def lexical_choice(q: PlannedQuestion, recall: Recall) -> int:
    options = [normalize(o) for o in q.options[:4]]
    scores = [0.0] * 4
    for rank, item in enumerate(recall.items):
        body = normalize(item.body)
        weight = 1.0 / (rank + 1) if recall.ranked else 1.0
        for i, option in enumerate(options):
            if phrase_in(option, body):
                scores[i] += weight
    best = max(range(4), key=lambda i: (scores[i], -i))
    return best if scores[best] > 0 else 4


OFFLINE_CHOICES: dict[str, Callable[[PlannedQuestion, Recall], int]] = {
    "mc-idk": lambda q, recall: 4,
    "mc-random": lambda q, recall: random.Random(f"mc-random/{q.id}").randrange(5),
    "mc-lexical": lexical_choice,
}
"""Each offline agent's option (0-4) for a question."""
OFFLINE_AGENTS = tuple(OFFLINE_CHOICES)


class OfflineAgent(Agent):
    def __init__(self, name: str):
        self.name = name

    async def answer(self, q: PlannedQuestion, fmt: AnswerFormat, recall: Recall, prompt: str) -> Answer:
        index = OFFLINE_CHOICES[self.name](q, recall)
        return Answer(OPTION_LETTERS[index] if fmt == "mc" else IDK_TEXT if index == 4 else q.options[index])


class LLMAgent(Agent):
    def __init__(self, model: str, gateway: LLMGateway):
        self.name = model
        self.gateway = gateway

    async def answer(self, q: PlannedQuestion, fmt: AnswerFormat, recall: Recall, prompt: str) -> Answer:
        messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}]
        response = await self.gateway.complete(self.name, messages, **PARAMS)
        return Answer(response.text, model=self.name, cached=response.cached, seconds=response.latency)


def check_agent(gen: str, fmt: AnswerFormat) -> None:
    if gen in ("mc-random", "mc-lexical") and fmt == "open":
        raise UsageError(f"--gen {gen} picks among the options, which -T format=open does not show: use "
                         "-T format=mc or mc-nl (or --gen mc-idk, or a model)")


def build_agent(gen: str, gateway: LLMGateway | None) -> Agent:
    if gen in OFFLINE_CHOICES:
        return OfflineAgent(gen)
    if gateway is None:
        raise RuntimeError("an LLM agent needs the run's gateway")
    return LLMAgent(gen, gateway)

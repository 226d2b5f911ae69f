"""The agents that play the main character (`--gen`): any litellm model, or an offline baseline.

- `mc-idk`: always "I don't know" ((E)): scores the unanswerable share, the floor every agent must beat;
- `mc-random`: a seeded uniform pick among the five options: the paper's "Random Guessing" (20%);
- `mc-lexical`: reads the recalled memory and picks the option (A-D) named in it most, weighting each
  item by its retrieval rank (1/rank; all items alike for memories in date order), or (E) when no option
  is named: a no-LLM check that memory and retrieval carry the answer.
- a litellm model: the official prompt, system message "You are a helpful assistant.", temperature 0.2,
  top-p 0.1 (the paper's settings).
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from dataclasses import dataclass

from ragjudge.bench.dialsim.memory import Recall
from ragjudge.bench.dialsim.metrics import normalize, phrase_in
from ragjudge.bench.dialsim.plan import OPTION_LETTERS, PlannedQuestion
from ragjudge.bench.dialsim.prompts import PARAMS, SYSTEM, AnswerFormat
from ragjudge.errors import UsageError
from ragjudge.llm import LLMGateway

OFFLINE_AGENTS = ("mc-idk", "mc-random", "mc-lexical")
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
    needs_llm: bool = False

    @abstractmethod
    async def answer(self, q: PlannedQuestion, fmt: AnswerFormat, recall: Recall, prompt: str) -> Answer: ...


def say(q: PlannedQuestion, fmt: AnswerFormat, index: int) -> str:
    """An offline agent's reply for option `index` in the format's words."""
    if fmt == "mc":
        return OPTION_LETTERS[index]
    return IDK_TEXT if index == 4 else q.options[index]


class IdkAgent(Agent):
    name = "mc-idk"

    async def answer(self, q: PlannedQuestion, fmt: AnswerFormat, recall: Recall, prompt: str) -> Answer:
        return Answer(say(q, fmt, 4))


class RandomAgent(Agent):
    name = "mc-random"

    async def answer(self, q: PlannedQuestion, fmt: AnswerFormat, recall: Recall, prompt: str) -> Answer:
        return Answer(say(q, fmt, random.Random(f"mc-random/{q.id}").randrange(5)))


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


class LexicalAgent(Agent):
    name = "mc-lexical"

    async def answer(self, q: PlannedQuestion, fmt: AnswerFormat, recall: Recall, prompt: str) -> Answer:
        return Answer(say(q, fmt, lexical_choice(q, recall)))


class LLMAgent(Agent):
    needs_llm = True

    def __init__(self, model: str, gateway: LLMGateway):
        self.name = model
        self.model = model
        self.gateway = gateway

    async def answer(self, q: PlannedQuestion, fmt: AnswerFormat, recall: Recall, prompt: str) -> Answer:
        messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}]
        response = await self.gateway.complete(self.model, messages, **PARAMS)
        return Answer(response.text, model=self.model, cached=response.cached, seconds=response.latency)


def check_agent(gen: str, fmt: AnswerFormat) -> None:
    if gen in ("mc-random", "mc-lexical") and fmt == "open":
        raise UsageError(f"--gen {gen} picks among the options, which -T format=open does not show: use "
                         "-T format=mc or mc-nl (or --gen mc-idk, or a model)")


def build_agent(gen: str, gateway: LLMGateway | None) -> Agent:
    offline = {"mc-idk": IdkAgent, "mc-random": RandomAgent, "mc-lexical": LexicalAgent}
    if gen in offline:
        return offline[gen]()
    if gateway is None:
        raise RuntimeError("an LLM agent needs the run's gateway")
    return LLMAgent(gen, gateway)

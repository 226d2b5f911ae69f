"""MTRAG's generation prompt (the paper's Appendix D.2 instruction), sent through the LLM gateway. The paper
composes instruction, passages and turns through each model's chat template; with chat APIs the instruction and
passages are the system message and the conversation the chat turns, which is what a chat template does.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from ragjudge.generation.base import GenerationInput, Generator
from ragjudge.llm import LLMError, LLMGateway
from ragjudge.models import Prediction

INSTRUCTION = (
    "Given one or more documents and a user query, generate a response to the query using less than 150 words "
    "that is grounded in the provided documents. If no answer can be found in the documents, say, "
    '"I do not have specific information"'
)


def generation_messages(item: GenerationInput) -> list[dict[str, str]]:
    system = INSTRUCTION + "".join(f"\n\nPASSAGE {i}\n{p.text}" for i, p in enumerate(item.passages, start=1))
    return [{"role": "system", "content": system},
            *({"role": "user" if t.speaker == "user" else "assistant", "content": t.text} for t in item.task.input)]


class LLMGenerator(Generator):
    needs_llm = True

    def __init__(self, model: str, *, gateway: LLMGateway, max_tokens: int = 400):
        self.name = model
        self.gateway = gateway
        self.max_tokens = max_tokens

    async def _one(self, item: GenerationInput, on_progress: Callable[[int], None]) -> Prediction:
        try:
            response = await self.gateway.complete(self.name, generation_messages(item), max_tokens=self.max_tokens)
            prediction = Prediction(task_id=item.task.task_id, text=response.text.strip(), model=self.name,
                                    tokens=response.prompt_tokens + response.completion_tokens,
                                    latency=response.latency)
        except LLMError as exc:
            prediction = Prediction(task_id=item.task.task_id, text="", model=self.name, error=str(exc))
        on_progress(1)
        return prediction

    async def generate(self, items: list[GenerationInput], on_progress: Callable[[int], None]) -> list[Prediction]:
        return list(await asyncio.gather(*(self._one(i, on_progress) for i in items)))

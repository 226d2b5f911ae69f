"""Query strategies: how a dialogue's history becomes what a reranker matches sentences against (each strategy:
docs/benches/sentence-retrieval.md, Query strategies; `turn_mixture` is the paper's Eq. 2).

A query is a list of (weight, text) parts; a reranker sums the parts' weighted scores. Only the history is read: the
dialogue model does not even hold the `target` turn, and candidates' labels are never passed here.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ragjudge.engine.bench import fingerprint
from ragjudge.bench.sentence_retrieval.data import Dialogue
from ragjudge.errors import InputError
from ragjudge.llm import LLMGateway
from ragjudge.models import Task, Turn
from ragjudge.retrieval.queries import QueryBuilder
from ragjudge.retrieval.spec import QuerySpec

StrategyName = Literal["last_turn", "all_turns", "turn_mixture", "title_last_turn", "rewrite"]
QueryParts = list[tuple[float, str]]


class QueryConfig(BaseModel):
    """The `query:` section of a reranker spec; `beta` and `delta` may also be grid keys."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    strategy: StrategyName = "last_turn"
    beta: float = Field(0.3, ge=0, le=1, description="turn_mixture: weight of the turns before the last.")
    delta: float = Field(0.01, ge=0, description="turn_mixture: decay of the earlier turns' weights.")
    model: str | None = Field(None, description="rewrite: the litellm model (--rewrite-model fills it).")
    params: dict[str, Any] = Field(default_factory=dict, description="rewrite: extra completion parameters.")

    def key(self) -> str:
        """Names the queries this config builds (the same config in two systems builds them once)."""
        if self.strategy == "turn_mixture":
            return f"turn_mixture(beta={self.beta:g},delta={self.delta:g})"
        if self.strategy == "rewrite":
            extra = f",{fingerprint(self.params)}" if self.params else ""
            return f"rewrite({self.model}{extra})"
        return self.strategy


def turn_texts(dialogue: Dialogue) -> list[str]:
    """t_1..t_n, with the subreddit and the title prefixed to t_1 (Section 3.1 of the paper)."""
    bodies = [t.body.strip() for t in dialogue.context]
    first = "\n".join(p for p in (dialogue.subreddit.strip(), dialogue.title.strip(), bodies[0]) if p)
    return [first, *bodies[1:]]


def turn_mixture_weights(n: int, beta: float, delta: float) -> list[float]:
    """Weights of t_1..t_n in Eq. 2. delta multiplies numerator and denominator of alpha_i and cancels, so
    it is left out (which also makes delta = 0 the uniform limit instead of 0/0). With one turn, t_1 gets 1."""
    if n < 1:
        raise ValueError("a dialogue has at least one turn")
    if n == 1:
        return [1.0]
    last = n - 1  # T in the paper: the index of the last history turn t_{n-1}
    decay = [math.exp(-delta * abs(last - i)) for i in range(1, n)]
    total = sum(decay)
    return [beta * d / total for d in decay] + [1.0 - beta]


def build_parts(dialogue: Dialogue, config: QueryConfig) -> QueryParts:
    """The query of every strategy but `rewrite`, without empty parts (their weight is dropped, not moved)."""
    texts = turn_texts(dialogue)
    if config.strategy == "last_turn":
        parts = [(1.0, texts[-1])]
    elif config.strategy == "all_turns":
        parts = [(1.0, "\n".join(t for t in texts if t))]
    elif config.strategy == "title_last_turn":
        last = dialogue.context[-1].body.strip()
        parts = [(1.0, "\n".join(p for p in (dialogue.title.strip(), last) if p))]
    elif config.strategy == "turn_mixture":
        weights = turn_mixture_weights(len(texts), config.beta, config.delta)
        parts = list(zip(weights, texts, strict=True))
    else:
        raise ValueError(f"{config.strategy} queries are built by rewrite_query")
    return [(w, t) for w, t in parts if t and w > 0]


def as_task(dialogue: Dialogue) -> Task:
    """The dialogue as a ragjudge conversation for the rewrite prompt: the thread's initiator (author of the
    first turn) speaks as the user, responders as the agent, and t_n is always the user's latest turn."""
    texts = turn_texts(dialogue)
    initiator = dialogue.context[0].author_id
    turns = []
    for i, (turn, text) in enumerate(zip(dialogue.context, texts, strict=True)):
        if i == len(texts) - 1:
            speaker = "user"
        elif initiator is not None and turn.author_id is not None:
            speaker = "user" if turn.author_id == initiator else "agent"
        else:
            speaker = "user" if (len(texts) - 1 - i) % 2 == 0 else "agent"
        turns.append(Turn(speaker=speaker, text=text))
    return Task(task_id=dialogue.id, conversation_id=dialogue.id, turn=len(turns), input=turns)


async def rewrite_query(dialogue: Dialogue, config: QueryConfig, gateway: LLMGateway | None
                        ) -> tuple[QueryParts, dict[str, Any]]:
    """(parts, what happened: class, fallback, raw answer) for the `rewrite` strategy."""
    spec = QuerySpec(strategy="rewrite", model=config.model, params=dict(config.params))
    builder = QueryBuilder(spec, gateway=gateway, strip_tags=True)
    try:
        [built] = await builder.build([as_task(dialogue)])
    except InputError as exc:  # the last turn is empty: nothing to rewrite
        return [], {"fallback": str(exc)}
    info = {k: v for k, v in (("class", built.question_class), ("fallback", built.fallback),
                              ("raw", built.raw)) if v is not None}
    return ([(1.0, built.text)] if built.text else []), info

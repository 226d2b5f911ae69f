"""What the CXMArena solvers share: a predictions file as the system under test, and one item put to a model.

A call that fails for good is a row with `error` (left out of the metrics, counted); a wrong-format answer of the model
under test is a wrong answer (`parse_error`); an unreadable judge answer is an error.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any

from ragjudge.engine.bench import Record, Solver
from ragjudge.llm import LLMError, LLMGateway, LLMResponse

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext


class FileRowsSolver(Solver[Any]):
    """Outputs already made: a predictions file's rows (each row its own output; `given` says so for other items);
    nothing to journal."""

    journaled = False
    name = "predictions"

    def fingerprint(self, sample: Any) -> str:
        return self.name

    def given(self, sample: Any) -> tuple[str, Record]:
        return sample.id, dict(sample.row)

    async def solve(self, samples: Sequence[Any], ctx: RunContext) -> AsyncIterator[tuple[str, Record]]:
        for sample in samples:
            yield self.given(sample)


async def complete(gateway: LLMGateway, model: str, msgs: list[dict[str, Any]],
                   params: dict[str, Any]) -> LLMResponse | str:
    """The response, or the error text of a call that failed for good."""
    try:
        return await gateway.complete(model, msgs, **params)
    except LLMError as exc:
        return str(exc)


def usage(response: LLMResponse) -> dict[str, Any]:
    """What a prediction row keeps of a call: its tokens, and whether the cache answered."""
    return {"prompt_tokens": response.prompt_tokens, "completion_tokens": response.completion_tokens,
            "cached": response.cached}

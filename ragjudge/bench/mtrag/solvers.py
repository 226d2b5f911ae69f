"""The systems under test for MTRAG: a generator (with its passages: reference or retrieved), or
predictions read from a file (`ragjudge judge`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any

from ragjudge.engine.bench import EachSolver, Record, Solver
from ragjudge.bench.mtrag.settings import MAX_REFERENCES_FOR_TOP_UP, RAG_PASSAGES, generation_inputs
from ragjudge.generation import GenerationInput, Generator
from ragjudge.models import Passage, Prediction, Task

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext
    from ragjudge.retrieval.pipeline import Pipeline


def passage_ids(passages: list[Passage] | None) -> list[str] | None:
    return None if passages is None else [p.document_id for p in passages]


class GeneratorSolver(EachSolver[Task]):
    """Answers each task from the passages its setting shows. With a pipeline, passages are retrieved for
    every task first, and each answer is keyed by the passages it saw: retrieval can change between runs
    while the spec does not (a failed rewrite that now succeeds), and an answer must never be reported
    next to passages it was not generated from."""

    def __init__(self, generator: Generator, setting: str, pipeline: Pipeline | None = None,
                 corpus: str | None = None):
        self.generator = generator
        self.name = generator.name
        self.setting = setting
        self.pipeline = pipeline
        self.corpus = corpus
        self.inputs: dict[str, GenerationInput] = {}
        self.retrieval_info: dict[str, Any] | None = None

    async def prepare(self, samples: Sequence[Task], ctx: RunContext) -> None:
        retrieved = None
        if self.pipeline is not None:
            self.pipeline.gateway = ctx.gateway
            self.pipeline.open(self.corpus, ctx.bars)
            k = max(self.pipeline.spec.k, RAG_PASSAGES + MAX_REFERENCES_FOR_TOP_UP)
            retrieval = await self.pipeline.retrieve_tasks(list(samples), k)
            retrieved = retrieval.passages
            self.retrieval_info = {**self.pipeline.record(), "query_strategy": retrieval.query_summary, "k": k}
        self.inputs = {item.task.key: item for item in generation_inputs(list(samples), self.setting, retrieved)}

    def fingerprint(self, sample: Task) -> str:
        if self.pipeline is None:
            return f"{self.generator.name}/{self.setting}"
        shown = passage_ids(self.inputs[sample.key].passages)
        return str([self.generator.name, self.setting, self.pipeline.spec.record(), self.pipeline.index_identity(),
                    shown])

    def key(self, sample: Task) -> str:
        return sample.key

    async def solve_one(self, sample: Task, ctx: RunContext) -> Record:
        item = self.inputs[sample.key]
        [prediction] = await self.generator.generate([item], lambda n: None)
        if self.pipeline is not None and prediction.contexts is None:
            prediction = prediction.model_copy(update={"contexts": item.passages})
        return prediction.model_dump(exclude_none=True)


class PredictionsSolver(Solver[Task]):
    """Predictions already made (an MTRAG evaluation file): nothing to generate, nothing to journal."""

    journaled = False
    name = "predictions"

    def __init__(self, predictions: dict[str, Prediction]):
        self.predictions = predictions

    def fingerprint(self, sample: Task) -> str:
        return "file"

    async def solve(self, samples: Sequence[Task], ctx: RunContext) -> AsyncIterator[tuple[str, Record]]:
        for task in samples:
            yield task.key, self.predictions[task.key].model_dump(exclude_none=True)

"""The systems under test for MTRAG (and MTRAG-UN): a generator with the passages its setting shows (the reference
passages, or retrieved ones through a pipeline), or predictions read from a file (`ragjudge judge`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragjudge.bench.mtrag.settings import MAX_REFERENCES_FOR_TOP_UP, RAG_PASSAGES, generation_inputs, needs_retrieval
from ragjudge.engine.bench import EachSolver, Record, Solver
from ragjudge.errors import UsageError
from ragjudge.generation import GenerationInput, Generator
from ragjudge.models import Prediction, Task

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext
    from ragjudge.retrieval.pipeline import Pipeline
    from ragjudge.retrieval.queries import BuiltQuery

RETRIEVAL_FACTS = "retrieval"
"""`ctx.facts` key of what the generator's retrieval did (the pipeline as opened, the query strategy's counts)."""


def retrieval_pipeline(o: Any) -> Pipeline | None:
    """The retrieval pipeline the options' setting needs (`o`: MtragOptions); options that would be ignored are
    errors, not no-ops."""
    if not needs_retrieval(o.setting):
        if o.pipeline or o.corpus or o.rewrite_model or o.pipeline_dir or o.index_dir:
            raise UsageError("--pipeline, --corpus, --rewrite-model, --pipeline-dir and --index-dir are for "
                             "-T setting=reference+rag or rag")
        return None
    if not o.pipeline:
        raise UsageError(f"-T setting={o.setting} retrieves passages: pass --pipeline NAME and --corpus FILE")
    from ragjudge.retrieval.pipeline import Pipeline
    from ragjudge.retrieval.spec import load_pipeline

    pipe = Pipeline(load_pipeline(o.pipeline, o.pipeline_dir), extra_dirs=o.pipeline_dir,
                    index_dir=Path(o.index_dir) if o.index_dir else None, rewrite_model=o.rewrite_model)
    if pipe.spec.query.strategy == "rewrite" and not pipe.spec.query.model:
        raise UsageError(f"pipeline {o.pipeline} rewrites queries: pass --rewrite-model MODEL (or set query.model)")
    if o.corpus is None and not hasattr(pipe.retriever, "attach"):
        raise UsageError(f"pipeline {o.pipeline} ({pipe.retriever.kind}) indexes a corpus: pass --corpus FILE")
    return pipe


class GeneratorSolver(EachSolver[Task]):
    """Answers each task from the passages its setting shows. With a pipeline, every task is retrieved for first and
    each answer is keyed by the passages it saw: retrieval can change between runs while the spec does not, and an
    answer must never be reported next to passages it was not generated from."""

    def __init__(self, generator: Generator, setting: str, pipeline: Pipeline | None = None,
                 corpus: str | None = None):
        self.generator = generator
        self.name = generator.name
        self.setting = setting
        self.pipeline = pipeline
        self.corpus = corpus
        self.inputs: dict[str, GenerationInput] = {}
        self.queries: dict[str, BuiltQuery] = {}

    async def prepare(self, samples: Sequence[Task], ctx: RunContext) -> None:
        retrieved = None
        if self.pipeline is not None:
            self.pipeline.gateway = ctx.gateway
            self.pipeline.open(self.corpus, ctx.bars)
            k = max(self.pipeline.spec.k, RAG_PASSAGES + MAX_REFERENCES_FOR_TOP_UP)
            retrieval = await self.pipeline.retrieve_tasks(list(samples), k)
            retrieved = retrieval.passages
            self.queries = retrieval.queries
            ctx.facts[RETRIEVAL_FACTS] = {**self.pipeline.record(), "query_strategy": retrieval.query_summary, "k": k}
        self.inputs = {item.task.key: item for item in generation_inputs(list(samples), self.setting, retrieved)}

    def fingerprint(self, sample: Task) -> str:
        if self.pipeline is None:
            return f"{self.generator.name}/{self.setting}"
        shown = [p.document_id for p in self.inputs[sample.key].passages]
        return str([self.generator.name, self.setting, self.pipeline.spec.record(), self.pipeline.index_identity(),
                    shown])

    def key(self, sample: Task) -> str:
        return sample.key

    async def solve_one(self, sample: Task, ctx: RunContext) -> Record:
        item = self.inputs[sample.key]
        [prediction] = await self.generator.generate([item], lambda n: None)
        if self.pipeline is None:
            return prediction.model_dump(exclude_none=True)
        if prediction.contexts is None:
            prediction = prediction.model_copy(update={"contexts": item.passages})
        return {**prediction.model_dump(exclude_none=True), **query_record(self.queries.get(sample.key))}


def query_record(query: BuiltQuery | None) -> Record:
    """The query searched for a task, as its output keeps it (the sample log's `metadata.query`)."""
    if query is None:
        return {}
    found = {"text": query.text, "strategy": query.strategy, "class": query.question_class,
             "fallback": query.fallback}
    return {"query": {k: v for k, v in found.items() if v is not None}}


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

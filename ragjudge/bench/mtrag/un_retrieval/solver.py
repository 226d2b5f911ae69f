"""MTRAG-UN's retrieval solver: `mtrag-retrieval`'s search, with `rewrite` queries first rewritten by an LLM
(`ragjudge.retrieval.queries`: cached; a malformed answer or failed call falls back to the last turn, said so)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ragjudge.bench.mtrag.retrieval.data import RetrievalQuery
from ragjudge.bench.mtrag.retrieval.solver import PipelineSolver
from ragjudge.retrieval.queries import QueryBuilder
from ragjudge.retrieval.spec import QuerySpec

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext
    from ragjudge.retrieval.pipeline import Pipeline


class RewritingSolver(PipelineSolver):
    """PipelineSolver whose `rewrite` queries are rewritten by an LLM before the batch search."""

    def __init__(self, pipeline: Pipeline, corpus: str | None, k: int, spec: QuerySpec | None):
        super().__init__(pipeline, corpus, k)
        self.spec = spec

    def fingerprint(self, sample: RetrievalQuery) -> str:
        return f"{self.name}|{self.spec.model if self.spec and sample.kind == 'rewrite' else ''}"

    async def queries(self, samples: Sequence[RetrievalQuery], ctx: RunContext) -> list[tuple[str, dict[str, Any]]]:
        built: list[tuple[str, dict[str, Any]]] = [(q.text, {}) for q in samples]
        todo = [i for i, q in enumerate(samples) if q.kind == "rewrite"]
        if todo:
            assert self.spec is not None
            builder = QueryBuilder(self.spec, gateway=ctx.gateway, strip_tags=self.pipeline.spec.strip_speaker_tags)
            tasks = [samples[i].task for i in todo]
            rewritten = await builder.build([t for t in tasks if t is not None])
            for i, query in zip(todo, rewritten, strict=True):
                built[i] = (query.text, {"rewrite_class": query.question_class,
                                         **({"rewrite_fallback": query.fallback} if query.fallback else {})})
        return built

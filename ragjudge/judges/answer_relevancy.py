"""`answer_relevancy`: RAGAS ResponseRelevancy, computed by the ragas library itself.

RAGAS's definition (`ragas.metrics._answer_relevance.ResponseRelevancy`, Es et al. 2023): an LLM writes the
question the answer answers and says whether the answer is noncommittal ("I don't know"); the score is the cosine
similarity of that question's embedding to the user's question, and 0 when the answer is noncommittal. ragas's
class, prompt, parsing and scoring run as they are; the LLM is the gateway adapter (`ragas_llm`), the embeddings
a ragjudge encoder (`ragas_embeddings`: the bundled MiniLM by default, options `encoder`, `embedding_model`).

Deliberate differences from `ragas.evaluate` (docs/judges.md):
- one generated question (`strictness` 1), at temperature 0. RAGAS asks for 3 (one request with n=3 at
  temperature 0.3) and averages their similarities; at temperature 0 the three would be one question. (A provider
  that ignores n, as the local test server does, gives RAGAS one question too; ragas then warns and uses it.)
- ragas embeds synchronously inside its scoring; we fetch the two vectors first (async, through the embedding
  store), between ragas's question generation and ragas's own similarity and score (`_ascore` below).
- an empty response is not applicable; a failed call or unparsable answer is an error with the raw text; no
  hidden repair calls; NaN (no question generated) is an error.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from ragjudge.judges import loading
from ragjudge.judges.base import JudgeContext, JudgedItem
from ragjudge.judges.embedding_options import EmbeddingOptions, encoder_for, encoder_name, warm
from ragjudge.judges.ragas_judge import RagasJudge
from ragjudge.judges.ragas_prefetch import render
from ragjudge.judges.spec import JudgeSpec

if TYPE_CHECKING:  # imported when the judge first runs (judges.loading)
    from ragjudge.judges.ragas_adapter import ResponseRelevanceOutput, ResponseRelevancy
    from ragjudge.judges.ragas_llm import GatewayRagasLLM, RagasTrace


@cache
def _metric_class() -> type[ResponseRelevancy]:
    from ragjudge.judges.ragas_adapter import ResponseRelevanceInput, ResponseRelevancy
    from ragjudge.judges.ragas_embeddings import EncoderRagasEmbeddings

    class _ResponseRelevancy(ResponseRelevancy):
        """ragas's metric; the one change: the embeddings of the question and of the generated questions are
        fetched (async) before ragas's synchronous `_calculate_score` reads them. The rest is ragas's `_ascore`,
        line for line."""

        async def _ascore(self, row: dict, callbacks: Any) -> float:
            assert self.llm is not None and isinstance(self.embeddings, EncoderRagasEmbeddings)
            responses = await self.question_generation.generate_multiple(
                data=ResponseRelevanceInput(response=row["response"]), llm=self.llm, callbacks=callbacks,
                n=self.strictness)
            questions = [r.question for r in responses]
            if not all(q == "" for q in questions):  # else ragas returns NaN without embedding anything
                await self.embeddings.prefetch([row["user_input"], *questions])
            score = self._calculate_score(responses, row)
            if not all(q == "" for q in questions):  # for the details: ragas's similarities, before the mean
                similarities = self.calculate_similarity(row["user_input"], questions)
                self.llm.trace.outputs["similarity"] = [float(s) for s in similarities]  # type: ignore[attr-defined]
            return score

    return _ResponseRelevancy


class AnswerRelevancyJudge(RagasJudge):
    """RAGAS answer relevancy: how well a question generated from the answer matches the user's question."""

    def __init__(self, spec: JudgeSpec):
        super().__init__(spec)
        self.embedding = EmbeddingOptions.of(spec)

    def embedding_models(self) -> list[str]:
        return [encoder_name(self.embedding)]

    def first_prompts(self, item: JudgedItem) -> list[str]:
        """The question generated from the response (one: `strictness` 1)."""
        return [render("response_relevance", response=item.answer)]

    def warm_up(self, ctx: JudgeContext) -> None:
        loading.start(f"embeddings {self.embedding.encoder} {self.embedding.embedding_model}",
                      lambda: warm(self.embedding), optional=True)

    def ragas_metric(self, llm: GatewayRagasLLM, item: JudgedItem, ctx: JudgeContext) -> ResponseRelevancy:
        from ragjudge.judges.ragas_adapter import ResponseRelevancePrompt
        from ragjudge.judges.ragas_embeddings import EncoderRagasEmbeddings
        from ragjudge.judges.ragas_llm import traced

        return _metric_class()(
            llm=llm, embeddings=EncoderRagasEmbeddings(encoder_for(self.embedding, ctx.gateway)), strictness=1,
            question_generation=traced(ResponseRelevancePrompt, "question", llm.trace, self.format_fix_retries))

    def nan_reason(self, trace: RagasTrace) -> str:
        return "ragas returned NaN: the judge generated no question from the answer"

    def explain(self, item: JudgedItem, trace: RagasTrace, value: float) -> tuple[str | None, dict[str, Any]]:
        generated: list[ResponseRelevanceOutput] = trace.outputs.get("question", [])
        similarities: list[float] = trace.outputs.get("similarity", [])
        noncommittal = bool(generated) and all(g.noncommittal for g in generated)
        lines = [f"generated question: {g.question} (noncommittal: {g.noncommittal}) — cosine {s:.4f}"
                 for g, s in zip(generated, similarities, strict=True)]
        if noncommittal:
            lines.append("the answer is noncommittal: RAGAS scores it 0")
        details = {"generated_questions": len(generated), "noncommittal": noncommittal,
                   "similarity": similarities[0] if len(similarities) == 1 else similarities,
                   "embeddings": encoder_name(self.embedding)}
        return "\n".join(lines), details

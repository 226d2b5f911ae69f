"""`answer_correctness` (and `answer_correctness_llm`): RAGAS AnswerCorrectness, computed by the ragas library itself.

RAGAS's definition (`ragas.metrics._answer_correctness.AnswerCorrectness`; summary and options in docs/judges.md):
TP / FP / FN statement counts give an F-beta, weighted with the embedding similarity of response and reference
(`weights`); `answer_correctness_llm` sets [1, 0]. When neither text yields a statement ragas counts the factual part
as 1. Deliberate differences from `ragas.evaluate`: temperature 0; no hidden repair calls; no reference or an empty
response is not applicable; a failed call or unparsable answer is an error with the raw text (ragas: NaN). The
statement prompt is byte for byte faithfulness's, so beside faithfulness the response's statements are one cached call.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from ragjudge.errors import InputError
from ragjudge.judges import loading
from ragjudge.judges.base import JudgeContext, JudgedItem
from ragjudge.judges.embedding_options import EmbeddingOptions, encoder_for, encoder_name, warm
from ragjudge.judges.ragas_judge import RagasJudge, user_input
from ragjudge.judges.ragas_prefetch import render
from ragjudge.judges.spec import JudgeSpec

if TYPE_CHECKING:  # imported when the judge first runs (judges.loading)
    from ragjudge.judges.ragas_adapter import AnswerCorrectness, AnswerSimilarity
    from ragjudge.judges.ragas_llm import GatewayRagasLLM, RagasTrace


@cache
def _similarity_class() -> type[AnswerSimilarity]:
    from ragjudge.judges.ragas_adapter import AnswerSimilarity

    class _TracedSimilarity(AnswerSimilarity):
        """ragas's AnswerSimilarity; records its score for the result's details."""

        async def _ascore(self, row: dict, callbacks: Any) -> float:
            score = await super()._ascore(row, callbacks)
            self.trace.outputs["similarity"] = [score]  # type: ignore[attr-defined]
            return score

    return _TracedSimilarity


def check_options(weights: list[float]) -> None:
    """ragas's own checks of AnswerCorrectness's options (its `__post_init__`, run again when the metric is built),
    made when the judge is built, before ragas is imported."""
    if len(weights) != 2:
        raise ValueError("Expects a list of two weights. First for factuality, second for semantic similarity")
    if all(w == 0 for w in weights):
        raise ValueError("At least one weight must be non-zero")
    if not all(w >= 0 for w in weights):
        raise ValueError("Weights must be non-negative")


class AnswerCorrectnessJudge(RagasJudge):
    """RAGAS answer correctness: claim-level F1 against the reference, weighted with semantic similarity."""

    def __init__(self, spec: JudgeSpec):
        super().__init__(spec)
        weights = spec.options.get("weights", [0.75, 0.25])
        beta = spec.options.get("beta", 1.0)
        try:
            self.weights = [float(w) for w in weights]
            self.beta = float(beta)
            check_options(self.weights)
        except (TypeError, ValueError) as exc:
            raise InputError(f"weights must be [factuality, similarity], not both 0, and beta a number: {exc}",
                             file=spec.source, field="options.weights") from None
        self.embedding = EmbeddingOptions.of(spec) if self.weights[1] else None

    def embedding_models(self) -> list[str]:
        return [encoder_name(self.embedding)] if self.embedding is not None else []

    def first_prompts(self, item: JudgedItem) -> list[str]:
        """The statements of the response and of the reference (`AnswerCorrectness._ascore` asks both, in turn)."""
        question = user_input(item.messages, self.user_input_mode)
        return [render("statement_generator", question=question, answer=text) for text in (item.answer,
                                                                                           item.reference)]

    def warm_up(self, ctx: JudgeContext) -> None:
        if self.embedding is not None:
            embedding = self.embedding
            loading.start(f"embeddings {embedding.encoder} {embedding.embedding_model}", lambda: warm(embedding),
                          optional=True)

    def ragas_metric(self, llm: GatewayRagasLLM, item: JudgedItem, ctx: JudgeContext) -> AnswerCorrectness:
        from ragjudge.judges.ragas_adapter import AnswerCorrectness, CorrectnessClassifier, StatementGeneratorPrompt
        from ragjudge.judges.ragas_embeddings import EncoderRagasEmbeddings
        from ragjudge.judges.ragas_llm import traced

        similarity = None
        if self.embedding is not None:
            similarity = _similarity_class()(embeddings=EncoderRagasEmbeddings(encoder_for(self.embedding,
                                                                                            ctx.gateway)))
            similarity.trace = llm.trace  # type: ignore[attr-defined]
        return AnswerCorrectness(
            llm=llm, embeddings=similarity.embeddings if similarity else None, weights=self.weights, beta=self.beta,
            answer_similarity=similarity,
            statement_generator_prompt=traced(StatementGeneratorPrompt, "statements", llm.trace,
                                              self.format_fix_retries),
            correctness_prompt=traced(CorrectnessClassifier, "classification", llm.trace, self.format_fix_retries))

    def explain(self, item: JudgedItem, trace: RagasTrace, value: float) -> tuple[str | None, dict[str, Any]]:
        from ragjudge.judges.ragas_adapter import ClassificationWithReason, StatementGeneratorOutput, fbeta_score

        statements = [s.statements for s in trace.outputs.get("statements", [])
                      if isinstance(s, StatementGeneratorOutput)]
        output = trace.output("classification")
        details: dict[str, Any] = {"weights": self.weights}
        lines: list[str] = []
        if len(statements) == 2:
            details["response_statements"], details["reference_statements"] = map(len, statements)
        if isinstance(output, ClassificationWithReason):
            tp, fp, fn = len(output.TP), len(output.FP), len(output.FN)
            details.update(TP=tp, FP=fp, FN=fn, factuality=fbeta_score(tp, fp, fn, self.beta))
            for kind in ("TP", "FP", "FN"):
                lines += [f"[{kind}] {s.statement} — {s.reason}" for s in getattr(output, kind)]
        else:  # no statement in either text: ragas counts the factual part as 1 without asking
            details["factuality"] = 1.0
            lines.append("no statement in the response nor in the reference: RAGAS counts factuality as 1")
        if (similarity := trace.output("similarity")) is not None:
            details["similarity"] = float(similarity)
            details["embeddings"] = encoder_name(self.embedding)  # type: ignore[arg-type]
        return "\n".join(lines), details

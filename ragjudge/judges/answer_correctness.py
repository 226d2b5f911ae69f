"""`answer_correctness` (and `answer_correctness_llm`): RAGAS AnswerCorrectness, computed by the ragas library itself.

RAGAS's definition (`ragas.metrics._answer_correctness.AnswerCorrectness`): the response and the reference are each
broken into statements (the statement prompt of faithfulness), then one LLM call classifies them: TP (answer
statements the reference supports), FP (answer statements it does not), FN (reference statements the answer
misses). The factual score is the F-beta of those counts (beta 1: F1); the score is the weighted mean of it and the
semantic similarity of response and reference (cosine of their embeddings), weights [0.75, 0.25] by default. The
LLM-only variant (`judges/answer_correctness_llm.yaml`) sets weights [1, 0]: the claim-level F1 alone, no embeddings.
When neither text yields a statement ragas counts the factual part as 1.

Options: `weights` [factuality, similarity], `beta`, and the embeddings (`encoder`, `embedding_model`: the bundled
MiniLM by default, or a litellm embeddings model through the gateway).

Deliberate differences from `ragas.evaluate`: temperature 0; no hidden repair calls; a task without a reference, or
an empty response, is not applicable; a failed call or unparsable answer is an error with the raw text (ragas: NaN).
The statement prompt is byte for byte faithfulness's, so with faithfulness in the same run the response's
statements are one cached call.
"""

from __future__ import annotations

from typing import Any

from ragjudge.judges.ragas_llm import GatewayRagasLLM, RagasTrace, traced

from ragjudge.judges.ragas_adapter import (  # noqa: E402
    AnswerCorrectness,
    AnswerSimilarity,
    ClassificationWithReason,
    CorrectnessClassifier,
    fbeta_score,
    StatementGeneratorOutput,
    StatementGeneratorPrompt,
)

from ragjudge.errors import InputError  # noqa: E402
from ragjudge.judges.base import JudgeContext, JudgedItem  # noqa: E402
from ragjudge.judges.ragas_embeddings import (  # noqa: E402
    EmbeddingOptions,
    EncoderRagasEmbeddings,
    encoder_for,
    encoder_name,
)
from ragjudge.judges.ragas_judge import RagasJudge  # noqa: E402
from ragjudge.judges.spec import JudgeSpec  # noqa: E402


class _TracedSimilarity(AnswerSimilarity):
    """ragas's AnswerSimilarity; records its score for the result's details."""

    async def _ascore(self, row: dict, callbacks: Any) -> float:
        score = await super()._ascore(row, callbacks)
        self.trace.outputs["similarity"] = [score]  # type: ignore[attr-defined]
        return score


class AnswerCorrectnessJudge(RagasJudge):
    """RAGAS answer correctness: claim-level F1 against the reference, weighted with semantic similarity."""

    def __init__(self, spec: JudgeSpec):
        super().__init__(spec)
        weights = spec.options.get("weights", [0.75, 0.25])
        beta = spec.options.get("beta", 1.0)
        try:
            self.weights = [float(w) for w in weights]
            self.beta = float(beta)
            AnswerCorrectness(weights=self.weights, beta=self.beta)  # ragas's own checks of its options
        except (TypeError, ValueError) as exc:
            raise InputError(f"weights must be [factuality, similarity], not both 0, and beta a number: {exc}",
                             file=spec.source, field="options.weights") from None
        self.embedding = EmbeddingOptions.of(spec) if self.weights[1] else None

    def embedding_models(self) -> list[str]:
        return [encoder_name(self.embedding)] if self.embedding is not None else []

    def ragas_metric(self, llm: GatewayRagasLLM, item: JudgedItem, ctx: JudgeContext) -> AnswerCorrectness:
        similarity = None
        if self.embedding is not None:
            similarity = _TracedSimilarity(embeddings=EncoderRagasEmbeddings(encoder_for(self.embedding,
                                                                                          ctx.gateway)))
            similarity.trace = llm.trace  # type: ignore[attr-defined]
        return AnswerCorrectness(
            llm=llm, embeddings=similarity.embeddings if similarity else None, weights=self.weights, beta=self.beta,
            answer_similarity=similarity,
            statement_generator_prompt=traced(StatementGeneratorPrompt, "statements", llm.trace,
                                              self.format_fix_retries),
            correctness_prompt=traced(CorrectnessClassifier, "classification", llm.trace, self.format_fix_retries))

    def explain(self, item: JudgedItem, trace: RagasTrace, value: float) -> tuple[str | None, dict[str, Any]]:
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

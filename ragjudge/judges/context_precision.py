"""`context_precision`: RAGAS LLM context precision, with or without a reference, computed by the ragas library.

RAGAS's definition (`ragas.metrics._context_precision`): for each retrieved context, in rank order, an LLM says
whether it was useful for arriving at the answer (verdict 1 or 0; one call per context); the score is the
rank-weighted average precision sum_k (precision@k * v_k) / (number of useful contexts + 1e-10), so useful
contexts ranked first score higher, and no useful context scores 0. With a reference answer the "answer" the
contexts are checked against is the reference (LLMContextPrecisionWithReference); without one it is the response
(LLMContextPrecisionWithoutReference, which RAGAS also calls context utilization). One judge picks the variant by
what the item has and says which in the result's details (`variant`).

Deliberate differences from `ragas.evaluate`: temperature 0; no hidden repair calls; a task without passages, or
without a reference and with an empty response, is not applicable; a failed call or unparsable answer is an error
with the raw text (ragas: NaN).
"""

from __future__ import annotations

from typing import Any

from ragjudge.judges.ragas_llm import GatewayRagasLLM, RagasTrace, traced

from ragjudge.judges.ragas_adapter import (  # noqa: E402
    ContextPrecisionPrompt,
    LLMContextPrecisionWithoutReference,
    LLMContextPrecisionWithReference,
    Verification,
)

from ragjudge.judges.base import JudgeContext, JudgedItem  # noqa: E402
from ragjudge.judges.ragas_judge import RagasJudge  # noqa: E402

WITH_REFERENCE = "with reference"
WITHOUT_REFERENCE = "without reference"


class ContextPrecisionJudge(RagasJudge):
    """RAGAS context precision: are the useful contexts ranked first? Against the reference when there is one."""

    uses_response = False  # with a reference the response is not read; without one, skip_reason checks it

    @staticmethod
    def variant(item: JudgedItem) -> str:
        return WITH_REFERENCE if item.reference else WITHOUT_REFERENCE

    def skip_reason(self, item: JudgedItem) -> str | None:
        if (reason := super().skip_reason(item)) is not None:
            return reason
        if self.variant(item) == WITHOUT_REFERENCE and not item.answer.strip():
            return "no reference answer and an empty response"
        return None

    def ragas_metric(self, llm: GatewayRagasLLM, item: JudgedItem, ctx: JudgeContext
                     ) -> LLMContextPrecisionWithReference:
        cls = LLMContextPrecisionWithReference if self.variant(item) == WITH_REFERENCE \
            else LLMContextPrecisionWithoutReference
        return cls(llm=llm, context_precision_prompt=traced(ContextPrecisionPrompt, "verdicts", llm.trace,
                                                               self.format_fix_retries))

    def explain(self, item: JudgedItem, trace: RagasTrace, value: float) -> tuple[str | None, dict[str, Any]]:
        verdicts: list[Verification] = trace.outputs.get("verdicts", [])
        flags = [1 if v.verdict else 0 for v in verdicts]
        rationale = "\n".join(f"context {rank} [{flag}] {v.reason}"
                              for rank, (flag, v) in enumerate(zip(flags, verdicts, strict=True), 1))
        return rationale, {"variant": self.variant(item), "contexts": len(flags), "useful": sum(flags),
                           "verdicts": flags}

"""`context_precision`: RAGAS LLM context precision, with or without a reference, computed by the ragas library.

RAGAS's definition (`ragas.metrics._context_precision`; formula in docs/judges.md): one call per context, in rank
order, on whether it was useful for arriving at the reference (LLMContextPrecisionWithReference) or, with no reference,
the response (…WithoutReference, RAGAS's context utilization); one judge picks by what the item has (`variant`).
Deliberate differences from `ragas.evaluate`: temperature 0; no hidden repair calls; no passages, or no reference and
an empty response, is not applicable; a failed call or unparsable answer is an error with the raw text (ragas: NaN).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragjudge.judges.base import JudgeContext, JudgedItem
from ragjudge.judges.ragas_judge import RagasJudge, user_input
from ragjudge.judges.ragas_prefetch import render

if TYPE_CHECKING:  # imported when the judge first runs (judges.loading)
    from ragjudge.judges.ragas_adapter import LLMContextPrecisionWithReference, Verification
    from ragjudge.judges.ragas_llm import GatewayRagasLLM, RagasTrace

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
        from ragjudge.judges.ragas_adapter import (ContextPrecisionPrompt, LLMContextPrecisionWithoutReference,
                                                   LLMContextPrecisionWithReference)
        from ragjudge.judges.ragas_llm import traced

        cls = LLMContextPrecisionWithReference if self.variant(item) == WITH_REFERENCE \
            else LLMContextPrecisionWithoutReference
        return cls(llm=llm, context_precision_prompt=traced(ContextPrecisionPrompt, "verdicts", llm.trace,
                                                               self.format_fix_retries))

    def first_prompts(self, item: JudgedItem) -> list[str]:
        """Every call it makes: one verdict per context, in rank order, against the reference or else the response
        (ragas asks them one after another; sent ahead, they are on their way together)."""
        answer = item.reference if self.variant(item) == WITH_REFERENCE else item.answer
        question = user_input(item.messages, self.user_input_mode)
        return [render("context_precision", question=question, context=p.text, answer=answer) for p in item.contexts]

    def explain(self, item: JudgedItem, trace: RagasTrace, value: float) -> tuple[str | None, dict[str, Any]]:
        verdicts: list[Verification] = trace.outputs.get("verdicts", [])
        flags = [1 if v.verdict else 0 for v in verdicts]
        rationale = "\n".join(f"context {rank} [{flag}] {v.reason}"
                              for rank, (flag, v) in enumerate(zip(flags, verdicts, strict=True), 1))
        return rationale, {"variant": self.variant(item), "contexts": len(flags), "useful": sum(flags),
                           "verdicts": flags}

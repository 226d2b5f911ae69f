"""`context_recall`: RAGAS LLM context recall (`ragas.metrics._context_recall.LLMContextRecall`), run by ragas itself.

One call classifies each sentence of the reference as attributable to the joined contexts or not; the score is
attributed / classified sentences: how much of what the answer needs was retrieved. Deliberate differences from
`ragas.evaluate`: temperature 0; no hidden repair calls; no passages or no reference is not applicable; a failed call,
an unparsable answer or NaN (no sentence classified) is an error with the raw text (ragas: NaN).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragjudge.judges.base import JudgeContext, JudgedItem
from ragjudge.judges.ragas_judge import RagasJudge, user_input
from ragjudge.judges.ragas_prefetch import render

if TYPE_CHECKING:  # imported when the judge first runs (judges.loading)
    from ragjudge.judges.ragas_adapter import LLMContextRecall
    from ragjudge.judges.ragas_llm import GatewayRagasLLM, RagasTrace


class ContextRecallJudge(RagasJudge):
    """RAGAS context recall: the share of the reference's sentences the retrieved contexts support."""

    uses_response = False  # the reference is classified, not the response

    def ragas_metric(self, llm: GatewayRagasLLM, item: JudgedItem, ctx: JudgeContext) -> LLMContextRecall:
        from ragjudge.judges.ragas_adapter import ContextRecallClassificationPrompt, LLMContextRecall
        from ragjudge.judges.ragas_llm import traced

        return LLMContextRecall(llm=llm, context_recall_prompt=traced(
            ContextRecallClassificationPrompt, "classifications", llm.trace, self.format_fix_retries))

    def first_prompts(self, item: JudgedItem) -> list[str]:
        """Its one call: the reference classified against the joined contexts (`LLMContextRecall._ascore`)."""
        return [render("context_recall", question=user_input(item.messages, self.user_input_mode),
                       context="\n".join(p.text for p in item.contexts), answer=item.reference)]

    def nan_reason(self, trace: RagasTrace) -> str:
        return "ragas returned NaN: the judge classified no sentence of the reference"

    def explain(self, item: JudgedItem, trace: RagasTrace, value: float) -> tuple[str | None, dict[str, Any]]:
        from ragjudge.judges.ragas_adapter import ContextRecallClassifications

        output = trace.output("classifications")
        found = output.classifications if isinstance(output, ContextRecallClassifications) else []
        rationale = "\n".join(f"[{c.attributed}] {c.statement} — {c.reason}" for c in found)
        return rationale, {"statements": len(found), "attributed": sum(1 for c in found if c.attributed)}

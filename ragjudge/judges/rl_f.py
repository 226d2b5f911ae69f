"""RL_F and `faithfulness`: RAGAS faithfulness of the response to the passages, computed by the ragas library itself.

MTRAG's RL_F is `ragas.metrics.faithfulness`; we run that class (`ragas.metrics._faithfulness.Faithfulness`) with its
own prompts and parsing, through the gateway adapter shared by every RAGAS-backed judge (`ragjudge.judges.ragas_llm`).
Not `ragas.metrics.collections.Faithfulness`: it wants an instructor-style LLM returning parsed pydantic objects (we
would parse the JSON ourselves), and its prompts differ from ragas 0.3's, which MTRAG scored with and the legacy
metric still carries word for word.

Deliberate differences from `ragas.evaluate` (docs/judges.md): temperature 0, no repair calls; no passages or an
empty response is not applicable; a NaN for a non-empty response (no statement extracted), a failed call or an
unparsable answer is an error with the raw text. `judges/rl_f.yaml` writes the conversation as "speaker: text" lines
even for one turn (as MTRAG's script); `judges/faithfulness.yaml` writes a one-turn task's question alone (`auto`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragjudge.judges.base import JudgeContext, JudgedItem
from ragjudge.judges.ragas_judge import RagasJudge, user_input
from ragjudge.judges.ragas_prefetch import render

if TYPE_CHECKING:  # imported when the judge first runs (judges.loading)
    from ragjudge.judges.ragas_adapter import Faithfulness
    from ragjudge.judges.ragas_llm import GatewayRagasLLM, RagasTrace


class RLFJudge(RagasJudge):
    """RAGAS faithfulness (MTRAG's RL_F) by ragas's Faithfulness metric, every LLM call via the gateway."""

    def ragas_metric(self, llm: GatewayRagasLLM, item: JudgedItem | None = None, ctx: JudgeContext | None = None
               ) -> Faithfulness:
        """ragas's metric with ragas's prompts; one per item so each item's calls are traced apart."""
        from ragjudge.judges.ragas_adapter import Faithfulness, NLIStatementPrompt, StatementGeneratorPrompt
        from ragjudge.judges.ragas_llm import traced

        return Faithfulness(
            llm=llm,
            statement_generator_prompt=traced(StatementGeneratorPrompt, "statements", llm.trace,
                                              self.format_fix_retries),
            nli_statements_prompt=traced(NLIStatementPrompt, "verdicts", llm.trace, self.format_fix_retries),
        )

    def first_prompts(self, item: JudgedItem) -> list[str]:
        """The statements of the response (`Faithfulness._create_statements`)."""
        return [render("statement_generator", question=user_input(item.messages, self.user_input_mode),
                       answer=item.answer)]

    def nan_reason(self, trace: RagasTrace) -> str:
        # ragas returns NaN when no statement could be extracted from a non-empty response (or the NLI answer
        # judged none): the judge gave us nothing to average, which is an error, not a 0.
        return "ragas returned NaN: no statements were extracted from the response"

    def explain(self, item: JudgedItem, trace: RagasTrace, value: float) -> tuple[str | None, dict[str, Any]]:
        from ragjudge.judges.ragas_adapter import NLIStatementOutput, StatementGeneratorOutput

        details: dict[str, Any] = {}
        rationale = None
        verdicts, statements = trace.output("verdicts"), trace.output("statements")
        if isinstance(verdicts, NLIStatementOutput):
            details["statements"] = len(verdicts.statements)
            details["supported"] = sum(1 for v in verdicts.statements if v.verdict)
            rationale = "\n".join(f"[{v.verdict}] {v.statement} — {v.reason}" for v in verdicts.statements)
        if isinstance(statements, StatementGeneratorOutput):
            details["extracted_statements"] = len(statements.statements)
        return rationale, details

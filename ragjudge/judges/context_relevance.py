"""`context_relevance`: RAGAS ContextRelevance (NVIDIA's metric in ragas 0.4), computed by the ragas library itself.

RAGAS's definition (`ragas.metrics._nv_metrics.ContextRelevance`): two prompts each rate the joined contexts 0-2 for
relevance to the question; the score is the mean rating / 2, one judgement of the set (as ragas 0.4 defines it). ragas
scores 0 without asking when the contexts are empty or merely repeat the question. The rating is read as ragas reads
it: the first of "2", "1", "0" anywhere in the answer. Deliberate differences from `ragas.evaluate` (docs/judges.md):
one answer per prompt at temperature 0 (ragas re-asks up to 5 times at 0.1), an answer without a rating is an error
with its raw text (and out of the cache); a failure is the item's error and both ratings always count (ragas prints
it, NaNs it and scores the other rating alone); no passages is not applicable (ragas: 0).
"""

from __future__ import annotations

import math
from functools import cache
from typing import TYPE_CHECKING, Any

from ragjudge.judges.base import JudgeContext, JudgedItem
from ragjudge.judges.ragas_judge import RagasJudge, user_input
from ragjudge.judges.ragas_prefetch import template
from ragjudge.llm import LLMResponse

if TYPE_CHECKING:  # imported when the judge first runs (judges.loading)
    from ragjudge.judges.ragas_adapter import ContextRelevance
    from ragjudge.judges.ragas_llm import GatewayRagasLLM, RagasTrace


@cache
def _reader() -> ContextRelevance:
    from ragjudge.judges.ragas_adapter import ContextRelevance

    return ContextRelevance()


def _rating(text: str) -> float:
    """The rating ragas reads in an answer (0, 0.5 or 1), NaN when there is none: ragas's own `process_score`."""
    return float(_reader().process_score(text))


class ContextRelevanceJudge(RagasJudge):
    """RAGAS (NVIDIA) context relevance: are the retrieved contexts relevant to the question? Two ratings, 0-2."""

    uses_response = False
    record_errors = True  # ContextRelevance catches every exception, prints it and returns NaN

    def ragas_metric(self, llm: GatewayRagasLLM, item: JudgedItem, ctx: JudgeContext) -> ContextRelevance:
        from ragjudge.judges.ragas_adapter import ContextRelevance

        metric = ContextRelevance(llm=llm)
        metric.retry = 1  # one answer per prompt: at temperature 0 asking again gives the same answer
        llm.trace.stage = "ratings"
        return metric

    def first_prompts(self, item: JudgedItem) -> list[str]:
        """Both ratings' prompts, unless ragas scores 0 without asking (empty contexts, or contexts the question
        already holds: `ContextRelevance._single_turn_ascore`)."""
        query = user_input(item.messages, self.user_input_mode)
        context = "\n".join(p.text for p in item.contexts)
        if not query.strip() or context.strip() in query.strip():
            return []
        return [template("context_relevance", i, query=query, context=context) for i in (0, 1)]

    def unreadable(self, trace: RagasTrace) -> tuple[str, LLMResponse] | None:
        for call in trace.calls:
            if math.isnan(_rating(call.text)):
                return "ragas found no rating (0, 1 or 2) in the judge's answer", call
        return None

    def explain(self, item: JudgedItem, trace: RagasTrace, value: float) -> tuple[str | None, dict[str, Any]]:
        ratings = [int(_rating(c.text) * 2) for c in trace.calls]
        if not trace.calls:
            return ("RAGAS scores 0 without asking: the contexts are empty or repeat the question",
                    {"ratings": [], "contexts": len(item.contexts)})
        rationale = "\n".join(f"prompt {i} rated {r} of 2" for i, r in enumerate(ratings, 1))
        return rationale, {"ratings": ratings, "contexts": len(item.contexts)}

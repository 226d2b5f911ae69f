"""How one intent prediction is scored: against the gold intent under both mappings (`outcome`), and by an LLM judge
that may accept a wrong label meaning the same thing (`VerifyScorer`, the LLM-verified accuracy)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ragjudge.bench.cxm import metrics as M
from ragjudge.bench.cxm import prompts as P
from ragjudge.bench.cxm.intent.data import IntentSample
from ragjudge.bench.cxm.intent.solver import map_intent_paper
from ragjudge.bench.cxm.models import IntentCase, Taxonomy, render_conversation
from ragjudge.bench.cxm.solver import complete
from ragjudge.engine.bench import EachScorer, Record
from ragjudge.judges.spec import JudgeSpec
from ragjudge.llm import LLMGateway

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext


@dataclass(frozen=True)
class Outcome:
    """One prediction against its gold intent."""

    gold: str
    pred: str
    """The label as mapped by ragjudge (`M.UNPARSABLE` when the answer had none)."""
    paper_pred: str
    """The label as CXMArena's evaluator maps the raw answer (thefuzz WRatio >= 70, else "others")."""
    verified: bool | None
    """A judge's verdict on the prediction (`verified_match`), when there is one."""

    @property
    def exact(self) -> bool:
        return self.pred == self.gold

    @property
    def paper(self) -> bool:
        return self.paper_pred == self.gold


def outcome(gold: str, taxonomy: Taxonomy, row: dict[str, Any]) -> Outcome:
    """A prediction row (not failed) scored against `gold`."""
    raw = row.get("raw_intent") if row.get("raw_intent") is not None else row.get("intent")
    return Outcome(gold=gold, pred=row.get("intent") or M.UNPARSABLE, paper_pred=map_intent_paper(raw, taxonomy.labels),
                   verified=row.get("verified_match"))


async def verify_intent(gateway: LLMGateway, case: IntentCase, taxonomy: Taxonomy, row: dict[str, Any],
                        judge_model: str, spec: JudgeSpec) -> dict[str, Any]:
    """`verified_match` for one prediction row: exact matches and non-answers by rule, others by the judge.
    A judge that fails or cannot be read gives `verify_error` (and `error`: retried on the next run)."""
    gold = case.gold.get(taxonomy.name)
    if gold is None:
        return {}
    predicted = row.get("intent")
    if predicted is None or predicted == gold:  # no answer, or the very label: nothing for a judge to decide
        return {"verified_match": predicted == gold, "verified_by": "rule"}
    descriptions = {e.label: e.description for e in taxonomy.entries}
    variables = {"taxonomy_name": taxonomy.name, "conversation": render_conversation(case.messages),
                 "predicted": predicted, "gold": gold, "predicted_description": descriptions.get(predicted, ""),
                 "gold_description": descriptions.get(gold, "")}
    response = await complete(gateway, judge_model, P.messages(spec, variables), spec.params)
    if isinstance(response, str):
        return {"verify_error": response, "error": response}
    parsed = P.parse_choice(response.text, spec)
    if parsed.error:
        gateway.forget(response)  # an unreadable verdict is never reused: the next run asks again
        return {"verify_error": f"{parsed.error}; raw: {response.text[:300]}", "error": parsed.error,
                "verify_raw": response.text}
    return {"verified_match": bool(parsed.value), "verified_by": judge_model, "verify_raw": response.text}


class VerifyScorer(EachScorer[IntentSample]):
    name = "verify"

    def __init__(self, judge_model: str, taxonomies: dict[str, Taxonomy], book: P.PromptBook):
        self.judge_model = judge_model
        self.taxonomies = taxonomies
        self.spec = book.spec(P.INTENT_MATCH)

    def fingerprint(self, sample: IntentSample, output: Record) -> str:
        return P.fingerprint_of(self.spec, self.judge_model, output.get("intent"),
                                sample.case.gold.get(sample.taxonomy))

    def unscorable(self, sample: IntentSample, output: Record) -> Record:
        return {}  # a failed prediction is counted as an error by the scores; there is nothing to verify

    async def score_one(self, sample: IntentSample, output: Record, ctx: RunContext) -> Record:
        return await verify_intent(ctx.require_gateway(), sample.case, self.taxonomies[sample.taxonomy], output,
                                   self.judge_model, self.spec)

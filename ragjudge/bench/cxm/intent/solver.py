"""The model under test picks an intent for a conversation; its answer is mapped onto the taxonomy's labels two
ways: ragjudge's conservative mapping (`map_intent`) and CXMArena's own fuzzy one (`map_intent_paper`)."""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ragjudge.bench.cxm import prompts as P
from ragjudge.bench.cxm.intent.data import IntentSample
from ragjudge.bench.cxm.models import IntentCase, Taxonomy, render_conversation
from ragjudge.bench.cxm.solver import complete, usage
from ragjudge.engine.bench import EachSolver, Record
from ragjudge.judges.spec import JudgeSpec
from ragjudge.llm import LLMGateway
from ragjudge.normalize import normalize_for_matching

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext


def _norm_label(text: str) -> str:
    text = normalize_for_matching(text).strip("\"'`.").strip()  # quotes, dashes, spacing, case (ragjudge.normalize)
    return re.sub(r"\s*(?:->|>|/|»|:)\s*", ":", text)  # "Billing > Refund", "Billing / Refund" → "billing:refund"


def map_intent(raw: str, labels: Sequence[str], fuzzy_cutoff: float) -> tuple[str | None, str]:
    """Map a model's intent to a taxonomy label: (label, how) with how = exact | normalized | fuzzy | none."""
    if raw in labels:
        return raw, "exact"
    by_norm = {_norm_label(label): label for label in labels}
    norm = _norm_label(raw)
    if norm in by_norm:
        return by_norm[norm], "normalized"
    close = difflib.get_close_matches(norm, list(by_norm), n=1, cutoff=fuzzy_cutoff)
    if close:
        return by_norm[close[0]], "fuzzy"
    return None, "none"


PAPER_CUTOFF = 70.0
PAPER_FALLBACK = "others"
"""CXMArena's predictor maps an answer to the closest label by thefuzz's WRatio when it scores at least 70,
else to "others" (an unparsable answer is "others" too)."""


def _full_process(text: str) -> str:
    """thefuzz's default processing: ASCII only, lower case, non-alphanumerics as spaces, trimmed."""
    from rapidfuzz.utils import default_process

    return default_process(text.encode("ascii", "ignore").decode())


def map_intent_paper(raw: str | None, labels: Sequence[str]) -> str:
    """The official fuzzy mapping (thefuzz `process.extractOne(raw, labels, score_cutoff=70)`), via rapidfuzz."""
    from rapidfuzz import fuzz, process

    match = process.extractOne(PAPER_FALLBACK if raw is None else str(raw).strip(), list(labels),
                               scorer=fuzz.WRatio, processor=_full_process, score_cutoff=PAPER_CUTOFF)
    return match[0] if match else PAPER_FALLBACK


def _taxonomy_variables(taxonomy: Taxonomy) -> dict[str, Any]:
    entries = [{"label": e.label, "description": e.description} for e in taxonomy.entries]
    return {"taxonomy": entries, "taxonomy_name": taxonomy.name, "two_level": taxonomy.two_level,
            "taxonomy_text": "\n".join(f"{i + 1}. {e['label']}: {e['description']}" for i, e in enumerate(entries))}


async def predict_intent(gateway: LLMGateway, case: IntentCase, taxonomy: Taxonomy, model: str,
                         spec: JudgeSpec) -> dict[str, Any]:
    """The model's intent for one conversation, mapped onto the taxonomy's labels."""
    cutoff = float(spec.options.get("fuzzy_cutoff", 0.85))
    key = str(spec.options.get("output_key", "intent"))
    variables = {**_taxonomy_variables(taxonomy), "conversation": render_conversation(case.messages),
                 "transcript": case.transcript or render_conversation(case.messages, with_ids=False)}
    response = await complete(gateway, model, P.messages(spec, variables), spec.params)
    row: dict[str, Any] = {"case_id": case.case_id, "taxonomy": taxonomy.name, "model": model}
    if isinstance(response, str):
        return {**row, "error": response}
    row.update(usage(response), raw=response.text)
    parsed = P.parse_json(response.text, spec)
    value = parsed.value.get(key) if parsed.ok and isinstance(parsed.value, dict) else None
    if not parsed.ok or value is None:
        return {**row, "intent": None, "parse_error": parsed.error or f"unparsable output: no {key!r} in the JSON"}
    raw_intent = str(value).strip()
    label, how = map_intent(raw_intent, taxonomy.labels, cutoff)
    return {**row, "intent": label if label is not None else raw_intent, "raw_intent": raw_intent,
            "mapping": how, "in_taxonomy": label is not None}


class IntentSolver(EachSolver[IntentSample]):
    def __init__(self, model: str, taxonomies: dict[str, Taxonomy], book: P.PromptBook):
        self.name = model
        self.model = model
        self.taxonomies = taxonomies
        self.spec = book.spec(P.INTENT_PREDICTION)

    def fingerprint(self, sample: IntentSample) -> str:
        return P.fingerprint_of(self.spec, self.model, self.taxonomies[sample.taxonomy].model_dump())

    async def solve_one(self, sample: IntentSample, ctx: RunContext) -> Record:
        return await predict_intent(ctx.require_gateway(), sample.case, self.taxonomies[sample.taxonomy],
                                    self.model, self.spec)

"""How one reply is scored: an LLM judge labels it (`ClassifyScorer`, the paper's Table 7), counting toward its class's
share and the judge's agreement with a gold label where the data has one; the share of the turn's gold articles
among those the replier saw is `gold_recall`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ragjudge.bench.cxm import prompts as P
from ragjudge.bench.cxm.answer_classification.data import ranking_of
from ragjudge.bench.cxm.models import Article, RagCase, render_conversation
from ragjudge.bench.cxm.solver import complete
from ragjudge.engine.bench import EachScorer, Record
from ragjudge.judges.spec import JudgeSpec
from ragjudge.llm import LLMGateway

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext


def gold_recall(gold: Sequence[str], ranking: Sequence[str]) -> float:
    """The share of the turn's gold articles among the retrieved ones (`gold` not empty)."""
    return len(set(gold) & set(ranking)) / len(set(gold))


def read_answer_class(value: Any, spec: JudgeSpec) -> tuple[str | None, str | None]:
    labels = {str(k).casefold(): str(v) for k, v in (spec.options.get("labels") or {}).items()}
    category = str(value.get("category", "")).strip().strip(".").casefold()
    if category in labels:
        return labels[category], None
    known = sorted(set(labels.values()))
    return None, f"unparsable judge output: category {value.get('category')!r} is not one of {known}"


async def classify_response(gateway: LLMGateway, case: RagCase, given: dict[str, Any], articles: dict[str, Article],
                            judge_model: str, spec: JudgeSpec) -> dict[str, Any]:
    """Label one reply Correct / Incorrect / Hallucination / Refusal. `given`: the row with `response` (and
    `ranking`, the articles the replier saw besides the gold ones; `retrieved_ids` in rows written before)."""
    gold = [{"id": i, "text": articles[i].text} for i in case.kb_ids if i in articles]
    others = [{"id": i, "text": articles[i].text} for i in ranking_of(given) or []
              if i in articles and i not in case.kb_ids]
    variables = {"conversation": render_conversation(case.messages, with_ids=False),
                 "response": given["response"], "reference": case.reference or "",
                 "gold_articles": gold, "other_articles": others}
    response = await complete(gateway, judge_model, P.messages(spec, variables), spec.params)
    row: dict[str, Any] = {"case_id": case.case_id, "judge_model": judge_model}
    if isinstance(response, str):
        return {**row, "error": response}
    row.update(judge_raw=response.text)
    parsed = P.parse_json(response.text, spec)
    label, error = (None, parsed.error) if not parsed.ok else read_answer_class(parsed.value, spec)
    if error:
        gateway.forget(response)  # an unreadable verdict is never reused: the next run asks again
        return {**row, "error": error}
    return {**row, "label": label}


class ClassifyScorer(EachScorer[RagCase]):
    name = "classify"

    def __init__(self, judge_model: str, articles: dict[str, Article], book: P.PromptBook):
        self.judge_model = judge_model
        self.articles = articles
        self.spec = book.spec(P.ANSWER_CLASS)

    def fingerprint(self, sample: RagCase, output: Record) -> str:
        return P.fingerprint_of(self.spec, self.judge_model, output.get("response"), ranking_of(output))

    def key(self, sample: RagCase) -> str:
        return sample.case_id

    async def score_one(self, sample: RagCase, output: Record, ctx: RunContext) -> Record:
        return await classify_response(ctx.require_gateway(), sample, output, self.articles, self.judge_model,
                                       self.spec)

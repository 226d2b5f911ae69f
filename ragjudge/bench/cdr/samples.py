"""A CDR query's result as the sample log's record (fields: docs/benches/cdr.md), and as a row of results.csv.

Relevance is per conversation whatever `-T unit` indexed, so `contexts` are conversations, each with the text of the
unit that gave it its score cut to `EXCERPT` characters (corpus.json holds every text whole: a full run ranks 20
conversations for each of 1,583 queries). Conversations have no title of their own: theirs is the first user message.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragjudge.bench.cdr.data import CdrQuery
from ragjudge.bench.cdr.metrics import HEADLINE, METRICS
from ragjudge.bench.cdr.units import split_messages
from ragjudge.engine.bench import SampleResult, failed
from ragjudge.formats.samples import Passage, Sample, Score

EXCERPT = 600
"""Characters of a ranked unit's text kept in the sample log."""
TITLE = 100
"""Characters of a conversation's first user message kept as its title."""


def query_sample(result: SampleResult[CdrQuery], corpus: Mapping[str, str], unit_text: Mapping[str, str],
                 categorised: bool) -> Sample:
    """`unit_text`: unit id -> text; `categorised`: the run has a category file (so a `category` breakdown)."""
    query, output = result.sample, result.output
    ranking = [] if failed(output) else output.get("ranking") or []
    contexts = [Passage(id=r["id"], title=title(corpus.get(r["id"], "")), score=r["score"],
                        text=shorten(unit_text.get(r["unit"], ""), EXCERPT) or None, metadata={"unit": r["unit"]})
                for r in ranking]
    references = [Passage(id=c, title=title(corpus[c]) if c in corpus else None, score=1.0,
                          metadata={} if c in corpus else {"in_corpus": False}) for c in query.relevant]
    scores: dict[str, Score] = {}
    metadata: dict[str, Any] = {"listed": query.listed}
    if not failed(output):
        score = result.scores.get("metrics") or {}
        scores = ({HEADLINE: Score(error=str(score.get("error") or "no score"))} if failed(score)
                  else {m: Score(value=score["metrics"][m]) for m in METRICS})
        metadata.update(units_ranked=output.get("units_ranked"), seconds=output.get("seconds"))
    return Sample(id=query.id, input=query.text, target_contexts=references, contexts=contexts, scores=scores,
                  labels={"category": query.category or "unknown"} if categorised else {},
                  error=str(output["error"]) if failed(output) else None, metadata=metadata)


def row(result: SampleResult[CdrQuery]) -> dict[str, Any]:
    """The query's line of results.csv: its category, relevance counts, top conversation and figures."""
    query = result.sample
    ranking = result.output.get("ranking") or []
    out: dict[str, Any] = {"id": query.id, "category": query.category, "n_relevant": len(query.relevant),
                           "n_listed": query.listed, "top_conversation": ranking[0]["id"] if ranking else None}
    figures = (result.scores.get("metrics") or {}).get("metrics") or {}
    out.update({m: figures.get(m) for m in METRICS})
    out["errors"] = "; ".join(f"{k}: {v}" for k, v in result.errors.items()) or None
    return out


def title(conversation: str) -> str | None:
    """The first user message's first line (else the first message's), role prefix left out, shortened."""
    messages, _ = split_messages(conversation)
    if not messages:
        return None
    first = next((m for m in messages if m.role == "user"), messages[0])
    text = first.text[len(first.role) + 1:] if first.role else first.text
    line = text.strip().splitlines()[0].strip() if text.strip() else ""
    return shorten(line, TITLE) or None


def shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"

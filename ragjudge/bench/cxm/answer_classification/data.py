"""Answer classification's data: the multi-turn RAG turns (`cxm.data.load_rag`, as multi-turn retrieval reads them),
the replies to classify (generated, or the data's own), and the KB's articles the judge reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragjudge.bench.cxm.data import load_articles, load_rag
from ragjudge.bench.cxm.models import Article, RagCase
from ragjudge.errors import UsageError


def ranking_of(row: dict[str, Any]) -> list[str] | None:
    """The retrieved article ids of a row: `ranking`, or `retrieved_ids` in rows written before it was renamed."""
    return row.get("ranking") if row.get("ranking") is not None else row.get("retrieved_ids")


def load(folder: Path, *, generate: bool) -> tuple[list[RagCase], list[RagCase], dict[str, Article]]:
    """(every turn, the turns to classify, the articles): with a replier under test every turn is replied to; without,
    the turns whose data holds a reply."""
    cases = load_rag(folder)
    articles = load_articles(folder, "multi-turn")
    if generate:
        return cases, list(cases), articles
    given = [c for c in cases if c.response is not None]
    if not given:
        raise UsageError("the data has no responses to classify: give --gen MODEL to generate them")
    return cases, given, articles

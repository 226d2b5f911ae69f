"""Multi-turn retrieval's data: the multi-turn RAG turns with their gold articles (`cxm.data.load_rag`, which answer
classification reads too) and the KB's articles."""

from __future__ import annotations

from pathlib import Path

from ragjudge.bench.cxm.data import load_articles, load_rag, optional_articles
from ragjudge.bench.cxm.models import Article, RagCase


def load(folder: Path, *, scoring_file: bool) -> tuple[list[RagCase], dict[str, Article] | None]:
    """The turns and the articles: a run searches them (required); scoring a predictions file only notes ranked ids
    that are not in the KB, when the folder has the articles."""
    cases = load_rag(folder)
    return cases, optional_articles(folder, "multi-turn") if scoring_file else load_articles(folder, "multi-turn")

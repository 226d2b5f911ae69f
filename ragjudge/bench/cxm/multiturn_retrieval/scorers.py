"""How one turn's ranking is scored: Recall@k, hit@k and reciprocal rank of its gold articles (none for a turn
without gold), and Recall@k as CXMArena's evaluator computes it (`PaperProtocol`: its predictor's ranking when the
rows keep the top passages' articles; a turn without gold counts 0). No judge."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from ragjudge.bench.cxm import metrics as M

PaperProtocol = Literal["official", "empty-as-zero"] | None
"""Which paper-protocol recall a run reports (the summary's rule): on the predictor's ranking when every scored turn
has `chunk_articles` (`official`); else on ours, turns without gold as 0, when some turn has no gold article
(`empty-as-zero`); else none (it would equal R@k)."""


def paper_protocol(with_chunks: Sequence[bool], with_gold: Sequence[bool]) -> PaperProtocol:
    """The protocol of a run whose scored turns have (or lack) `chunk_articles` and gold articles."""
    if with_chunks and all(with_chunks):
        return "official"
    return "empty-as-zero" if not all(with_gold) else None


def turn_figures(ranking: Sequence[str], gold: Sequence[str], ks: Sequence[int],
                 chunk_articles: Sequence[str] | None, protocol: PaperProtocol) -> dict[str, float]:
    """One turn's figures by the summary's names."""
    out: dict[str, float] = {}
    for k in ks:
        if gold:
            out[f"R@{k}"] = M.recall_at_k(ranking, gold, k)
            out[f"hit@{k}"] = M.hit_at_k(ranking, gold, k)
        if protocol == "official" and chunk_articles is not None:
            out[f"R@{k} (paper protocol)"] = M.recall_at_k(M.official_ranking(chunk_articles, k), gold, k)
        elif protocol is not None:
            out[f"R@{k} (paper protocol)"] = M.recall_at_k(ranking, gold, k)
    if gold:
        out["MRR"] = M.reciprocal_rank(ranking, gold)
    return out

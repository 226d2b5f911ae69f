"""How one query's ranking is scored: P@k, R@k, hit@k and reciprocal rank (`query_figures`), and the hit CXMArena's
predictor's ranking would have (`official_hit`: top-k passages, repeats removed). No judge."""

from __future__ import annotations

from collections.abc import Sequence

from ragjudge.bench.cxm import metrics as M

OFFICIAL_HIT = "hit@{k} (official: top-{k} passages, repeats removed)"


def official_hit(chunk_articles: Sequence[str], relevant: Sequence[str], k: int) -> float:
    return M.hit_at_k(M.official_ranking(chunk_articles, k), relevant, k)


def query_figures(ranking: Sequence[str], relevant: Sequence[str], ks: Sequence[int],
                  chunk_articles: Sequence[str] | None = None) -> dict[str, float]:
    """One query's figures by the summary's names (the official hit only when the row has `chunk_articles`)."""
    out = {name: float(v) for name, v in M.search_scores([(ranking, relevant)], ks).items() if v is not None}
    if chunk_articles is not None:
        out.update({OFFICIAL_HIT.format(k=k): official_hit(chunk_articles, relevant, k) for k in ks})
    return out

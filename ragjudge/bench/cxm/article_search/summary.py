"""Article search scores: P@k, R@k, hit@k (the paper's "precision") and MRR. From a chunked run's `chunk_articles`
(the top passages' articles, repeats kept) the ranking CXMArena's predictor would give is scored too.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragjudge.bench.cxm import metrics as M
from ragjudge.bench.cxm.article_search.scorers import OFFICIAL_HIT, official_hit
from ragjudge.bench.cxm.models import Article, SearchQuery
from ragjudge.bench.cxm.rows import Rows, bad, ids, known_id
from ragjudge.bench.cxm.summary import TaskReport, table


def read_rankings(rows: Rows, known: set[str], key: str, what: str, path: Path | None
                  ) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """(rankings, chunk_articles) by item id, validated."""
    rankings: dict[str, list[str]] = {}
    chunks: dict[str, list[str]] = {}
    for line, row in rows:
        item_id = known_id(row, key, known, path, line, what)
        if item_id in rankings:
            raise bad(path, line, key, f"second ranking for {what} {item_id!r}")
        if not isinstance(row.get("ranking"), list):
            raise bad(path, line, "ranking", "ranking must be a list of article ids, best first")
        rankings[item_id] = ids(row, "ranking", path, line)
        if row.get("chunk_articles") is not None:
            chunks[item_id] = ids(row, "chunk_articles", path, line)
    return rankings, chunks


def unknown_note(rankings: dict[str, list[str]], articles: dict[str, Article] | None) -> list[str]:
    if articles is None:
        return []
    unknown = sorted({d for r in rankings.values() for d in r} - set(articles))
    return [f"{len(unknown)} ranked article id(s) are not in the KB, e.g. {unknown[0]}"] if unknown else []


def score_search(queries: Sequence[SearchQuery], rows: Rows, ks: Sequence[int], path: Path | None = None,
                 articles: dict[str, Article] | None = None) -> TaskReport:
    by_id = {q.query_id: q for q in queries}
    rankings, chunks = read_rankings(rows, set(by_id), "query_id", "query", path)
    missing = [q.query_id for q in queries if q.query_id not in rankings]
    scored = [q for q in queries if q.query_id in rankings]
    pairs = [(rankings[q.query_id], q.relevant) for q in scored]
    scores = M.search_scores(pairs, ks)
    metrics: dict[str, Any] = {"queries": len(queries), "ranked": len(pairs), **scores}
    official = bool(scored) and all(q.query_id in chunks for q in scored)
    table_rows = [[k, scores[f"P@{k}"], scores[f"R@{k}"], scores[f"hit@{k}"]] for k in ks]
    columns = ["k", "precision@k", "recall@k", "hit@k"]
    if official:
        columns.append("hit@k, official ranking")
        for row, k in zip(table_rows, ks, strict=True):
            hit = M.ratio(sum(official_hit(chunks[q.query_id], q.relevant, k) for q in scored), len(scored))
            metrics[OFFICIAL_HIT.format(k=k)] = hit
            row.append(hit)
    metrics["missing"] = len(missing)
    notes = [f"no ranking for {len(missing)} query(ies), e.g. {missing[0]}"] if missing else []
    notes += unknown_note(rankings, articles)
    notes.append("hit@k is what the paper calls retrieval \"precision\" (Table 6); P@k divides by k")
    ns = {name: len(pairs) for name in metrics if name not in ("queries", "ranked", "missing")}
    top = max(ks)
    return TaskReport(task="article search", metrics=metrics, tables=[table("By cut-off", columns, table_rows)],
                      notes=notes, problems=len(missing), ns=ns,
                      headline=[(f"hit@{top}", "queries"), ("MRR", "queries")])

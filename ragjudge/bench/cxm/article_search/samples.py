"""An article-search query as the sample log's record: the question, its relevant articles (`target_contexts`), the
ranking (`contexts`, best first) and the query's figures under the summary's names."""

from __future__ import annotations

from collections.abc import Sequence

from ragjudge.bench.cxm.article_search.scorers import query_figures
from ragjudge.bench.cxm.models import SearchQuery
from ragjudge.bench.cxm.samples import articles, error_of, facts
from ragjudge.engine.bench import Record
from ragjudge.formats.samples import Sample, Score


def search_sample(sample_id: str, query: SearchQuery | None, row: Record, ks: Sequence[int]) -> Sample:
    ranking = [str(i) for i in row.get("ranking") or []]
    chunks = row.get("chunk_articles")
    scores = {} if query is None or row.get("error") else {
        name: Score(value=v) for name, v in query_figures(ranking, query.relevant, ks,
                                                          None if chunks is None else [str(i) for i in chunks]).items()}
    return Sample(id=sample_id, input=query.query if query is not None else str(row.get("query_id", sample_id)),
                  target_contexts=articles(query.relevant, [1.0] * len(query.relevant)) if query is not None else [],
                  contexts=articles(ranking), scores=scores, error=error_of(row),
                  metadata=facts(row, ("retriever", "chunk_articles"),
                                 query_id=query.query_id if query is not None else row.get("query_id")))

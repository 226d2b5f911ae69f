"""Article search's data: the queries with their relevant articles (the articles themselves: `cxm.data`)."""

from __future__ import annotations

from pathlib import Path

from ragjudge.bench.cxm.data import id_of, new_id, records
from ragjudge.bench.cxm.models import SearchQuery
from ragjudge.bench.cxm.tables import field, id_list, require_file
from ragjudge.errors import InputError


def load_search(folder: Path) -> list[SearchQuery]:
    path = require_file(folder, "article-search queries", ("search_queries.jsonl",), (("Article_Search", "train"),))
    queries = []
    seen: set[str] = set()
    for line, index, row in records(path, "article-search queries"):
        query_id = new_id(seen, id_of(row, ("query_id", "id"), path, line, index), "query", path, line, "query_id")
        text = field(row, "query", "question")
        relevant = field(row, "relevant", "True KB ID", "kb_ids")
        if not isinstance(text, str) or not text.strip():
            raise InputError("missing query text", file=str(path), line=line, field="query")
        ids = id_list(relevant, path=path, line=line, name="relevant")
        if not ids:
            raise InputError("no relevant article id", file=str(path), line=line, field="relevant")
        queries.append(SearchQuery(query_id=query_id, query=text, relevant=ids))
    return queries

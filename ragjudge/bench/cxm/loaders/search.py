"""Article search queries and multi-turn RAG cases (the conversation so far, gold reply and articles)."""

from __future__ import annotations

from pathlib import Path

from ragjudge.bench.cxm.loaders.common import conversation, id_of, records, text_cell, transcript
from ragjudge.bench.cxm.models import RagCase, SearchQuery, normalize_class
from ragjudge.bench.cxm.tables import field, id_list, require_file
from ragjudge.errors import InputError


def load_search(folder: Path) -> list[SearchQuery]:
    path = require_file(folder, "article-search queries", ("search_queries.jsonl",), (("Article_Search", "train"),))
    queries = []
    seen: set[str] = set()
    for line, index, row in records(path, "article-search queries"):
        query_id = id_of(row, ("query_id", "id"), path, line, index)
        if query_id in seen:
            raise InputError(f"query id {query_id!r} repeats", file=str(path), line=line, field="query_id")
        seen.add(query_id)
        text = field(row, "query", "question")
        relevant = field(row, "relevant", "True KB ID", "kb_ids")
        if not isinstance(text, str) or not text.strip():
            raise InputError("missing query text", file=str(path), line=line, field="query")
        ids = id_list(relevant, path=path, line=line, name="relevant")
        if not ids:
            raise InputError("no relevant article id", file=str(path), line=line, field="relevant")
        queries.append(SearchQuery(query_id=query_id, query=text, relevant=ids))
    return queries


def load_rag(folder: Path) -> list[RagCase]:
    path = require_file(folder, "multi-turn RAG cases", ("multi_turn.jsonl",), (("Multi_Turn", "train"),))
    cases = []
    occurrences: dict[str, int] = {}
    seen: set[str] = set()
    for line, index, row in records(path, "multi-turn RAG cases"):
        explicit = id_of(row, ("case_id",), path, line)
        if explicit is not None:
            case_id = explicit
        else:  # the release has several turns per conversation_id
            conv = id_of(row, ("conversation_id",), path, line, index)
            occurrences[conv] = occurrences.get(conv, 0) + 1
            case_id = f"{conv}.{occurrences[conv]}"
        if case_id in seen:
            raise InputError(f"case id {case_id!r} repeats", file=str(path), line=line, field="case_id")
        seen.add(case_id)
        key = "ranking" if row.get("ranking") is not None else "retrieved_ids"  # the given response's articles
        label = field(row, "label")
        if label is not None and normalize_class(label) is None:
            raise InputError(f"label must be Correct, Incorrect, Hallucination or Refusal, got {label!r}",
                             file=str(path), line=line, field="label")
        cases.append(RagCase(
            case_id=case_id, messages=conversation(row, path, line),
            reference=text_cell(field(row, "reference", "correct_agent_response"), path, line, "reference"),
            kb_ids=id_list(field(row, "kb_ids", "kbs"), path=path, line=line, name="kb_ids"),
            retrieved_ids=None if row.get(key) is None else id_list(row[key], path=path, line=line, name=key),
            response=text_cell(field(row, "response"), path, line, "response"), label=normalize_class(label),
            transcript=transcript(row),
        ))
    return cases

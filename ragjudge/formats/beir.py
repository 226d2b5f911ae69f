"""BEIR corpus, queries and qrels files, as MTRAG publishes its retrieval tasks: corpus and queries JSONL
(`{"_id", "title", "text"}`, `{"_id", "text"}`), qrels TSV with a header `query-id  corpus-id  score`.
Readers name the file, line and field of anything malformed (InputError); writers are atomic.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator
from pathlib import Path

from pydantic import BaseModel

from ragjudge.errors import InputError
from ragjudge.formats.files import atomic_output, csv_rows
from ragjudge.formats.jsonl import json_type, read_jsonl, write_jsonl
from ragjudge.models import Passage

_ID_FIELDS = ("_id", "id", "document_id", "doc_id")


class Query(BaseModel):
    """One retrieval query: MTRAG uses `<conversation_id><::><turn>` as the id."""

    id: str
    text: str


def _record_id(record: dict, *, file: str, line: int) -> str:
    for name in _ID_FIELDS:
        value = record.get(name)
        if value is not None and value != "":
            if not isinstance(value, (str, int)) or isinstance(value, bool):
                raise InputError(f"must be a string, got {json_type(value)}", file=file, line=line, field=name)
            return str(value)
    raise InputError("is missing (expected one of _id, id, document_id)", file=file, line=line, field="_id")


def read_corpus(path: str | Path) -> Iterator[Passage]:
    """Yield each corpus line as a Passage; ids must be unique and text a string (BEIR corpora have a few empty
    texts whose title carries the content, so empty is allowed)."""
    file = str(path)
    seen: dict[str, int] = {}
    for line, record in read_jsonl(path):
        pid = _record_id(record, file=file, line=line)
        text = record.get("text", record.get("contents"))
        if not isinstance(text, str):
            got = "missing" if text is None else json_type(text)
            raise InputError(f"must be a string, got {got}", file=file, line=line, field="text")
        title = record.get("title")
        if title is not None and not isinstance(title, str):
            raise InputError(f"must be a string, got {json_type(title)}", file=file, line=line, field="title")
        if pid in seen:
            raise InputError(f"duplicate id {pid!r} (first at line {seen[pid]})", file=file, line=line, field="_id")
        seen[pid] = line
        yield Passage(id=pid, text=text, title=title or None)


def write_corpus(path: str | Path, passages: Iterable[Passage]) -> None:
    write_jsonl(path, ({"_id": p.document_id, "title": p.title or "", "text": p.text} for p in passages))


def read_queries(path: str | Path) -> list[Query]:
    """Queries must have an id and a non-blank text: an empty query is an input error, not a silent miss."""
    file = str(path)
    queries: list[Query] = []
    seen: dict[str, int] = {}
    for line, record in read_jsonl(path):
        qid = _record_id(record, file=file, line=line)
        text = record.get("text")
        if not isinstance(text, str):
            got = "missing" if text is None else json_type(text)
            raise InputError(f"must be a string, got {got}", file=file, line=line, field="text")
        if not text.strip():
            raise InputError("is empty", file=file, line=line, field="text")
        if qid in seen:
            raise InputError(f"duplicate id {qid!r} (first at line {seen[qid]})", file=file, line=line, field="_id")
        seen[qid] = line
        queries.append(Query(id=qid, text=text))
    if not queries:
        raise InputError("contains no queries", file=file)
    return queries


def write_queries(path: str | Path, queries: Iterable[Query]) -> None:
    write_jsonl(path, ({"_id": q.id, "text": q.text} for q in queries))


Qrels = dict[str, dict[str, int]]
"""query id -> {passage id -> relevance grade}."""


def read_qrels(path: str | Path) -> Qrels:
    """BEIR qrels TSV (`query-id corpus-id score`, header optional); grade 0 rows are kept as 0."""
    path = Path(path)
    qrels: Qrels = {}
    for number, row in csv_rows(path, "qrels file", delimiter="\t", quoting=csv.QUOTE_NONE):
        if not row or not "".join(row).strip():
            continue
        if number == 1 and row[0].strip().lower() in ("query-id", "query_id", "qid"):
            continue
        if len(row) < 3:
            raise InputError(f"expected 3 tab-separated columns (query-id, corpus-id, score), got {len(row)}",
                             file=str(path), line=number)
        qid, pid, grade = row[0].strip(), row[1].strip(), row[-1].strip()
        if not qid or not pid:
            raise InputError("is empty", file=str(path), line=number, field="query-id" if not qid else "corpus-id")
        try:
            value = int(float(grade))
        except (ValueError, OverflowError):
            raise InputError(f"must be a number, got {grade!r}", file=str(path), line=number,
                             field="score") from None
        qrels.setdefault(qid, {})[pid] = value
    return qrels


def write_qrels(path: str | Path, qrels: Qrels) -> None:
    with atomic_output(path) as tmp, tmp.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh, delimiter="\t", lineterminator="\n")
        writer.writerow(["query-id", "corpus-id", "score"])
        writer.writerows([qid, pid, grade] for qid, docs in qrels.items() for pid, grade in docs.items())

"""What every CXMArena task's data shares: conversations, ids, text cells, the KB articles, and the multi-turn RAG
cases that answer classification and multi-turn retrieval both read (each task's own data is its `data.py`).

Every loader accepts the release's columns (as Sprinklr's own loader and evaluator name them) and ragjudge's plain
JSONL names (`examples/cxm/README.md`) row by row, so a folder may mix them. Rows without an id are numbered by
position (1 for the first) in every format, so the same data as JSONL, CSV or Parquet gets the same case ids.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ragjudge.bench.cxm.conversation import parse_messages
from ragjudge.bench.cxm.models import Article, Message, RagCase, normalize_class
from ragjudge.bench.cxm.tables import field, find_file, id_list, read_rows, require_file
from ragjudge.errors import InputError

ARTICLE_FILES = {
    "kb-refinement": (("kb_refinement_articles.jsonl", "articles.jsonl"), (("Articles", "KB_refinement_articles"),)),
    "article-search": (("article_search_articles.jsonl", "articles.jsonl"), (("Articles", "article_search_articles"),)),
    "multi-turn": (("multi_turn_articles.jsonl", "articles.jsonl"), (("Articles", "multi_turn_articles"),)),
}
CONVERSATION_FIELDS = ("messages", "conversation", "Conversation", "Complete Conversations", "conversation_context")

_MESSAGE_ID_PREFIX = re.compile(r"^\s*(?:message[\s_-]*id\s*[:#-]?\s*)", re.IGNORECASE)
_LABELLED_ID = re.compile(r"^\s*(?P<speaker>customer|agent|user|ivr[ _-]?bot)\s*\[\s*(?P<id>[^\]\s]+)\s*\]\s*:?\s*$",
                          re.IGNORECASE)


def records(path: Path, what: str) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """(line or row number for errors, position among the records from 1, record); a file with no record is an
    error naming it (`what` it should hold)."""
    for index, (line, row) in enumerate(read_rows(path, what), start=1):
        yield line, index, row


def new_id(seen: set[str], value: str, what: str, path: Path, line: int, name: str) -> str:
    """`value`, noted in `seen`: an id seen before is an error naming the row and the field `name`."""
    if value in seen:
        raise InputError(f"{what} id {value!r} repeats", file=str(path), line=line, field=name)
    seen.add(value)
    return value


def conversation(row: dict[str, Any], path: Path, line: int) -> list[Message]:
    for name in CONVERSATION_FIELDS:
        if row.get(name) is not None:
            return parse_messages(row[name], path=path, line=line, name=name)
    raise InputError(f"missing conversation (one of {', '.join(CONVERSATION_FIELDS)})", file=str(path), line=line)


def transcript(row: dict[str, Any]) -> str | None:
    """The conversation as the data writes it, when it is text (prompts written for the release use it)."""
    for name in CONVERSATION_FIELDS:
        if isinstance(row.get(name), str):
            return row[name]
    return None


def id_of(row: dict[str, Any], names: tuple[str, ...], path: Path, line: int, fallback: int | None = None
          ) -> str | None:
    """The row's id: the first of `names` it has, as text. An id is text or a number; anything else (an object,
    a list, true/false) is an error naming the field. Missing or blank: `fallback` (the record's position) as
    text, or None."""
    for name in names:
        value = row.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise InputError(f"an id is text or a number, found {value!r}"[:120], file=str(path), line=line,
                             field=name)
        if str(value).strip():
            return str(value).strip()
        break
    return None if fallback is None else str(fallback)


def text_cell(value: Any, path: Path, line: int, name: str) -> str | None:
    """A text cell (numbers are read as text); None stays None; anything else is an error."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise InputError(f"expected text, found {value!r}"[:120], file=str(path), line=line, field=name)
    return str(value)


def normalize_message_id(value: Any) -> str:
    """`3`, `"3"`, `"[3]"`, `"Message-ID: 3"` and `"AGENT[3]"` all name message 3."""
    labelled = _LABELLED_ID.match(str(value))
    if labelled:
        return labelled.group("id")
    return _MESSAGE_ID_PREFIX.sub("", str(value)).strip().strip("[]()").strip()


def message_id_speaker(value: Any) -> str | None:
    """The speaker an evidence id like `AGENT[3]` names (customer/agent/ivr), else None."""
    from ragjudge.bench.cxm.conversation import normalize_speaker

    labelled = _LABELLED_ID.match(str(value))
    return normalize_speaker(labelled.group("speaker")) if labelled else None


def load_articles(folder: Path, kind: str) -> dict[str, Article]:
    names, release = ARTICLE_FILES[kind]
    path = require_file(folder, f"{kind} articles", names, release)
    articles: dict[str, Article] = {}
    seen: set[str] = set()
    for line, row in read_rows(path, "articles"):
        article_id = id_of(row, ("id", "document_id", "article_id"), path, line)
        text = field(row, "text", "document_content", "content")
        if article_id is None or not isinstance(text, str):
            raise InputError("an article needs id (or document_id) and text (or document_content)",
                             file=str(path), line=line, field="id" if article_id is None else "text")
        new_id(seen, article_id, "article", path, line, "id")
        title = text_cell(field(row, "title", "document_title"), path, line, "title")
        articles[article_id] = Article(id=article_id, text=text, title=title or None)
    return articles


def optional_articles(folder: Path, kind: str) -> dict[str, Article] | None:
    """The KB articles of `kind` when the folder has them (some scores only note unknown ids with them)."""
    names, release = ARTICLE_FILES[kind]
    return load_articles(folder, kind) if find_file(folder, names, release, f"{kind} articles") else None


def load_rag(folder: Path) -> list[RagCase]:
    """Multi-turn RAG cases: the conversation so far, the gold reply and articles (and a given reply, its articles
    and its gold class, when the data has them)."""
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
        new_id(seen, case_id, "case", path, line, "case_id")
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

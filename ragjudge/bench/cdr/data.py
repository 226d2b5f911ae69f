"""The CDR files: where they are, what they hold, and what is wrong with them (the layout, where they are looked
for, why they are not downloaded: docs/benches/cdr.md#the-data-and-how-to-get-it). Relevance is binary; repeated ids
are deduplicated as a set-based evaluator does.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from ragjudge.bench.cdr.units import UnitSpec, UnitTable, build_units, split_messages, write_units
from ragjudge.errors import InputError, UsageError
from ragjudge.formats.files import decode_text, input_file, open_binary
from ragjudge.formats.jsonl import parse_json

FILES = ("corpus.json", "queries.json", "relevant_docs.json")
SUBPATH = Path("cdr_benchmark_data") / "test_dataset" / "data" / "test"
ENV = "RAGJUDGE_CDR_DATA"
CATEGORY_FILES = ("categories.json", "categories.jsonl", "categories.tsv", "categories.csv")
CATEGORY_FIELDS = ("category", "task_category", "task", "task_type")
CATEGORIES = ("Conversation Dynamics", "Emotion & Feedback", "Intent & Purpose", "Linguistic Style & Expression",
              "Trust, Safety & Ethics")
"""The paper's five task categories (Table 1), in Table 12's order."""
WHERE_TO_GET = ("get them from https://github.com/l-yohai/CDR-Benchmark (cdr_benchmark_data/test_dataset/data/test/; "
                "mind the source datasets' licences, some non-commercial)")


class CdrQuery(BaseModel):
    """One evaluated query: its relevant conversations (deduplicated, in the file's order) and category."""

    model_config = ConfigDict(frozen=True)

    id: str
    text: str
    relevant: list[str]
    listed: int
    """Entries in relevant_docs.json, duplicates included."""
    category: str | None = None


@dataclass
class CdrData:
    folder: Path
    corpus: dict[str, str]
    queries: list[CdrQuery]
    sha256: dict[str, str]
    stats: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    category_file: Path | None = None


def locate(data: str | None) -> Path:
    """The folder holding the three files: `--data`, else $RAGJUDGE_CDR_DATA; the repository root works too."""
    given = data or os.environ.get(ENV)
    if not given:
        raise UsageError(f"bench cdr needs its data: pass --data PATH (the CDR-Benchmark repository or its test "
                         f"folder) or set {ENV}; {WHERE_TO_GET}")
    root = Path(given)
    if not root.exists():
        raise UsageError(f"CDR data folder {root} does not exist; {WHERE_TO_GET}")
    for folder in (root, root / SUBPATH):
        if folder.is_dir() and all((folder / name).exists() for name in FILES):
            for name in FILES:  # a folder named corpus.json is named, not looked past
                input_file(folder / name, "JSON file")
            return folder
    raise UsageError(f"no CDR data in {root}: expected {', '.join(FILES)} there or in {SUBPATH}; {WHERE_TO_GET}")


def _line_of(text: str, key: str) -> int | None:
    """The line where a key is first written (json.load keeps no positions)."""
    at = text.find(json.dumps(key))
    return None if at < 0 else text.count("\n", 0, at) + 1


def _read_object(path: Path, nothing: str) -> tuple[dict[str, Any], str, str]:
    """The object, its text and its bytes' sha256; `nothing` is the error when the object is empty."""
    with open_binary(path, "JSON file") as fh:
        raw = fh.read()
    text = decode_text(raw, path=path)
    if not text.strip():
        raise InputError("is empty: expected a JSON object of id -> value", file=str(path), line=1)
    obj = parse_json(text, file=str(path))
    if not isinstance(obj, dict):
        raise InputError(f"expected a JSON object of id -> value, got {type(obj).__name__}", file=str(path), line=1)
    if not obj:
        raise InputError(nothing, file=str(path), line=1)
    return obj, text, hashlib.sha256(raw).hexdigest()


def _strings(path: Path, nothing: str, *, allow_empty: bool) -> tuple[dict[str, str], str]:
    obj, text, sha = _read_object(path, nothing)
    for key, value in obj.items():
        if not isinstance(value, str):
            raise InputError(f"must be a string, got {type(value).__name__}", file=str(path),
                             line=_line_of(text, key), field=key)
        if not allow_empty and not value.strip():
            raise InputError("is empty", file=str(path), line=_line_of(text, key), field=key)
    return obj, sha


def load(folder: Path, categories: str | None = None) -> CdrData:
    """The three files (and the category file, if any), each checked as it is read: an error names the file
    it is in, with the line and the id (field) where there is one."""
    corpus, corpus_sha = _strings(folder / "corpus.json", "has no conversations", allow_empty=True)
    queries, queries_sha = _strings(folder / "queries.json", "has no queries", allow_empty=False)
    rel_path = folder / "relevant_docs.json"
    relevant_obj, relevant_text, relevant_sha = _read_object(rel_path, "has no relevance lists")
    sha = {"corpus.json": corpus_sha, "queries.json": queries_sha, "relevant_docs.json": relevant_sha}

    relevant: dict[str, list[str]] = {}
    listed: dict[str, int] = {}
    not_in_corpus: set[tuple[str, str]] = set()
    for qid, docs in relevant_obj.items():
        where = {"file": str(rel_path), "line": _line_of(relevant_text, qid), "field": qid}
        if not isinstance(docs, list):
            raise InputError(f"must be a list of conversation ids, got {type(docs).__name__}", **where)
        for i, doc in enumerate(docs):
            if not isinstance(doc, str):
                raise InputError(f"must be a list of conversation ids (strings): [{i}] is {type(doc).__name__}",
                                 **where)
            if not doc.strip():
                raise InputError(f"conversation id [{i}] is empty", **where)
        relevant[qid] = list(dict.fromkeys(docs))
        listed[qid] = len(docs)
        not_in_corpus.update((qid, d) for d in docs if d not in corpus)

    category_file = find_category_file(folder, categories)
    category_of = read_categories(category_file) if category_file else {}
    evaluated = [CdrQuery(id=qid, text=q, relevant=relevant[qid], listed=listed[qid], category=category_of.get(qid))
                 for qid, q in queries.items() if relevant.get(qid)]
    no_relevant = sorted(q for q in queries if not relevant.get(q))
    unknown_queries = sorted(q for q in relevant if q not in queries)
    raw_pairs = sum(listed[q.id] for q in evaluated)
    unique_pairs = sum(len(q.relevant) for q in evaluated)
    stats: dict[str, Any] = {
        "conversations": len(corpus), "queries": len(queries), "evaluated_queries": len(evaluated),
        "queries_without_relevant": len(no_relevant), "relevant_for_unknown_queries": len(unknown_queries),
        "raw_pairs": raw_pairs, "unique_pairs": unique_pairs, "duplicate_pairs": raw_pairs - unique_pairs,
        "relevant_per_query": round(unique_pairs / len(evaluated), 3) if evaluated else 0.0,
        "relevant_not_in_corpus": len(not_in_corpus),
    }
    if category_file:
        stats["categorised_queries"] = sum(1 for q in evaluated if q.category)
        stats["category_ids_not_in_queries"] = len(set(category_of) - set(queries))
    warnings = []
    if no_relevant:
        warnings.append(f"{len(no_relevant)} queries have no relevant conversation and are left out "
                        f"(e.g. {no_relevant[0]})")
    if unknown_queries:
        warnings.append(f"{len(unknown_queries)} ids in relevant_docs.json are not in queries.json and are ignored "
                        f"(e.g. {unknown_queries[0]})")
    if not_in_corpus:
        qid, doc = min(not_in_corpus)
        warnings.append(f"{len(not_in_corpus)} relevant pairs name a conversation missing from corpus.json (e.g. "
                        f"{qid} -> {doc}): they count as relevant but can never be retrieved")
    if not evaluated:
        raise InputError("no query in queries.json has a relevant conversation in relevant_docs.json",
                         file=str(rel_path))
    if category_file:
        sha[category_file.name] = hashlib.sha256(category_file.read_bytes()).hexdigest()
    return CdrData(folder, corpus, evaluated, sha, stats, warnings, category_file)


# ------------------------------------------------------------------------------------ categories

def find_category_file(folder: Path, given: str | None) -> Path | None:
    if given:
        path = Path(given)
        if not path.exists():
            raise UsageError(f"-T categories: file not found: {path}")
        return input_file(path, "category file")
    return next((folder / n for n in CATEGORY_FILES if (folder / n).exists()), None)  # a folder: an error on reading


def _norm(name: str) -> str:
    return re.sub(r"[^a-z]", "", name.lower().replace("&", "and"))


_CANONICAL = {_norm(c): c for c in CATEGORIES}


def canonical_category(name: str) -> str:
    """The paper's spelling when the name is one of its five categories (any case, `and` for `&`), else as is."""
    return _CANONICAL.get(_norm(name), name.strip())


def read_categories(path: Path) -> dict[str, str]:
    """Query id -> category, from a JSON object {"query_<n>": "Emotion & Feedback"} or a JSONL/CSV/TSV file
    with a query id column (`query_id`, `_id`, `id`, ...) and a `category` (or `task`) column."""
    if path.suffix.lower() == ".json":
        obj, text, _ = _read_object(path, "has no query categories")
        out: dict[str, str] = {}
        for qid, value in obj.items():
            if not isinstance(value, str) or not value.strip():
                raise InputError("must be a category name", file=str(path), line=_line_of(text, qid), field=qid)
            out[qid] = canonical_category(value)
        return out
    from ragjudge.retrieval_eval.breakdowns import read_labels

    out = {}
    for qid, fields in read_labels(path).items():
        value = next((fields[f] for f in fields if _norm(f) in {_norm(c) for c in CATEGORY_FIELDS}), None)
        if not isinstance(value, str) or not value.strip():
            raise InputError(f"query {qid!r} has no category (expected a column named one of "
                             f"{', '.join(CATEGORY_FIELDS)})", file=str(path))
        out[qid] = canonical_category(value)
    return out


# ------------------------------------------------------------------------------------ a run's inputs

@dataclass(frozen=True)
class CdrInputs:
    """What a run is built from, read once before any work: the data, its units, and the unit file (a BEIR corpus)
    that the pipeline indexes."""

    data: CdrData
    table: UnitTable
    units_file: Path

    @cached_property
    def unit_text(self) -> dict[str, str]:
        return {u.id: u.text for u in self.table.units}


def load_inputs(data: str | None, categories: str | None, spec: UnitSpec, units_folder: Path,
                depth: int | None = None) -> CdrInputs:
    """The data (checked), cut into units and written as the unit file; `depth`, when the user set it, is checked
    against the number of conversations."""
    loaded = load(locate(data), categories)
    messages = [len(split_messages(text)[0]) for text in loaded.corpus.values()]
    loaded.stats["messages_per_conversation"] = round(sum(messages) / len(messages), 2)
    conversations = len(loaded.corpus)
    if depth is not None and depth > max(20, conversations):
        raise UsageError(f"-T depth must be between 20 and {max(20, conversations)} (corpus.json has "
                         f"{conversations:,} conversations), got {depth}")
    table = build_units(loaded.corpus, spec)
    if not table.units:
        raise UsageError(f"unit {spec.label} gives no unit for any conversation")
    return CdrInputs(loaded, table, write_units(table, units_folder, loaded.sha256["corpus.json"]))

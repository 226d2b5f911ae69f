"""Retrieval runs and relevance judgments: MTRAG retrieval predictions, TREC runs, BEIR and TREC qrels.

Ranking rule (written down because evaluation tools differ on ties): by score, highest first, equal scores in file
order (list position in MTRAG files, the rank column in TREC runs). Query ids are compared in one form
(`normalize_task_id`), so `conv<::>3` in a run matches `conv::3` in qrels.

Plain containers rather than ranx objects: ranx's Run/Qrels are numba dictionaries that reorder ties by their own
rule and drop the ids as written and the collection; `ragjudge.retrieval_eval` converts at evaluation time.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragjudge.errors import InputError
from ragjudge.formats.files import atomic_output, first_line, iter_lines
from ragjudge.formats.jsonl import dumps, read_jsonl
from ragjudge.models import normalize_task_id

TREC_RUN_FIELDS = ("qid", "Q0", "docid", "rank", "score", "tag")
TREC_QRELS_FIELDS = ("qid", "iteration", "docid", "relevance")
BEIR_QRELS_FIELDS = ("query-id", "corpus-id", "score")


@dataclass(frozen=True)
class Hit:
    """One retrieved passage; text and title are kept when the run file has them (MTRAG files do)."""

    doc_id: str
    score: float
    text: str | None = None
    title: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Run:
    """Ranked passages per query: normalised query id -> hits, best first."""

    rankings: dict[str, list[Hit]] = field(default_factory=dict)
    ids: dict[str, str] = field(default_factory=dict)
    """Normalised query id -> the id as written in the file."""
    collections: dict[str, str] = field(default_factory=dict)
    """Normalised query id -> MTRAG `Collection`, when the file gives one."""
    name: str = "run"
    source: str | None = None

    def __len__(self) -> int:
        return len(self.rankings)

    def add(self, query_id: str, hits: list[Hit], *, collection: str | None = None) -> None:
        """Add one query, ranking its hits by the module's rule (score, then the given order)."""
        key = normalize_task_id(query_id)
        self.rankings[key] = rank_hits(hits)
        self.ids[key] = query_id
        if collection:
            self.collections[key] = collection


@dataclass
class Qrels:
    """Relevance judgments: normalised query id -> {doc id: relevance}; relevance > 0 means relevant."""

    judgments: dict[str, dict[str, int]] = field(default_factory=dict)
    ids: dict[str, str] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.judgments)

    def relevant(self, key: str) -> dict[str, int]:
        return {d: r for d, r in self.judgments.get(key, {}).items() if r > 0}

    def merge(self, other: Qrels) -> Qrels:
        """Union of two qrels (e.g. one file per domain); a judgment given twice must agree."""
        merged = Qrels({q: dict(j) for q, j in self.judgments.items()}, dict(self.ids), self.sources + other.sources)
        for key, docs in other.judgments.items():
            mine = merged.judgments.setdefault(key, {})
            merged.ids.setdefault(key, other.ids[key])
            for doc, rel in docs.items():
                if doc in mine and mine[doc] != rel:
                    raise InputError(f"query {other.ids[key]!r}, document {doc!r} is judged {mine[doc]} in "
                                     f"{self.sources[0] if self.sources else 'another file'} and {rel} here",
                                     file=other.sources[0] if other.sources else None)
                mine[doc] = rel
        return merged


def rank_hits(hits: list[Hit]) -> list[Hit]:
    """Best score first; Python's sort is stable, so ties keep the order they were given in."""
    return sorted(hits, key=lambda h: -h.score)


# ---------------------------------------------------------------- reading runs

def read_run(path: str | Path, *, name: str | None = None) -> Run:
    """Read a run file whose first line says its format: a JSON object (MTRAG) or TREC columns. A ragjudge run
    folder is read by `ragjudge.formats.sample_runs.read_any_run`."""
    path = Path(path)
    first = _first_line(path)
    if first is None:
        raise InputError("the run file is empty", file=str(path))
    run = read_mtrag_run(path) if first.lstrip().startswith("{") else read_trec_run(path)
    run.name = name or path.stem
    return run


def read_mtrag_run(path: str | Path) -> Run:
    """MTRAG retrieval predictions: `{"task_id", "Collection", "contexts": [{"document_id", "score", ...}]}`."""
    path = Path(path)
    run = Run(source=str(path), name=path.stem)
    seen_at: dict[str, int] = {}
    for number, record in read_jsonl(path):
        where = {"file": str(path), "line": number}
        task_id = record.get("task_id")
        if not isinstance(task_id, str) or not task_id.strip():
            raise InputError("is missing or not a non-empty string", field="task_id", **where)
        key = normalize_task_id(task_id)
        if key in seen_at:
            raise InputError(f"query {task_id!r} already appears on line {seen_at[key]}", field="task_id", **where)
        seen_at[key] = number
        contexts = record.get("contexts")
        if contexts is None:
            contexts = []
        if not isinstance(contexts, list):
            raise InputError(f"must be a list of passages, got {type(contexts).__name__}", field="contexts", **where)
        hits: list[Hit] = []
        docs: set[str] = set()
        for i, ctx in enumerate(contexts):
            fname = f"contexts[{i}]"
            if not isinstance(ctx, dict):
                raise InputError("must be an object", field=fname, **where)
            doc_id = ctx.get("document_id")
            if isinstance(doc_id, int) and not isinstance(doc_id, bool):
                doc_id = str(doc_id)
            if not isinstance(doc_id, str) or not doc_id:
                raise InputError("is missing or not a string", field=f"{fname}.document_id", **where)
            if doc_id in docs:
                raise InputError(f"document {doc_id!r} is listed twice for this query", field=f"{fname}.document_id",
                                 **where)
            docs.add(doc_id)
            score = _number(ctx.get("score"))
            if score is None:
                raise InputError(f"must be a finite number, got {ctx.get('score')!r}", field=f"{fname}.score", **where)
            text, title = ctx.get("text"), ctx.get("title")
            extra = {k: v for k, v in ctx.items() if k not in ("document_id", "score", "text", "title")}
            hits.append(Hit(doc_id, score, text if isinstance(text, str) else None,
                            title if isinstance(title, str) else None, extra))
        collection = record.get("Collection", record.get("collection"))
        run.add(task_id, hits, collection=collection if isinstance(collection, str) else None)
    if not run.rankings:
        raise InputError("the run file has no queries", file=str(path))
    return run


def read_trec_run(path: str | Path) -> Run:
    """TREC run: `qid Q0 docid rank score tag`, whitespace-separated, one retrieved passage a line."""
    path = Path(path)
    per_query: dict[str, list[tuple[int, int, Hit]]] = {}
    seen: dict[tuple[str, str], int] = {}
    for number, parts in _columns(path, split_on=None):
        where = {"file": str(path), "line": number}
        if len(parts) != 6:
            raise InputError(f"expected 6 whitespace-separated fields ({' '.join(TREC_RUN_FIELDS)}), got "
                             f"{len(parts)}; MTRAG runs must be JSON objects, one per line", **where)
        qid, _, docid, rank_text, score_text, _ = parts
        try:
            rank = int(rank_text)
        except ValueError:
            raise InputError(f"must be an integer, got {rank_text!r}", field="rank", **where) from None
        score = _number(score_text)
        if score is None:
            raise InputError(f"must be a finite number, got {score_text!r}", field="score", **where)
        key = normalize_task_id(qid)
        if (key, docid) in seen:
            raise InputError(f"document {docid!r} already ranked for query {qid!r} on line {seen[key, docid]}",
                             field="docid", **where)
        seen[key, docid] = number
        per_query.setdefault(qid, []).append((rank, number, Hit(docid, score)))
    if not per_query:
        raise InputError("the run file has no queries", file=str(path))
    run = Run(source=str(path), name=path.stem)
    for qid, rows in per_query.items():
        if normalize_task_id(qid) in run.rankings:
            raise InputError(f"query {qid!r} is written both with '<::>' and '::'", file=str(path))
        run.add(qid, [hit for _, _, hit in sorted(rows, key=lambda r: (r[0], r[1]))])
    return run


# ---------------------------------------------------------------- writing runs

def write_trec_run(run: Run, path: str | Path, *, tag: str | None = None, depth: int | None = None) -> None:
    """Write `qid Q0 docid rank score tag` lines, ranks from 1, in the run's ranking order."""
    _atomic_write(path, trec_run_lines(run, tag=tag, depth=depth))


def trec_run_lines(run: Run, *, tag: str | None = None, depth: int | None = None) -> list[str]:
    tag = tag or run.name or "ragjudge"
    _check_token(tag, "tag")
    lines = []
    for key, hits in run.rankings.items():
        qid = run.ids.get(key, key)
        _check_token(qid, "query id")
        for rank, hit in enumerate(hits[:depth], start=1):
            _check_token(hit.doc_id, "document id")
            lines.append(f"{qid} Q0 {hit.doc_id} {rank} {hit.score!r} {tag}\n")
    return lines


def write_mtrag_run(run: Run, path: str | Path, *, depth: int | None = None) -> None:
    """Write MTRAG retrieval predictions; text and title are written when the run knows them."""
    _atomic_write(path, mtrag_run_lines(run, depth=depth))


def mtrag_run_lines(run: Run, *, depth: int | None = None) -> list[str]:
    lines = []
    for key, hits in run.rankings.items():
        contexts = [{k: v for k, v in (("document_id", hit.doc_id), ("score", hit.score), ("text", hit.text),
                                       ("title", hit.title)) if v is not None} | hit.extra for hit in hits[:depth]]
        record: dict[str, Any] = {"task_id": run.ids.get(key, key)}
        if key in run.collections:
            record["Collection"] = run.collections[key]
        record["contexts"] = contexts
        lines.append(dumps(record) + "\n")
    return lines


# ---------------------------------------------------------------- qrels

def read_qrels(path: str | Path) -> Qrels:
    """BEIR TSV (`query-id corpus-id score`, header optional) or TREC qrels (`qid 0 docid relevance`)."""
    path = Path(path)
    first = _first_line(path)
    if first is None:
        raise InputError("the qrels file is empty", file=str(path))
    if len(first.split("\t")) == 3:
        return _read_qrels_as(path, "beir")
    if len(first.split()) == 4:
        return _read_qrels_as(path, "trec")
    raise InputError("not a qrels file: expected BEIR 'query-id<TAB>corpus-id<TAB>score' or TREC "
                     "'qid 0 docid relevance' lines", file=str(path), line=1)


_QRELS_FORMATS = {"beir": ("\t", "tab", BEIR_QRELS_FIELDS, (0, 1, 2)),
                  "trec": (None, "whitespace", TREC_QRELS_FIELDS, (0, 2, 3))}
"""How each qrels format splits a line, and which of its columns are the query, the document and the grade."""


def _read_qrels_as(path: Path, fmt: str) -> Qrels:
    split_on, kind, names, used = _QRELS_FORMATS[fmt]
    qrels = Qrels(sources=[str(path)])
    for i, (number, parts) in enumerate(_columns(path, split_on=split_on)):
        if fmt == "beir" and i == 0 and len(parts) == 3 and _relevance(parts[2]) is None:
            continue  # the header (BEIR writes `query-id corpus-id score`; any names are accepted)
        where = {"file": str(path), "line": number}
        if len(parts) != len(names):
            raise InputError(f"expected {len(names)} {kind}-separated fields ({' '.join(names)}), got {len(parts)}",
                             **where)
        _add_judgment(qrels, *(parts[c] for c in used), where=where, fields=tuple(names[c] for c in used))
    return _non_empty(qrels, path)


def _add_judgment(qrels: Qrels, qid: str, docid: str, rel_text: str, *, where: dict[str, Any],
                  fields: tuple[str, str, str]) -> None:
    qid, docid = qid.strip(), docid.strip()
    if not qid:
        raise InputError("is empty", field=fields[0], **where)
    if not docid:
        raise InputError("is empty", field=fields[1], **where)
    rel = _relevance(rel_text)
    if rel is None:
        raise InputError(f"must be an integer relevance grade, got {rel_text.strip()!r}", field=fields[2], **where)
    key = normalize_task_id(qid)
    docs = qrels.judgments.setdefault(key, {})
    qrels.ids.setdefault(key, qid)
    if docid in docs and docs[docid] != rel:
        raise InputError(f"document {docid!r} was already judged {docs[docid]} for query {qid!r}", field=fields[2],
                         **where)
    docs[docid] = rel


def write_qrels(qrels: Qrels, path: str | Path, *, fmt: str = "beir") -> None:
    """Write BEIR TSV (with header) or TREC qrels."""
    _atomic_write(path, qrels_lines(qrels, fmt=fmt))


def qrels_lines(qrels: Qrels, *, fmt: str = "beir") -> list[str]:
    """BEIR TSV lines (with header) or TREC qrels lines."""
    if fmt not in ("beir", "trec"):
        raise ValueError(f"unknown qrels format {fmt!r}")
    lines = ["query-id\tcorpus-id\tscore\n"] if fmt == "beir" else []
    for key, docs in qrels.judgments.items():
        qid = qrels.ids.get(key, key)
        for doc, rel in docs.items():
            if fmt == "trec":
                _check_token(qid, "query id")
                _check_token(doc, "document id")
            lines.append(f"{qid}\t{doc}\t{rel}\n" if fmt == "beir" else f"{qid} 0 {doc} {rel}\n")
    return lines


# ---------------------------------------------------------------- helpers

def _first_line(path: Path) -> str | None:
    return first_line(path, "run or qrels file")


def _columns(path: Path, *, split_on: str | None) -> Iterator[tuple[int, list[str]]]:
    for number, line, _ in iter_lines(path, "run or qrels file"):
        line = line.rstrip("\r\n")
        if line.strip():
            yield number, line.split(split_on)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _relevance(text: str) -> int | None:
    number = _number(text.strip())
    if number is None or number != int(number):
        return None
    return int(number)


def _non_empty(qrels: Qrels, path: Path) -> Qrels:
    if not qrels.judgments:
        raise InputError("the qrels file has no judgments", file=str(path))
    return qrels


def _check_token(value: str, what: str) -> None:
    if not value or any(c.isspace() for c in value):
        raise InputError(f"{what} {value!r} cannot be written to a whitespace-separated TREC file")


def _atomic_write(path: str | Path, lines: Iterable[str]) -> None:
    with atomic_output(path) as tmp, tmp.open("w", encoding="utf-8") as fh:
        fh.writelines(lines)

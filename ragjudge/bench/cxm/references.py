"""The paper's figures beside a run's, only under the exact conditions they were measured under: the rule and what
the tasks' `paper.py` share (each task's own table and conditions are in its `paper.py`).

A paper cell is keyed by what it measured: the model by exact name (`paper.ALIASES`, never a nearby name), the
retriever, the chunk size (characters, overlap 100), k, the query formation, the judge, the protocol, and the whole
release (no --limit). A matching run gets a `Reference` (paper and ours, as fractions); any other gets one note line
saying why not. A predictions file names no system, so no paper figure describes it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragjudge.bench.cxm import paper as T
from ragjudge.engine import paper_rows
from ragjudge.engine.summary import Reference
from ragjudge.retrieval.corpus import CHARACTERS, ChunkingSpec
from ragjudge.retrieval.spec import PipelineSpec, RetrieverSpec, load_pipeline

NONE_SHOWN = paper_rows.NONE_SHOWN
FILE = "this run scores a predictions file, which names no system (model, retriever, prompts) to match the paper's rows"
PARTIAL = "this run stops at --limit, the paper's figures are over the whole release"
NO_LIMIT = "Add no --limit: the paper's figures are over the whole release."
COLUMNS = ["figure", "paper", "ours"]


@dataclass
class Shown:
    """The paper's cells shown beside a run, or why none is (one note line)."""

    references: list[Reference] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def none_shown(*why: str) -> Shown:
    return Shown(notes=[NONE_SHOWN + "; ".join(w for w in why if w)])


def shown_not(why: list[str], partial: bool) -> Shown | None:
    """The note saying why no paper cell describes the run (`why`, then a run cut by --limit), or None: shown."""
    why = [*why, PARTIAL] if partial else why
    return none_shown(*why) if why else None


def paper_row(name: str | None, rows: Iterable[str]) -> str | None:
    """The paper's row among `rows` that a model name is (`paper.ALIASES`, exact names only)."""
    return paper_rows.paper_row(name, T.ALIASES, rows)


def _dense_model(options: dict[str, Any]) -> str:
    return str(options.get("model") or "")


def _members(spec: RetrieverSpec, extra_dirs: Sequence[str]) -> list[RetrieverSpec]:
    """A hybrid's member retrievers: inline ones, or the retriever of the pipeline a member names."""
    out = []
    for member in spec.options.get("retrievers") or []:
        if isinstance(member, dict):
            out.append(RetrieverSpec(name=str(member.get("retriever")), options=member.get("options") or {}))
        else:
            out.append(load_pipeline(str(member), list(extra_dirs)).retriever)
    return out


def retriever_of(spec: PipelineSpec, extra_dirs: Sequence[str] = ()) -> tuple[str | None, str]:
    """(the paper's name for the pipeline's retriever, or None; how ours reads): BM25, one of the paper's embedding
    models (`paper.EMBEDDINGS`, by exact name), or a hybrid of BM25 and text-embedding-ada-002."""
    retriever = spec.retriever
    if retriever.name == "bm25":
        return T.BM25, "BM25"
    if retriever.name == "dense":
        model = _dense_model(retriever.options)
        return paper_row(model, T.EMBEDDINGS), f"dense {model}"
    if retriever.name == "hybrid":
        members = _members(retriever, extra_dirs)
        names = sorted(m.name for m in members)
        dense = [paper_row(_dense_model(m.options), [T.ADA]) for m in members if m.name == "dense"]
        described = "hybrid of " + ", ".join(f"dense {_dense_model(m.options)}" if m.name == "dense" else m.name
                                             for m in members)
        return (T.ADA_BM25 if names == ["bm25", "dense"] and dense == [T.ADA] else None), described
    return None, retriever.name


def chunk_size(chunking: ChunkingSpec | None) -> int | None:
    """Characters per chunk when articles are split as CXMArena's predictor splits them (overlap 100), else None."""
    if chunking is None or chunking.tokenizer != CHARACTERS or chunking.overlap != T.OFFICIAL_OVERLAP:
        return None
    return chunking.size


def chunk_words(chunking: ChunkingSpec | None) -> str:
    if chunking is None:
        return "whole articles"
    unit = "characters" if chunking.tokenizer == CHARACTERS else f"{chunking.tokenizer} tokens"
    return f"chunks of {chunking.size} {unit} overlapping by {chunking.overlap}"


def reference(table: int, what: str, rows: list[list[Any]], comparable: str, notes: Sequence[str] = ()) -> Reference:
    return Reference(title=f"Paper, Table {table}: {what}", columns=list(COLUMNS), rows=rows,
                     source=f"{T.PAPER}, Table {table}", unit="fraction", comparable=comparable, notes=list(notes))


def side_by_side(names: Sequence[str], paper: Sequence[float], metrics: dict[str, Any],
                  ours: Sequence[str]) -> list[list[Any]]:
    return [[name, p, metrics.get(metric)] for name, p, metric in zip(names, paper, ours, strict=True)]


def not_reported(table: int, rows: Iterable[str], role: str, name: str | None) -> str:
    return f"Table {table} reports {', '.join(rows)} (exact names, paper.ALIASES); this run's {role} is {name}"


@dataclass(frozen=True)
class QueryFormation:
    """How the run's conversations became queries: the strategy, and for `llm` whether the prompt is CXMArena's."""

    strategy: str
    official_prompt: bool = True


def query_why(query: QueryFormation) -> list[str]:
    if query.strategy != "llm":
        return [f"the paper's queries are written by an LLM (-T query=llm); this run's are {query.strategy}"]
    if not query.official_prompt:
        return ["the query-formation prompt is overridden (--judge-dir), not CXMArena's query_formation.txt"]
    return []

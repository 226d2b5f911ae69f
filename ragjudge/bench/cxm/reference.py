"""The paper's figures beside a run's, only under the exact conditions they were measured under.

A paper cell is keyed by what it measured: the model under test by exact name (`paper.ALIASES`, never a nearby
name), the retriever (the pipeline's BM25 or embedding model, a hybrid of the two), the chunk size (characters,
CXMArena's overlap of 100), k, the query formation (an LLM with CXMArena's own prompt), the judge, the protocol
of the figure ours is set beside (CXMArena's evaluator's), and the whole release (no --limit). A run that matches
a cell gets a `Reference` of that cell, paper and ours side by side, as fractions. A run that matches none gets
no figure and one note line saying why (`no paper figure is shown: ...`). A predictions file names no system,
so no paper figure describes it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragjudge.engine import paper_rows
from ragjudge.bench.cxm import paper as T
from ragjudge.engine.summary import Reference
from ragjudge.retrieval.corpus import CHARACTERS, ChunkingSpec
from ragjudge.retrieval.spec import PipelineSpec, RetrieverSpec, load_pipeline

NONE_SHOWN = paper_rows.NONE_SHOWN
FILE = "this run scores a predictions file, which names no system (model, retriever, prompts) to match the paper's rows"
PARTIAL = "this run stops at --limit, the paper's figures are over the whole release"
COLUMNS = ["figure", "paper", "ours"]


@dataclass
class Shown:
    """The paper's cells shown beside a run, or why none is (one note line)."""

    references: list[Reference] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def none_shown(*why: str) -> Shown:
    return Shown(notes=[NONE_SHOWN + "; ".join(w for w in why if w)])


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


def _chunk_words(chunking: ChunkingSpec | None) -> str:
    if chunking is None:
        return "whole articles"
    unit = "characters" if chunking.tokenizer == CHARACTERS else f"{chunking.tokenizer} tokens"
    return f"chunks of {chunking.size} {unit} overlapping by {chunking.overlap}"


def _reference(table: int, what: str, rows: list[list[Any]], comparable: str, notes: Sequence[str] = ()) -> Reference:
    return Reference(title=f"Paper, Table {table}: {what}", columns=list(COLUMNS), rows=rows,
                     source=f"{T.PAPER}, Table {table}", unit="fraction", comparable=comparable, notes=list(notes))


def _side_by_side(names: Sequence[str], paper: Sequence[float], metrics: dict[str, Any],
                  ours: Sequence[str]) -> list[list[Any]]:
    return [[name, p, metrics.get(metric)] for name, p, metric in zip(names, paper, ours, strict=True)]


def _not_reported(table: int, rows: Iterable[str], role: str, name: str | None) -> str:
    return f"Table {table} reports {', '.join(rows)} (exact names, paper.ALIASES); this run's {role} is {name}"


# -- the tables --------------------------------------------------------------------------------------------

def kb(model: str, threshold: float, k: int, from_file: bool, metrics: dict[str, Any]) -> Shown:
    """Table 2: similar pairs by an embedding model, k nearest neighbours and a fixed threshold."""
    if from_file:
        return none_shown(FILE)
    row = paper_row(model, T.TABLE2_KB)
    why = [] if row else [f"Table 2's rows are {', '.join(T.TABLE2_KB)}; this run embeds with {model}"]
    if (threshold, k) != (T.KB_THRESHOLD, T.KB_K):
        why.append(f"the paper's baseline is CXMArena's predictor's (threshold {T.KB_THRESHOLD}, {T.KB_K} "
                   f"neighbours); this run -T threshold={threshold:g} -T k={k}")
    if why:
        return none_shown(*why)
    assert row is not None
    names = ["similar precision", "similar recall", "similar F1"]
    return Shown([_reference(2, f"KB refinement, similar pairs by {row} (k nearest neighbours, threshold)",
                             _side_by_side(names, T.TABLE2_KB[row], metrics, names),
                             f"this run: {row} embeddings of the whole articles, each article's {T.KB_K} nearest "
                             f"neighbours, cosine similarity >= {T.KB_THRESHOLD} (CXMArena's predictor's settings: "
                             f"the paper gives neither its "
                             f"threshold nor k); still different: a pair counts here whichever of its articles finds "
                             f"the other (the predictor: only the lower-numbered one)")])


def intent(gen: str | None, from_file: bool, partial: bool, accuracy: dict[str, Any]) -> Shown:
    """Table 4: accuracy per taxonomy (`accuracy`: taxonomy → our accuracy under the paper protocol)."""
    if from_file:
        return none_shown(FILE)
    row = paper_row(gen, T.TABLE4_INTENT)
    why = [] if row else [_not_reported(4, T.TABLE4_INTENT, "model", gen)]
    taxonomies = [t for t in accuracy if t in T.TAXONOMIES]
    if not taxonomies:
        why.append(f"the paper's taxonomies are the release's {', '.join(T.TAXONOMIES)}; this run's: "
                   f"{', '.join(accuracy)}")
    if partial:
        why.append(PARTIAL)
    if why:
        return none_shown(*why)
    assert row is not None
    columns = list(T.TAXONOMIES)
    rows = [[f"accuracy, {T.TAXONOMIES[t]} ({t})", T.TABLE4_INTENT[row][columns.index(t)], accuracy[t]]
            for t in taxonomies]
    return Shown([_reference(4, f"intent prediction, {row}", rows,
                             f"this run: {row} on the release's Intent_Prediction, accuracy under the paper "
                             f"protocol (answers fuzzy-mapped to the taxonomy as CXMArena's predictor does, thefuzz "
                             f"WRatio >= 70, then exact match); still different: ragjudge's prompt "
                             f"(judges/cxm_intent_prediction.yaml), not CXMArena's")])


def quality(gen: str | None, from_file: bool, partial: bool, metrics: dict[str, Any], paper_accuracy: str,
            case_accuracy: str) -> Shown:
    """Table 5: case-level and question-level accuracy."""
    if from_file:
        return none_shown(FILE)
    row = paper_row(gen, T.TABLE5_QUALITY)
    why = [] if row else [_not_reported(5, T.TABLE5_QUALITY, "model", gen)]
    if partial:
        why.append(PARTIAL)
    if why:
        return none_shown(*why)
    assert row is not None
    rows = _side_by_side(["case-level accuracy", "question-level accuracy"], T.TABLE5_QUALITY[row], metrics,
                         [case_accuracy, paper_accuracy])
    return Shown([_reference(5, f"agent quality adherence, {row}", rows,
                             f"this run: {row} on the release's Agent_Quality_Adherence; ours: {case_accuracy} and "
                             f"{paper_accuracy} (CXMArena's evaluator: an unanswered question skipped); still "
                             f"different: ragjudge's prompt (judges/cxm_quality_adherence.yaml), not CXMArena's")])


def search(spec: PipelineSpec, chunking: ChunkingSpec | None, ks: Sequence[int], from_file: bool, partial: bool,
           metrics: dict[str, Any]) -> Shown:
    """Table 6: "retrieval precision" = hit@10 on the predictor's ranking, by retriever and chunk size."""
    if from_file:
        return none_shown(FILE)
    retriever, described = retriever_of(spec)
    size = chunk_size(chunking)
    cell = (retriever, size) if retriever is not None and size is not None else None
    why = []
    if cell not in T.TABLE6_SEARCH:
        cells = "; ".join(f"{T.TABLE6_LABELS.get(r, r)}, chunks of {c}" for r, c in T.TABLE6_SEARCH)
        why.append(f"Table 6's cells are {cells} (characters, overlap {T.OFFICIAL_OVERLAP}); this run: {described}, "
                   f"{_chunk_words(chunking)}")
    if 10 not in ks:
        why.append(f"the paper's precision is at 10; this run -T ks={','.join(map(str, ks))}")
    if partial:
        why.append(PARTIAL)
    if why:
        return none_shown(*why)
    assert cell is not None
    metric = "hit@10 (official: top-10 passages, repeats removed)"
    label = f"{T.TABLE6_LABELS[cell[0]]} ({cell[0]})" if cell[0] in T.TABLE6_LABELS else cell[0]
    return Shown([_reference(6, f"article search, {label}, chunks of {cell[1]} characters",
                             [["retrieval precision (hit@10)", T.TABLE6_SEARCH[cell], metrics.get(metric)]],
                             f"this run: {cell[0]} over chunks of {cell[1]} characters (overlap "
                             f"{T.OFFICIAL_OVERLAP}), ours: {metric}; still different: the paper searches a faiss "
                             f"L2 index (ragjudge: the pipeline's own search)")])


@dataclass(frozen=True)
class QueryFormation:
    """How the run's conversations became queries: the strategy, and for `llm` whether the prompt is CXMArena's."""

    strategy: str
    official_prompt: bool = True


def _query_why(query: QueryFormation) -> list[str]:
    if query.strategy != "llm":
        return [f"the paper's queries are written by an LLM (-T query=llm); this run's are {query.strategy}"]
    if not query.official_prompt:
        return ["the query-formation prompt is overridden (--judge-dir), not CXMArena's query_formation.txt"]
    return []


def multiturn(spec: PipelineSpec, chunking: ChunkingSpec | None, ks: Sequence[int], query: QueryFormation,
              from_file: bool, partial: bool, metrics: dict[str, Any]) -> Shown:
    """Table 8: average recall at 10 and 20 by embedding model, chunks of 500, LLM-formed queries."""
    if from_file:
        return none_shown(FILE)
    retriever, described = retriever_of(spec)
    rows_of = {r for r, _ in T.TABLE8_RETRIEVAL}
    why = [] if retriever in rows_of else [f"Table 8's retrievers are {', '.join(sorted(rows_of))}; this run's: "
                                           + described]
    if chunk_size(chunking) != T.TABLE8_CHUNK:
        why.append(f"Table 8 splits articles into chunks of {T.TABLE8_CHUNK} characters (overlap "
                   f"{T.OFFICIAL_OVERLAP}); this run: {_chunk_words(chunking)}")
    cutoffs = [k for k in ks if (retriever, k) in T.TABLE8_RETRIEVAL]
    if not why and not cutoffs:
        why.append(f"Table 8 reports k = 10 and 20; this run -T ks={','.join(map(str, ks))}")
    why += _query_why(query)
    if partial:
        why.append(PARTIAL)
    if why:
        return none_shown(*why)
    rows = [[f"average recall @{k}", T.TABLE8_RETRIEVAL[(retriever, k)], metrics.get(f"R@{k} (paper protocol)")]
            for k in cutoffs]
    return Shown([_reference(8, f"multi-turn retrieval, {retriever}, chunks of {T.TABLE8_CHUNK} characters, "
                             f"LLM-formed queries", rows,
                             f"this run: {retriever} over chunks of {T.TABLE8_CHUNK} characters (overlap "
                             f"{T.OFFICIAL_OVERLAP}), queries written by an LLM with CXMArena's query-formation "
                             f"prompt; ours: R@k (paper protocol), CXMArena's evaluator on its predictor's ranking; "
                             f"still different: the paper does not name its query writer (CXMArena's predictor: "
                             f"gemini-2.0-flash)")])


def classification(gen: str | None, judge: str | None, spec: PipelineSpec, chunking: ChunkingSpec | None, k: int,
                   query: QueryFormation, from_file: bool, partial: bool, metrics: dict[str, Any]) -> Shown:
    """Table 7: the class shares of GPT-4o's and Gemini 2.0 Flash's replies from ada-002 retrieval over chunks of
    1000 (top 10, LLM-formed queries), judged by GPT-4o."""
    if from_file:
        return none_shown(FILE)
    if gen is None:
        return none_shown("this run classifies the data's own replies; Table 7 classifies the replies of "
                          f"{' and '.join(T.TABLE7_CLASSES)} (--gen)")
    setup = T.TABLE7_SETUP
    row = paper_row(gen, T.TABLE7_CLASSES)
    why = [] if row else [_not_reported(7, T.TABLE7_CLASSES, "replier", gen)]
    if paper_row(judge, [setup["judge"]]) is None:
        why.append(f"the paper's judge is {setup['judge']}; this run's is {judge}")
    retriever, described = retriever_of(spec)
    if retriever != setup["retriever"]:
        why.append(f"the paper retrieves with {setup['retriever']}; this run with {described}")
    if chunk_size(chunking) != setup["chunk"]:
        why.append(f"the paper splits articles into chunks of {setup['chunk']} characters (overlap "
                   f"{T.OFFICIAL_OVERLAP}); this run: {_chunk_words(chunking)}")
    if k != setup["k"]:
        why.append(f"CXMArena's predictor gives the replier the top {setup['k']}; this run -T k={k}")
    why += _query_why(query)
    if partial:
        why.append(PARTIAL)
    if why:
        return none_shown(*why)
    assert row is not None
    names = ["Correct", "Incorrect", "Hallucination", "Refusal"]
    rows = _side_by_side([f"{n} share" for n in names], T.TABLE7_CLASSES[row], metrics, [f"{n} share" for n in names])
    return Shown([_reference(7, f"multi-turn RAG answer classes, {row} replies", rows,
                             f"this run: {row} replies from the top {setup['k']} articles by {setup['retriever']} "
                             f"over chunks of {setup['chunk']} characters, queries written by an LLM with CXMArena's "
                             f"prompt, labelled by {setup['judge']}; still different: ragjudge's reply and "
                             f"classification prompts (judges/cxm_agent_response.yaml, "
                             f"cxm_answer_classification.yaml), not CXMArena's; the replier sees {setup['k']} distinct "
                             f"articles (CXMArena's predictor: the articles of the top {setup['k']} passages)")])


def tools(gen: str | None, forced: bool, offered_by_data: dict[int, bool], from_file: bool, partial: bool,
          metrics: dict[str, Any], metric: str) -> Shown:
    """Table 9: tool-selection accuracy by number of offered tools, the model choosing whether to call one.
    `offered_by_data`: for each number of tools run, whether every case's offer is the release's own candidates;
    `metric`: our figure's name with `{n}` for the number of tools."""
    if from_file:
        return none_shown(FILE)
    row = paper_row(gen, T.TABLE9_TOOLS)
    why = [] if row else [_not_reported(9, T.TABLE9_TOOLS, "model", gen)]
    if forced:
        why.append("the paper leaves the tool choice to the model; this run forces a call (-T force_tool_call)")
    sizes = [n for n, given in sorted(offered_by_data.items()) if given and n in T.TABLE9_TOOLS.get(row or "", {})]
    if not why and not sizes:
        why.append("Table 9 offers 16, 32, 64, 96 or 128 of the release's own candidate tools (tool_candidatesN); "
                   "this run offers " + ", ".join(f"{n} ({'the data' if given else 'a seeded draw'})"
                                                  for n, given in sorted(offered_by_data.items())))
    if partial:
        why.append(PARTIAL)
    if why:
        return none_shown(*why)
    assert row is not None
    rows = [[f"tool-selection accuracy @{n} tools", T.TABLE9_TOOLS[row][n], metrics.get(metric.format(n=n))]
            for n in sizes]
    return Shown([_reference(9, f"tool selection, {row}", rows,
                             f"this run: {row} offered the release's own candidate tools, the tool choice left to it; "
                             f"ours: the sorted set of called tool names equals the gold set, as CXMArena's "
                             f"evaluator; still different: ragjudge's system prompt (judges/cxm_tool_call.yaml)")])

"""The paper's Table 8: how to run it as the paper did (`SETUP`, shown by `ragjudge benches show`) and its figures
beside a run measured under the same conditions (`beside`; the rule: `cxm.references`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragjudge.bench.cxm import paper as T
from ragjudge.bench.cxm.references import (FILE, NO_LIMIT, QueryFormation, Shown, chunk_size, chunk_words, none_shown,
                                           query_why, reference, retriever_of, shown_not)
from ragjudge.retrieval.corpus import ChunkingSpec
from ragjudge.retrieval.spec import PipelineSpec

SETUP = (
    "The paper's Table 8 (average recall at 10 and 20, chunks of 500 characters, LLM-formed queries): `ragjudge eval "
    "--bench cxm-multiturn-retrieval --data FOLDER --pipeline dense_ada002 --rewrite-model gemini/gemini-2.0-flash` "
    "(-T chunk=500 and -T ks=10,20 are the defaults); its other rows: a copy of pipelines/dense_ada002.yaml with "
    "openai/text-embedding-3-large, --pipeline intfloat/multilingual-e5-large-instruct. The paper does not name its "
    f"query writer: gemini-2.0-flash is CXMArena's predictor's. {NO_LIMIT}")


def beside(spec: PipelineSpec, chunking: ChunkingSpec | None, ks: Sequence[int], query: QueryFormation,
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
                   f"{T.OFFICIAL_OVERLAP}); this run: {chunk_words(chunking)}")
    cutoffs = [k for k in ks if (retriever, k) in T.TABLE8_RETRIEVAL]
    if not why and not cutoffs:
        why.append(f"Table 8 reports k = 10 and 20; this run -T ks={','.join(map(str, ks))}")
    why += query_why(query)
    if stop := shown_not(why, partial):
        return stop
    rows = [[f"average recall @{k}", T.TABLE8_RETRIEVAL[(retriever, k)], metrics.get(f"R@{k} (paper protocol)")]
            for k in cutoffs]
    return Shown([reference(8, f"multi-turn retrieval, {retriever}, chunks of {T.TABLE8_CHUNK} characters, "
                            f"LLM-formed queries", rows,
                            f"this run: {retriever} over chunks of {T.TABLE8_CHUNK} characters (overlap "
                            f"{T.OFFICIAL_OVERLAP}), queries written by an LLM with CXMArena's query-formation "
                            f"prompt; ours: R@k (paper protocol), CXMArena's evaluator on its predictor's ranking; "
                            f"still different: the paper does not name its query writer (CXMArena's predictor: "
                            f"gemini-2.0-flash)")])

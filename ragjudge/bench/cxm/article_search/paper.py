"""The paper's Table 6: how to run it as the paper did (`SETUP`, shown by `ragjudge benches show`) and its figures
beside a run measured under the same conditions (`beside`; the rule: `cxm.references`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragjudge.bench.cxm import paper as T
from ragjudge.bench.cxm.references import (FILE, NO_LIMIT, Shown, chunk_size, chunk_words, none_shown, reference,
                                           retriever_of, shown_not)
from ragjudge.retrieval.corpus import ChunkingSpec
from ragjudge.retrieval.spec import PipelineSpec

SETUP = (
    "The paper's Table 6 (\"retrieval precision\": a relevant article among the articles of the top 10 passages): "
    "`ragjudge eval --bench cxm-article-search --data FOLDER --pipeline dense_ada002 -T chunk=1000`; its other cells: "
    "--pipeline bm25 -T chunk=500, --pipeline intfloat/multilingual-e5-large-instruct -T chunk=500 or 1000 (the "
    "paper's e5-large-instruct), a copy of pipelines/dense_ada002.yaml with model openai/text-embedding-3-large and "
    f"-T chunk=1000. Keep 10 in -T ks. {NO_LIMIT}")


def beside(spec: PipelineSpec, chunking: ChunkingSpec | None, ks: Sequence[int], from_file: bool, partial: bool,
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
                   f"{chunk_words(chunking)}")
    if 10 not in ks:
        why.append(f"the paper's precision is at 10; this run -T ks={','.join(map(str, ks))}")
    if stop := shown_not(why, partial):
        return stop
    assert cell is not None
    metric = "hit@10 (official: top-10 passages, repeats removed)"
    label = f"{T.TABLE6_LABELS[cell[0]]} ({cell[0]})" if cell[0] in T.TABLE6_LABELS else cell[0]
    return Shown([reference(6, f"article search, {label}, chunks of {cell[1]} characters",
                            [["retrieval precision (hit@10)", T.TABLE6_SEARCH[cell], metrics.get(metric)]],
                            f"this run: {cell[0]} over chunks of {cell[1]} characters (overlap "
                            f"{T.OFFICIAL_OVERLAP}), ours: {metric}; still different: the paper searches a faiss "
                            f"L2 index (ragjudge: the pipeline's own search)")])

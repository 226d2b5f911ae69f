"""The paper's Table 2: how to run it as the paper did (`SETUP`, shown by `ragjudge benches show`) and its figures
beside a run measured under the same conditions (`beside`; the rule: `cxm.references`)."""

from __future__ import annotations

from typing import Any

from ragjudge.bench.cxm import paper as T
from ragjudge.bench.cxm.references import (FILE, Shown, none_shown, paper_row, reference, side_by_side)

SETUP = (
    "The paper's Table 2 (similar pairs by an embedding model; the paper gives neither threshold nor k, so "
    "CXMArena's predictor's -T threshold=0.9 -T k=4, the defaults): `ragjudge eval --bench cxm-kb-refinement --data "
    "FOLDER -T encoder=litellm --gen openai/text-embedding-3-large` (or text-embedding-ada-002); the table's "
    "sentence-transformers models: --gen sentence-transformers/all-mpnet-base-v2, jinaai/jina-embeddings-v3 or "
    "intfloat/multilingual-e5-large.")


def beside(model: str, threshold: float, k: int, from_file: bool, metrics: dict[str, Any]) -> Shown:
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
    return Shown([reference(2, f"KB refinement, similar pairs by {row} (k nearest neighbours, threshold)",
                            side_by_side(names, T.TABLE2_KB[row], metrics, names),
                            f"this run: {row} embeddings of the whole articles, each article's {T.KB_K} nearest "
                            f"neighbours, cosine similarity >= {T.KB_THRESHOLD} (CXMArena's predictor's settings: "
                            f"the paper gives neither its "
                            f"threshold nor k); still different: a pair counts here whichever of its articles finds "
                            f"the other (the predictor: only the lower-numbered one)")])

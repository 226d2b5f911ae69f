"""BERTScore's greedy cosine matching on token embeddings that were computed (or cached) elsewhere.

bert-score's public API always re-encodes its inputs, so reusing embeddings means doing its last step
ourselves. These functions mirror `bert_score.utils.greedy_cos_idf` for one (candidate, reference) pair with
idf=False — the official scripts' one-pair-per-call pattern — in float32 torch, as bert-score computes it.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch


@dataclass(frozen=True)
class MatchInput:
    """One text ready for matching: unit-length token vectors and bert-score's idf=False token weights."""

    vectors: torch.Tensor
    """(tokens, dim) float32, each row divided by its norm, special tokens included."""
    weights: torch.Tensor
    """(tokens,) float32: 0 for [CLS]/[SEP] ids, 1 otherwise, divided by their sum (NaN if all are 0)."""

    @property
    def n_tokens(self) -> int:
        return int(self.vectors.shape[0])


def match_input(vectors: np.ndarray, ids: np.ndarray, zero_weight_ids: Collection[int | None]) -> MatchInput:
    """Normalise raw model outputs the way `greedy_cos_idf` does before matching.

    bert-score gives weight 0 to the tokenizer's sep and cls ids (wherever they occur) and 1 to the rest,
    then divides by the sum, so a text made only of special tokens has NaN weights, as there.
    """
    emb = torch.from_numpy(np.ascontiguousarray(vectors, dtype=np.float32))
    emb = emb / torch.norm(emb, dim=-1).unsqueeze(-1)
    special = np.isin(ids, [i for i in zero_weight_ids if i is not None])
    weights = torch.from_numpy(np.where(special, 0.0, 1.0).astype(np.float32))
    return MatchInput(vectors=emb, weights=weights / weights.sum())


def greedy_match(candidate: MatchInput, reference: MatchInput) -> torch.Tensor:
    """Raw (P, R, F) as a float32 tensor of shape (3,), exactly `greedy_cos_idf` for a batch of one pair.

    Precision: each candidate token's best cosine against the reference, weighted; recall the other way.
    A text of only [CLS][SEP] (empty after stripping) gives P = R = 0, and an undefined F gives 0.
    """
    sim = candidate.vectors @ reference.vectors.T
    precision = (sim.max(dim=1)[0] * candidate.weights).sum()
    recall = (sim.max(dim=0)[0] * reference.weights).sum()
    f1 = 2 * precision * recall / (precision + recall)
    scores = torch.stack((precision, recall, f1))
    if candidate.n_tokens == 2 or reference.n_tokens == 2:  # bert-score's "empty sentence" rule
        scores[:2] = 0.0
    if torch.isnan(scores[2]):  # only F: a NaN precision or recall stays NaN there too
        scores[2] = 0.0
    return scores


def load_baseline(model_type: str, num_layers: int, lang: str = "en") -> torch.Tensor:
    """bert-score's rescaling baseline (P, R, F) for this model and layer, read as `BERTScorer.baseline_vals`."""
    import bert_score
    import pandas as pd

    path = Path(bert_score.__file__).parent / "rescale_baseline" / lang / f"{model_type}.tsv"
    if not path.is_file():
        raise ValueError(f"Baseline not Found for {model_type} on {lang} at {path}")
    return torch.from_numpy(pd.read_csv(path).iloc[num_layers].to_numpy().copy())[1:].float()


def rescale(scores: torch.Tensor, baseline: torch.Tensor) -> torch.Tensor:
    """Baseline rescaling of (..., 3) raw scores, as `BERTScorer.score(rescale_with_baseline=True)`."""
    return (scores - baseline) / (1 - baseline)

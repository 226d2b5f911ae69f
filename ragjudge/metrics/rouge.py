"""ROUGE-L through Google's rouge-score package, exactly as MTRAG's `RougeL_stemFalse`."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # rouge-score imports NLTK (about a second): when the first score is computed, not at start-up
    from rouge_score import rouge_scorer


@cache
def _scorer(use_stemmer: bool) -> rouge_scorer.RougeScorer:
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=use_stemmer)


def rouge_l_f(prediction: str, reference: str, *, use_stemmer: bool = False) -> float:
    """ROUGE-L F-measure of `prediction` against `reference` (rouge-score's argument order: target first)."""
    return float(_scorer(use_stemmer).score(reference, prediction)["rougeL"].fmeasure)

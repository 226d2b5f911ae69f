"""MTRAG's algorithmic reference-based score: a harmonic mean of three normalised components."""

from __future__ import annotations

from statistics import harmonic_mean


def normalise_bertscore(value: float) -> float:
    """Map a cosine-based BERTScore from [-1, 1] onto [0, 1], as MTRAG does before combining."""
    return (value + 1.0) / 2.0


def rb_agg(bertscore_recall: float, rouge_l: float, bert_k_precision: float) -> float:
    """Harmonic mean of (BERTScore-R + 1)/2, ROUGE-L F and (BERT-K-Precision + 1)/2; any zero gives zero."""
    parts = [normalise_bertscore(bertscore_recall), rouge_l, normalise_bertscore(bert_k_precision)]
    if any(p <= 0 for p in parts):
        return 0.0
    return float(harmonic_mean(parts))

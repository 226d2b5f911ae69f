"""CXMArena's metrics: the protocol's own glue (tool-call matching, quality questions, KB pairs, the official article
ranking) over `ragjudge.metrics.classification` and `.ranking`. Nothing to average over is None, never 0.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragjudge.metrics import ranking
from ragjudge.metrics.classification import accuracy, f1_of, macro_f1, per_label, prf, ratio

__all__ = ["accuracy", "f1_of", "macro_f1", "per_label", "ratio"]  # the classification metrics CXM reports with


# -- intent prediction ----------------------------------------------------------------------------------

UNPARSABLE = "<unparsable>"
"""The predicted label of an answer that could not be read: wrong for every gold intent."""


def confusion(gold: Sequence[str], pred: Sequence[str]) -> dict[str, Counter[str]]:
    """gold label → Counter of predicted labels."""
    table: dict[str, Counter[str]] = {}
    for g, p in zip(gold, pred):
        table.setdefault(g, Counter())[p] += 1
    return table


def level1(label: str | None) -> str | None:
    """The first level of a two-level `L1:L2` label."""
    return None if label is None else label.split(":", 1)[0]


# -- agent quality adherence ----------------------------------------------------------------------------

@dataclass(frozen=True)
class QuestionOutcome:
    case_id: str
    gold: bool | None
    """True / False / None (not applicable)."""
    pred: bool | None | str
    """True / False / None, or UNPARSABLE when the model gave no readable answer for this question."""
    gold_evidence: tuple[str, ...] | None = None
    pred_evidence: tuple[str, ...] = ()

    @property
    def correct(self) -> bool:
        return self.pred != UNPARSABLE and self.pred == self.gold


def question_accuracy(outcomes: Sequence[QuestionOutcome]) -> float | None:
    return ratio(sum(o.correct for o in outcomes), len(outcomes))


def binary_prf(outcomes: Sequence[QuestionOutcome], positive: bool = True) -> dict[str, float | None]:
    """Precision/recall/F1 of the `positive` answer (True = the agent did it); NA and unreadable are negatives."""
    return prf(sum(o.gold is positive and o.pred is positive for o in outcomes),
               sum(o.pred is positive for o in outcomes), sum(o.gold is positive for o in outcomes))


def case_accuracy(outcomes: Sequence[QuestionOutcome]) -> float | None:
    """Share of conversations whose every question is answered right."""
    by_case: dict[str, bool] = {}
    for o in outcomes:
        by_case[o.case_id] = by_case.get(o.case_id, True) and o.correct
    return ratio(sum(by_case.values()), len(by_case))


def evidence_prf(outcomes: Sequence[QuestionOutcome]) -> dict[str, float | int | None]:
    """Micro precision/recall of cited message ids against gold ids, over questions whose gold cites any."""
    scored = [o for o in outcomes if o.gold_evidence]
    hit = sum(len(set(o.pred_evidence) & set(o.gold_evidence or ())) for o in scored)
    n_pred = sum(len(set(o.pred_evidence)) for o in scored)
    n_gold = sum(len(set(o.gold_evidence or ())) for o in scored)
    return {**prf(hit, n_pred, n_gold), "questions": len(scored)}


# -- tool calls -----------------------------------------------------------------------------------------

def tool_selection_correct(gold_names: Iterable[str], pred_names: Iterable[str]) -> bool:
    """Exact match of the sorted sets of tool names (order and repeats do not matter)."""
    return sorted(set(gold_names)) == sorted(set(pred_names))


def _norm_value(value: Any) -> Any:
    """Argument values compare case- and space-insensitively for text, numerically for numbers."""
    if isinstance(value, str):
        return " ".join(value.split()).casefold()
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, dict):
        return {k: _norm_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_norm_value(v) for v in value]
    return value


def arguments_match(gold_calls: Sequence[tuple[str, dict[str, Any] | None]],
                    pred_calls: Sequence[tuple[str, dict[str, Any] | None]]) -> bool | None:
    """Every gold call with arguments is matched by a distinct predicted call of the same tool with equal
    arguments. None when the gold gives no arguments (nothing to compare)."""
    wanted = [(name, args) for name, args in gold_calls if args is not None]
    if not wanted:
        return None
    unused = list(pred_calls)
    for name, args in wanted:
        for i, (p_name, p_args) in enumerate(unused):
            if p_name == name and p_args is not None and _norm_value(args) == _norm_value(p_args):
                del unused[i]
                break
        else:
            return False
    return True


def argument_value_accuracy(gold_calls: Sequence[tuple[str, dict[str, Any] | None]],
                            pred_calls: Sequence[tuple[str, dict[str, Any] | None]]) -> tuple[int, int]:
    """(gold argument values reproduced, gold argument values): per key, by the best predicted call of that tool."""
    total = hit = 0
    for name, args in gold_calls:
        if not args:
            continue
        total += len(args)
        best = 0
        for p_name, p_args in pred_calls:
            if p_name != name or p_args is None:
                continue
            best = max(best, sum(k in p_args and _norm_value(v) == _norm_value(p_args[k]) for k, v in args.items()))
        hit += best
    return hit, total


def accuracy_by_size(rows: Iterable[tuple[int, bool]]) -> dict[int, dict[str, float | int | None]]:
    """(number of offered tools, correct) rows → accuracy and count per size, sizes ascending."""
    groups: dict[int, list[bool]] = {}
    for size, correct in rows:
        groups.setdefault(size, []).append(correct)
    return {size: {"accuracy": ratio(sum(v), len(v)), "n": len(v)} for size, v in sorted(groups.items())}


# -- answer classification ------------------------------------------------------------------------------

def distribution(labels: Sequence[str], order: Sequence[str]) -> dict[str, dict[str, float | int | None]]:
    """Count and share per label, in `order`, then any label outside it."""
    counts = Counter(labels)
    keys = list(order) + sorted(k for k in counts if k not in order)
    return {k: {"count": counts.get(k, 0), "share": ratio(counts.get(k, 0), len(labels))} for k in keys}


# -- KB refinement --------------------------------------------------------------------------------------

def pair_prf(gold: set[frozenset[str]], pred: set[frozenset[str]]) -> dict[str, float | int | None]:
    """Precision/recall/F1 over unordered pairs: (a, b) and (b, a) are the same pair."""
    tp = len(gold & pred)
    return {**prf(tp, len(pred), len(gold)), "tp": tp, "predicted": len(pred), "gold": len(gold)}


def nearest_pairs(vectors: np.ndarray, k: int, *, block: int = 512,
                  on_progress: Callable[[int], None] | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each row's k nearest other rows by dot product (cosine for unit vectors), as unordered pairs.

    Returns (i, j, similarity) with i < j, each pair once (found from either side), by descending similarity.
    Memory is one block of `block` x n similarities at a time, so 2,000 articles never need the n x n matrix."""
    n = len(vectors)
    k = min(k, n - 1)
    if k < 1:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty, np.empty(0, dtype=np.float32)
    firsts, seconds, sims = [], [], []
    for start in range(0, n, block):
        rows = np.arange(start, min(start + block, n))
        scores = vectors[rows] @ vectors.T
        scores[np.arange(len(rows)), rows] = -np.inf  # never one's own neighbour
        part = np.argpartition(-scores, k - 1, axis=1)[:, :k]
        firsts.append(np.repeat(rows, k))
        seconds.append(part.ravel())
        sims.append(np.take_along_axis(scores, part, axis=1).ravel())
        if on_progress:
            on_progress(len(rows))
    a, b, sim = np.concatenate(firsts), np.concatenate(seconds), np.concatenate(sims).astype(np.float32)
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    order = np.lexsort((hi, lo, -sim))  # best first; ties by index, so the result is deterministic
    lo, hi, sim = lo[order], hi[order], sim[order]
    _, first = np.unique(lo * n + hi, return_index=True)
    keep = np.sort(first)
    return lo[keep], hi[keep], sim[keep]


def official_knn_pairs(vectors: np.ndarray, k: int, threshold: float, *, block: int = 512) -> set[tuple[int, int]]:
    """CXMArena's predictor, as written: each article's top k by inner product *itself included* (so k - 1
    others), and a pair (i, j) kept only when found from the lower index i, so a neighbour relation seen only
    from j is lost."""
    n = len(vectors)
    k = min(k, n)
    out: set[tuple[int, int]] = set()
    for start in range(0, n, block):
        rows = np.arange(start, min(start + block, n))
        scores = vectors[rows] @ vectors.T
        part = np.argpartition(-scores, k - 1, axis=1)[:, :k] if k < n else np.tile(np.arange(n), (len(rows), 1))
        for i, cand, row in zip(rows.tolist(), part, scores, strict=True):
            out.update((i, int(j)) for j in cand if i < j and row[j] >= threshold)
    return out


def sweep_sorted(similarity: np.ndarray, is_gold: np.ndarray, n_gold: int,
                 thresholds: Sequence[float]) -> list[dict[str, float | int | None]]:
    """P/R/F1 of "every candidate pair with similarity ≥ t" for each t, from candidates sorted by descending
    similarity and whether each is a gold pair: one cumulative sum, not one set of pairs per threshold."""
    hits = np.concatenate([[0], np.cumsum(is_gold.astype(np.int64))])
    ascending = similarity[::-1]
    rows = []
    for t in thresholds:
        predicted = len(similarity) - int(np.searchsorted(ascending, t, side="left"))
        tp = int(hits[predicted])
        precision, recall = ratio(tp, predicted), ratio(tp, n_gold)
        rows.append({"threshold": float(t), "predicted": predicted, "tp": tp, "precision": precision,
                     "recall": recall, "f1": f1_of(precision, recall)})
    return rows


def best_row(rows: Sequence[dict[str, Any]], key: str = "f1") -> dict[str, Any] | None:
    """The row with the highest `key` (first on ties); None if no row has it."""
    scored = [r for r in rows if r.get(key) is not None]
    return max(scored, key=lambda r: r[key]) if scored else None


# -- article search -------------------------------------------------------------------------------------

def dedupe(ranking: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(ranking))


def precision_at_k(ranking_: Sequence[str], relevant: Iterable[str], k: int) -> float:
    """Over the deduplicated ranking (an article cited by two chunks counts once), over k."""
    return ranking.precision_at(dedupe(ranking_), relevant, k)


def recall_at_k(ranking_: Sequence[str], relevant: Iterable[str], k: int) -> float:
    return ranking.recall_at(dedupe(ranking_), relevant, k)


def reciprocal_rank(ranking_: Sequence[str], relevant: Iterable[str]) -> float:
    return ranking.reciprocal_rank(dedupe(ranking_), relevant)


def hit_at_k(ranking_: Sequence[str], relevant: Iterable[str], k: int) -> float:
    """1 when any relevant article is in the top k: what the CXMArena paper calls retrieval "precision"."""
    return ranking.hit_at(dedupe(ranking_), relevant, k)


def official_ranking(chunk_articles: Sequence[str], k: int) -> list[str]:
    """CXMArena's predictor: the articles of the top-k passages, repeats removed (so possibly fewer than k)."""
    return dedupe(chunk_articles[:k])


def search_scores(rows: Sequence[tuple[Sequence[str], Sequence[str]]], ks: Sequence[int]) -> dict[str, float | None]:
    """(ranking, relevant ids) per query → mean P@k, R@k, hit@k for each k, and MRR."""
    out: dict[str, float | None] = {}
    n = len(rows)
    for k in ks:
        out[f"P@{k}"] = ratio(sum(precision_at_k(r, g, k) for r, g in rows), n)
        out[f"R@{k}"] = ratio(sum(recall_at_k(r, g, k) for r, g in rows), n)
        out[f"hit@{k}"] = ratio(sum(hit_at_k(r, g, k) for r, g in rows), n)
    out["MRR"] = ratio(sum(reciprocal_rank(r, g) for r, g in rows), n)
    return out

"""KB refinement scores over unordered article pairs, and the analysis of the embedding baseline.

The baseline is the paper's method (Table 2; CXMArena's predictor): embed each article, take each article's
k nearest neighbours, predict the pairs whose cosine similarity reaches a fixed threshold. How the threshold
matters is an *analysis*, never the baseline's result: a sweep over thresholds, the threshold picked on one
half of the articles and scored on the other (held out), and the best threshold on all gold pairs, labelled
as the oracle upper bound it is. Everything works on the k-nearest-neighbour candidate pairs, sorted once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragjudge.bench.cxm import metrics as M
from ragjudge.bench.cxm.loaders import read_pair
from ragjudge.bench.cxm.models import PAIR_KINDS, Article
from ragjudge.bench.cxm.paper import KB_K, KB_THRESHOLD
from ragjudge.bench.cxm.report import TaskReport, table
from ragjudge.bench.cxm.score.common import Rows, bad

DEFAULT_THRESHOLDS = tuple(round(float(t), 2) for t in np.arange(0.3, 0.96, 0.05))
PAPER_THRESHOLD, PAPER_K = KB_THRESHOLD, KB_K

HELD_OUT_THRESHOLD = "held-out threshold (picked on the dev half)"
HELD_OUT = "held-out similar {} (test half)"
ORACLE_THRESHOLD = "oracle threshold (picked on all gold pairs: upper bound)"
ORACLE_F1 = "oracle similar F1 (upper bound, not a result)"


def baseline_name(model: str) -> str:
    """How the embedding baseline's figures are named, so that none is read as the system's: `baseline:minilm`,
    `baseline:openai-text-embedding-3-large` (the model, `/` as `-`)."""
    return f"baseline:{model.replace('/', '-')}"


def baseline_metric(baseline: str, what: str) -> str:
    """`baseline:minilm held-out similar F1 (test half)`: one of the analysis' figures, named as the baseline's."""
    return f"{baseline} {what}"


def read_predicted_pairs(rows: Rows, path: Path | None = None) -> dict[str, set[frozenset[str]]]:
    out: dict[str, set[frozenset[str]]] = {}
    for line, row in rows:
        kind = str(row.get("kind", "")).strip().lower()
        kind = {"similarity": "similar", "contradiction": "contradictory"}.get(kind, kind)
        if kind not in PAIR_KINDS:
            raise bad(path, line, "kind", f"kind must be one of {', '.join(PAIR_KINDS)}")
        value = row.get("pair") if row.get("pair") is not None else [row.get("a"), row.get("b")]
        out.setdefault(kind, set()).add(read_pair(value, path=path or Path("-"), line=line, name="pair"))
    return out


@dataclass
class Candidates:
    """The k-nearest-neighbour pairs of a KB (indices into `ids`), by descending similarity."""

    ids: list[str]
    first: np.ndarray
    second: np.ndarray
    similarity: np.ndarray

    def pairs(self, threshold: float, keep: np.ndarray | None = None) -> set[frozenset[str]]:
        mask = self.similarity >= threshold
        if keep is not None:
            mask &= keep
        return {frozenset((self.ids[a], self.ids[b])) for a, b in zip(self.first[mask].tolist(),
                                                                         self.second[mask].tolist())}

    def gold_flags(self, gold: set[frozenset[str]]) -> np.ndarray:
        return np.fromiter((frozenset((self.ids[a], self.ids[b])) in gold
                            for a, b in zip(self.first.tolist(), self.second.tolist())), dtype=bool,
                           count=len(self.first))


def baseline_analysis(candidates: Candidates, gold: set[frozenset[str]], thresholds: Sequence[float],
                      seed: int = 0) -> dict[str, Any]:
    """The sweep on all pairs, the oracle pick, and a threshold picked on a random half of the articles (dev)
    and scored on the other half (test); pairs across the halves are left out of both."""
    flags = candidates.gold_flags(gold)
    sweep = M.sweep_sorted(candidates.similarity, flags, len(gold), thresholds)
    index = {a: i for i, a in enumerate(candidates.ids)}
    half = np.random.default_rng(seed).permutation(len(candidates.ids)) < (len(candidates.ids) + 1) // 2
    out: dict[str, Any] = {"sweep": sweep, "oracle": M.best_row(sweep)}
    for name, side in (("dev", half), ("test", ~half)):
        keep = side[candidates.first] & side[candidates.second]
        n_gold = sum(1 for p in gold if all(a in index and side[index[a]] for a in p))
        out[name] = {"gold": n_gold,
                     "sweep": M.sweep_sorted(candidates.similarity[keep], flags[keep], n_gold, thresholds)}
    picked = M.best_row(out["dev"]["sweep"]) if out["dev"]["gold"] else None
    out["held_out"] = None if picked is None else {
        "threshold": picked["threshold"], "dev_f1": picked["f1"],
        **next(r for r in out["test"]["sweep"] if r["threshold"] == picked["threshold"]),
        "test_gold": out["test"]["gold"]}
    return out


def _analysis_tables(analysis: dict[str, Any], label: str, baseline: str, metrics: dict[str, Any],
                     notes: list[str]) -> list[Any]:
    oracle, held = analysis["oracle"], analysis["held_out"]
    named = {what: baseline_metric(baseline, what) for what in (HELD_OUT_THRESHOLD, ORACLE_THRESHOLD, ORACLE_F1,
                                                                  *(HELD_OUT.format(x) for x in ("precision", "recall",
                                                                                                 "F1")))}
    if held is not None:
        metrics.update({named[HELD_OUT_THRESHOLD]: held["threshold"],
                        named[HELD_OUT.format("precision")]: held["precision"],
                        named[HELD_OUT.format("recall")]: held["recall"], named[HELD_OUT.format("F1")]: held["f1"]})
    else:
        notes.append(f"{baseline}: no gold similar pair falls within the dev half of the articles: no held-out "
                     f"threshold")
    if oracle is not None:
        metrics.update({named[ORACLE_THRESHOLD]: oracle["threshold"], named[ORACLE_F1]: oracle["f1"]})
    return [table(f"{baseline} ({label}): similar pairs by threshold (an analysis of the embedding baseline, not a "
                  f"result)",
                  ["threshold", "predicted", "right", "precision", "recall", "F1"],
                  [[r["threshold"], r["predicted"], r["tp"], r["precision"], r["recall"], r["f1"]]
                   for r in analysis["sweep"]],
                  ["the oracle row (best F1) is picked on the gold pairs themselves: an upper bound for the method"])]


def score_pairs(gold: dict[str, set[frozenset[str]]], rows: Rows | None, path: Path | None = None,
                articles: dict[str, Article] | None = None, analysis: dict[str, Any] | None = None,
                label: str = "embedding baseline", kinds: Sequence[str] = PAIR_KINDS,
                baseline: str = "baseline:minilm") -> TaskReport:
    """P/R/F1 per kind over unordered pairs (`kinds`: the kinds the predictions cover), plus the analysis of the
    embedding baseline, its figures named `baseline` (`baseline_name`) so none is read as the system's."""
    metrics: dict[str, Any] = {}
    tables = []
    notes: list[str] = []
    if rows is not None:
        pred = read_predicted_pairs(rows, path)
        pair_rows = []
        for kind in kinds:
            if kind not in gold and kind not in pred:
                continue
            s = M.pair_prf(gold.get(kind, set()), pred.get(kind, set()))
            metrics.update({f"{kind} precision": s["precision"], f"{kind} recall": s["recall"], f"{kind} F1": s["f1"]})
            pair_rows.append([kind, s["gold"], s["predicted"], s["tp"], s["precision"], s["recall"], s["f1"]])
        tables.append(table("Predicted pairs (unordered)", ["kind", "gold", "predicted", "right", "precision",
                                                            "recall", "F1"], pair_rows))
        if articles is not None:
            unknown = sorted({a for pairs in pred.values() for p in pairs for a in p} - set(articles))
            if unknown:
                notes.append(f"{len(unknown)} predicted article id(s) are not in the KB, e.g. {unknown[0]}")
    if analysis is not None:
        tables += _analysis_tables(analysis, label, baseline, metrics, notes)
    if articles is not None:
        unknown_gold = sorted({a for pairs in gold.values() for p in pairs for a in p} - set(articles))
        if unknown_gold:
            notes.append(f"{len(unknown_gold)} gold article id(s) are not in the KB, e.g. {unknown_gold[0]}")
    lead = [(f"{kind} F1", "") for kind in kinds]
    return TaskReport(task="KB refinement", metrics=metrics, tables=tables, notes=notes, headline=lead)

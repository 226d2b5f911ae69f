"""KB refinement scores over unordered article pairs."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragjudge.bench.cxm import metrics as M
from ragjudge.bench.cxm.loaders import read_pair
from ragjudge.bench.cxm.models import PAIR_KINDS, Article
from ragjudge.bench.cxm.report import Table, TaskReport
from ragjudge.bench.cxm.score.common import Rows, bad, ids, known_id


DEFAULT_THRESHOLDS = tuple(round(float(t), 2) for t in np.arange(0.3, 0.96, 0.05))


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


def embedding_baseline(articles: dict[str, Article], gold: dict[str, set[frozenset[str]]],
                       model: str | None = None, thresholds: Sequence[float] = DEFAULT_THRESHOLDS,
                       similarity: np.ndarray | None = None) -> dict[str, Any]:
    """Cosine similarity of article embeddings, every pair above a threshold predicted; swept per kind."""
    ids = list(articles)
    if similarity is None:
        from ragjudge.bench.cxm.retrieve import cosine_matrix, embed

        similarity = cosine_matrix(embed([articles[i].full_text for i in ids], model))
    sweeps = {kind: M.threshold_sweep(ids, similarity, pairs, thresholds) for kind, pairs in gold.items()}
    return {"ids": ids, "similarity": similarity, "sweeps": sweeps,
            "best": {kind: M.best_row(rows) for kind, rows in sweeps.items()}}


def score_pairs(gold: dict[str, set[frozenset[str]]], rows: Rows | None, path: Path | None = None,
                articles: dict[str, Article] | None = None, baseline: dict[str, Any] | None = None,
                baseline_label: str = "embedding") -> TaskReport:
    metrics: dict[str, Any] = {}
    tables = []
    notes = []
    if rows is not None:
        pred = read_predicted_pairs(rows, path)
        pair_rows = []
        for kind in PAIR_KINDS:
            if kind not in gold and kind not in pred:
                continue
            s = M.pair_prf(gold.get(kind, set()), pred.get(kind, set()))
            metrics.update({f"{kind} precision": s["precision"], f"{kind} recall": s["recall"], f"{kind} F1": s["f1"]})
            pair_rows.append([kind, s["gold"], s["predicted"], s["tp"], s["precision"], s["recall"], s["f1"]])
        tables.append(Table("Predicted pairs (unordered)", ["kind", "gold", "predicted", "right", "precision",
                                                            "recall", "F1"], pair_rows))
        if articles is not None:
            unknown = sorted({a for pairs in pred.values() for p in pairs for a in p} - set(articles))
            if unknown:
                notes.append(f"{len(unknown)} predicted article id(s) are not in the KB, e.g. {unknown[0]}")
    if baseline is not None:
        for kind, sweep in baseline["sweeps"].items():
            best = baseline["best"][kind]
            metrics[f"baseline best {kind} F1"] = best["f1"] if best else None
            metrics[f"baseline best {kind} threshold"] = best["threshold"] if best else None
            tables.append(Table(f"{baseline_label} baseline, {kind} pairs (threshold sweep)",
                                ["threshold", "predicted", "right", "precision", "recall", "F1"],
                                [[r["threshold"], r["predicted"], r["tp"], r["precision"], r["recall"], r["f1"]]
                                 for r in sweep]))
        notes.append("baseline thresholds are picked on the gold pairs themselves (an upper bound for the method)")
    if articles is not None:
        unknown_gold = sorted({a for pairs in gold.values() for p in pairs for a in p} - set(articles))
        if unknown_gold:
            notes.append(f"{len(unknown_gold)} gold article id(s) are not in the KB, e.g. {unknown_gold[0]}")
    return TaskReport(task="KB refinement", metrics=metrics, tables=tables, notes=notes)

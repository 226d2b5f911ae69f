"""KB refinement scores over unordered article pairs (P/R/F1 per kind), and the embedding baseline's analysis
(`scorers.baseline_analysis`), named as the baseline's so none is read as the system's."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragjudge.bench.cxm import metrics as M
from ragjudge.bench.cxm.kb_refinement.data import predicted_pair
from ragjudge.bench.cxm.kb_refinement.scorers import DEFAULT_THRESHOLDS, PAPER_K, PAPER_THRESHOLD, baseline_analysis
from ragjudge.bench.cxm.models import PAIR_KINDS, Article
from ragjudge.bench.cxm.rows import Rows
from ragjudge.bench.cxm.summary import TaskReport, table

if TYPE_CHECKING:
    from ragjudge.bench.cxm.kb_refinement.solver import Baseline, Embedded

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
        pred: dict[str, set[frozenset[str]]] = {}
        for line, row in rows:
            kind, pair = predicted_pair(row, path, line)
            pred.setdefault(kind, set()).add(pair)
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


def kb_report(gold: dict[str, set[frozenset[str]]], rows: Rows, path: Path | None,
              articles: dict[str, Article] | None, kb: Embedded | None, o: Baseline, seed: int, model: str,
              judge_failures: Sequence[dict[str, Any]]) -> TaskReport:
    """The task's report: the pairs scored (`score_pairs`), the baseline's analysis when the KB was embedded (its
    held-out half drawn with `seed`), and what the run should say about its method, its contradiction judge and its
    encoder. `path`: the predictions file (None: the baseline's own run)."""
    label = "MiniLM embeddings" if model == "minilm" else f"{model} embeddings"
    analysis = None
    if kb is not None and gold.get("similar"):
        analysis = baseline_analysis(kb.candidates(o.k), gold["similar"], DEFAULT_THRESHOLDS, seed)
    judged = path is not None or o.judge is not None
    kinds = ("similar", "contradictory") if judged else ("similar",)
    baseline = baseline_name(model)
    report = score_pairs(gold, rows, path, articles, analysis, f"{label}, k={o.k}", kinds, baseline)
    if path is None:
        report.task = f"KB refinement ({label}, k={o.k}, threshold {o.threshold})"
        method = "the paper's method" if (o.threshold, o.k) == (PAPER_THRESHOLD, PAPER_K) else \
            f"the paper's method with other settings: CXMArena's predictor uses threshold {PAPER_THRESHOLD} and " \
            f"{PAPER_K} neighbours"
        report.notes.insert(0, f"{baseline}: each article's {o.k} nearest neighbours by {label}, pairs with cosine "
                            f"similarity >= {o.threshold} predicted similar ({method})")
        if kb is not None:
            official = M.official_knn_pairs(kb.vectors, o.k + 1, o.threshold)
            mine = kb.candidates(o.k).pairs(o.threshold)
            if len(official) != len(mine):
                report.notes.append(f"CXMArena's predictor would predict {len(official)} of these {len(mine)} pairs: "
                                    f"it keeps a pair only when the lower-numbered article finds the other")
        if o.judge is None:
            report.notes.append("contradictory pairs are not predicted: embeddings cannot tell a contradiction; "
                                "give --judge-models MODEL to have an LLM judge the nearest-neighbour pairs")
        if judge_failures:
            first = judge_failures[0]
            report.notes.append(f"{len(judge_failures)} pair(s) the contradiction judge could not answer, e.g. "
                                f"{first['pair']}: {str(first.get('error'))[:200]}")
            report.metrics["contradiction judge errors"] = len(judge_failures)
            report.problems += len(judge_failures)
    elif analysis is not None:
        report.notes.insert(0, f"the figures named {baseline} are the embedding baseline's ({label}, k={o.k}), "
                            f"not those of the predictions scored")
    if kb is not None:
        report.notes.append(f"article embeddings: {kb.from_store} read from the embedding store, {kb.encoded} encoded")
        for t in kb.truncated:
            if t["truncated"]:
                report.notes.append(f"{t['encoder']} reads at most {t['max_tokens']} tokens: {t['truncated']} of "
                                    f"{t['passages']} articles are cut (longest {t['longest']} tokens)")
            report.metrics["articles truncated by the encoder"] = t["truncated"]
    return report

"""Intent prediction scores: exact match, LLM-verified, macro-F1, per intent, confusions.

With several taxonomies every figure is pooled over the (conversation, taxonomy) predictions (macro-F1 over all gold
intents, level-1 accuracy over the two-level ones), plus a breakdown by taxonomy (what the paper's Table 4 reports).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragjudge.bench.cxm import metrics as M
from ragjudge.bench.cxm.intent.scorers import outcome
from ragjudge.bench.cxm.models import IntentCase, Taxonomy
from ragjudge.bench.cxm.rows import Rows, bad, known_id
from ragjudge.bench.cxm.summary import TaskReport, table
from ragjudge.engine.summary import Breakdown, Group, stat
from ragjudge.errors import InputError

PAPER_ACCURACY = "accuracy (paper protocol: WRatio >= 70)"
EXACT = "accuracy (exact match)"
VERIFIED = "accuracy (LLM-verified)"
MAPPING_NOTE = ("accuracy (exact match) maps answers exactly, then ignoring case/spacing/separators, then to a "
                "label within difflib similarity 0.85; the paper protocol maps every answer to its closest label "
                "by thefuzz WRatio >= 70 (\"Billing\" → \"Billing dispute\"), else \"others\"")


def score_intent(cases: Sequence[IntentCase], taxonomies: dict[str, Taxonomy], rows: Rows,
                 path: Path | None = None, taxonomy: str | None = None, protocol: str = "ragjudge",
                 only: dict[str, Sequence[IntentCase]] | None = None) -> TaskReport:
    """The taxonomies that have predictions (or only `taxonomy`; with no prediction at all, every taxonomy with
    gold intents, all missing), or with `only` those taxonomies over those cases (a run). Both protocols are
    scored; `protocol` says which comes first."""
    ids = {c.case_id for c in cases} if only is None else {c.case_id for mine in only.values() for c in mine}
    by_tax: dict[str, dict[str, dict[str, Any]]] = {}
    for line, row in rows:
        case_id = known_id(row, "case_id", ids, path, line, "case")
        name = row.get("taxonomy")
        if name is None:
            if len(taxonomies) != 1:
                raise bad(path, line, "taxonomy", f"missing taxonomy (one of {', '.join(taxonomies)})")
            name = next(iter(taxonomies))
        name = str(name).lower()
        if name not in taxonomies:
            raise bad(path, line, "taxonomy", f"unknown taxonomy {name!r}")
        intent = row.get("intent")
        if intent is not None and not isinstance(intent, str):
            raise bad(path, line, "intent", "intent must be text or null")
        verified = row.get("verified_match")
        if verified is not None and not isinstance(verified, bool):
            raise bad(path, line, "verified_match", "verified_match must be true, false or null")
        if case_id in by_tax.setdefault(name, {}):
            raise bad(path, line, "case_id", f"second prediction for case {case_id!r} ({name})")
        by_tax[name][case_id] = row
    if only is not None:
        names = list(only)
    else:
        names = [taxonomy.lower()] if taxonomy else list(by_tax) or [t for t in taxonomies
                                                                     if any(t in c.gold for c in cases)]
    if not names:
        raise InputError("no conversation has a gold intent")
    parts = []
    for name in names:
        if name not in taxonomies:
            raise InputError(f"unknown taxonomy {name!r} (available: {', '.join(taxonomies)})")
        mine = only[name] if only is not None else cases
        parts.append(_part(mine, taxonomies[name], by_tax.get(name, {})))
    return _report(parts, protocol)


@dataclass
class _Part:
    """One taxonomy's scored predictions."""

    taxonomy: Taxonomy
    cases: int
    gold: list[str]
    pred: list[str]
    paper_pred: list[str]
    judged: list[bool]
    counts: dict[str, int]
    tables: list[Any] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _part(cases: Sequence[IntentCase], taxonomy: Taxonomy, preds: dict[str, dict[str, Any]]) -> _Part:
    labels = set(taxonomy.labels)
    gold_cases = [c for c in cases if taxonomy.name in c.gold]
    missing = [c.case_id for c in gold_cases if c.case_id not in preds]
    errors = [c.case_id for c in gold_cases if c.case_id in preds and preds[c.case_id].get("error")]
    scored = [c for c in gold_cases if c.case_id in preds and not preds[c.case_id].get("error")]
    outcomes = [outcome(c.gold[taxonomy.name], taxonomy, preds[c.case_id]) for c in scored]
    gold = [o.gold for o in outcomes]
    pred = [o.pred for o in outcomes]
    paper_pred = [o.paper_pred for o in outcomes]  # CXMArena's evaluator: the raw answer fuzzy-mapped
    judged = [o.verified for o in outcomes if o.verified is not None]
    counts = {"unparsable answers": sum(p == M.UNPARSABLE for p in pred),
              "out-of-taxonomy answers": sum(p != M.UNPARSABLE and p not in labels for p in pred),
              "verification errors": sum(1 for c in scored if preds[c.case_id].get("verify_error")),
              "errors": len(errors), "missing": len(missing)}
    per_label = M.per_label(gold, pred, sorted(set(gold)))
    conf = M.confusion(gold, pred)
    label_rows = []
    for label, s in sorted(per_label.items(), key=lambda kv: (-kv[1]["support"], kv[0])):
        wrong = [(p, n) for p, n in conf[label].most_common() if p != label]
        label_rows.append([label, s["support"], conf[label][label], s["precision"], s["recall"], s["f1"],
                           f"{wrong[0][0]} ({wrong[0][1]})" if wrong else ""])
    mistakes = sorted(((g, p, n) for g, row in conf.items() for p, n in row.items() if p != g),
                      key=lambda t: (-t[2], t[0], t[1]))
    notes = []
    outside = sorted({c.gold[taxonomy.name] for c in gold_cases} - labels)
    if outside:
        notes.append(f"{len(outside)} gold intent(s) are not in taxonomy {taxonomy.name}: {', '.join(outside[:5])}")
    if missing:
        notes.append(f"no prediction for {len(missing)} case(s), e.g. {missing[0]}")
    tables = [table("Per intent", ["intent", "support", "correct", "precision", "recall", "F1",
                                   "most often predicted instead"], label_rows),
              table("Confusions (gold → predicted)", ["gold", "predicted", "count"], [list(m) for m in mistakes[:15]])]
    return _Part(taxonomy, len(gold_cases), gold, pred, paper_pred, judged, counts, tables, notes)


def _figures(parts: Sequence[_Part], protocol: str) -> tuple[dict[str, Any], dict[str, int], dict[str, int]]:
    """(metrics, n per metric, failed items per metric) over the predictions of `parts`, pooled."""
    several = len(parts) > 1

    def labelled(part: _Part, values: list[str]) -> list[str]:  # intents of different taxonomies never match
        return [f"{part.taxonomy.name}\x00{v}" for v in values] if several else values

    gold = [g for p in parts for g in labelled(p, p.gold)]
    pred = [x for p in parts for x in labelled(p, p.pred)]
    paper = M.accuracy(gold, [x for p in parts for x in labelled(p, p.paper_pred)])
    judged = [v for p in parts for v in p.judged]
    counts = {k: sum(p.counts[k] for p in parts) for k in parts[0].counts} if parts else {}
    scored = len(gold)
    ours = M.accuracy(gold, pred)
    first = {PAPER_ACCURACY: paper, EXACT: ours} if protocol == "paper" else {EXACT: ours, PAPER_ACCURACY: paper}
    metrics: dict[str, Any] = {
        "cases": sum(p.cases for p in parts), "scored": scored, **first,
        VERIFIED: M.ratio(sum(judged), len(judged)) if judged else None,
        "LLM-verified cases": len(judged),
        "macro-F1": M.macro_f1(gold, pred),
    }
    ns = {EXACT: scored, PAPER_ACCURACY: scored, VERIFIED: len(judged), "macro-F1": scored}
    two = [p for p in parts if p.taxonomy.two_level]
    if two:
        metrics["level-1 accuracy"] = M.accuracy([M.level1(g) for p in two for g in p.gold],
                                                 [M.level1(x) for p in two for x in p.pred])
        ns["level-1 accuracy"] = sum(len(p.gold) for p in two)
    metrics.update(counts)
    failed = counts.get("errors", 0)
    errors = {EXACT: failed, PAPER_ACCURACY: failed, "macro-F1": failed, "level-1 accuracy": failed,
              VERIFIED: counts.get("verification errors", 0)}
    return metrics, ns, errors


def _report(parts: list[_Part], protocol: str) -> TaskReport:
    metrics, ns, errors = _figures(parts, protocol)
    leading = PAPER_ACCURACY if protocol == "paper" else EXACT
    taxonomies = {p.taxonomy.name: {"intents": len(p.taxonomy.entries), "two_level": p.taxonomy.two_level}
                  for p in parts}
    described = "; ".join(f"{p.taxonomy.name}, {len(p.taxonomy.entries)} intents" for p in parts)
    report = TaskReport(task=f"intent prediction ({described})", metrics=metrics, ns=ns, errors=errors,
                        problems=metrics["errors"] + metrics["missing"] + metrics["verification errors"],
                        details={"taxonomies": taxonomies})
    if len(parts) == 1:
        report.tables, report.notes = parts[0].tables, [*parts[0].notes, MAPPING_NOTE]
        report.headline = [(leading, "conversations"), (VERIFIED, "conversations")]
        return report
    groups = {}
    for part in parts:
        mine, mine_ns, _ = _figures([part], protocol)
        groups[part.taxonomy.name] = Group(n=part.cases, metrics={
            name: stat(value, n=mine_ns.get(name)) for name, value in mine.items()})
        report.tables += [t.model_copy(update={"title": f"{part.taxonomy.name}: {t.title}"}) for t in part.tables]
        report.notes += [f"{part.taxonomy.name}: {n}" for n in part.notes]
    report.notes.append(MAPPING_NOTE)
    shown = [m for m in (leading, PAPER_ACCURACY if leading == EXACT else EXACT, VERIFIED, "macro-F1",
                         "level-1 accuracy") if m in metrics]
    report.breakdowns["taxonomy"] = Breakdown(
        title="By taxonomy (the paper's Table 4 reports each)", label="taxonomy", groups=groups, columns=shown,
        note="the main table pools every (conversation, taxonomy) prediction; summary.json has every figure of "
             "each taxonomy")
    report.headline = [(leading, "predictions, all taxonomies"), (VERIFIED, "predictions, all taxonomies")]
    return report

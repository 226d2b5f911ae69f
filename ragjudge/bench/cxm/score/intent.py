"""Intent prediction scores: exact match, LLM-verified, macro-F1, per intent, confusions."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragjudge.bench.cxm import metrics as M
from ragjudge.bench.cxm.models import IntentCase, Taxonomy
from ragjudge.bench.cxm.paper import TABLE4_INTENT
from ragjudge.bench.cxm.report import Table, TaskReport
from ragjudge.bench.cxm.score.common import Rows, bad, known_id
from ragjudge.errors import InputError


def score_intent(cases: Sequence[IntentCase], taxonomies: dict[str, Taxonomy], rows: Rows,
                 path: Path | None = None, taxonomy: str | None = None, protocol: str = "ragjudge"
                 ) -> list[TaskReport]:
    """One report per taxonomy that has predictions (or only `taxonomy`; with no prediction at all, every
    taxonomy with gold intents, all missing). Both protocols are scored; `protocol` says which comes first."""
    ids = {c.case_id for c in cases}
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
    names = [taxonomy.lower()] if taxonomy else list(by_tax) or [t for t in taxonomies
                                                                 if any(t in c.gold for c in cases)]
    reports = []
    for name in names:
        if name not in taxonomies:
            raise InputError(f"unknown taxonomy {name!r} (available: {', '.join(taxonomies)})")
        reports.append(_score_taxonomy(cases, taxonomies[name], by_tax.get(name, {}), protocol))
    return reports


PAPER_ACCURACY = "accuracy (paper protocol: WRatio >= 70)"


def _paper_accuracy(gold: list[str], rows: list[dict[str, Any]], labels: list[str]) -> float | None:
    """CXMArena's predictor and evaluator: the raw answer fuzzy-mapped (thefuzz WRatio >= 70, else "others"),
    then exact match."""
    from ragjudge.bench.cxm.runners import map_intent_paper

    raw = [r.get("raw_intent") if r.get("raw_intent") is not None else r.get("intent") for r in rows]
    return M.accuracy(gold, [map_intent_paper(x, labels) for x in raw])


def _score_taxonomy(cases: Sequence[IntentCase], taxonomy: Taxonomy, preds: dict[str, dict[str, Any]],
                    protocol: str = "ragjudge") -> TaskReport:
    labels = set(taxonomy.labels)
    gold_cases = [c for c in cases if taxonomy.name in c.gold]
    missing = [c.case_id for c in gold_cases if c.case_id not in preds]
    errors = [c.case_id for c in gold_cases if c.case_id in preds and preds[c.case_id].get("error")]
    scored = [c for c in gold_cases if c.case_id in preds and not preds[c.case_id].get("error")]
    gold = [c.gold[taxonomy.name] for c in scored]
    pred = [preds[c.case_id].get("intent") or M.UNPARSABLE for c in scored]
    verified = [(c, preds[c.case_id].get("verified_match")) for c in scored]
    judged = [v for _, v in verified if v is not None]
    paper = _paper_accuracy(gold, [preds[c.case_id] for c in scored], taxonomy.labels)
    ours = M.accuracy(gold, pred)
    first = {PAPER_ACCURACY: paper, "accuracy (exact match)": ours} if protocol == "paper" else \
        {"accuracy (exact match)": ours, PAPER_ACCURACY: paper}
    metrics: dict[str, Any] = {
        "cases": len(gold_cases), "scored": len(scored), **first,
        "accuracy (LLM-verified)": M.ratio(sum(judged), len(judged)) if judged else None,
        "LLM-verified cases": len(judged),
        "macro-F1": M.macro_f1(gold, pred),
    }
    if taxonomy.two_level:
        metrics["level-1 accuracy"] = M.accuracy([M.level1(g) for g in gold], [M.level1(p) for p in pred])
    metrics.update({
        "unparsable answers": sum(p == M.UNPARSABLE for p in pred),
        "out-of-taxonomy answers": sum(p != M.UNPARSABLE and p not in labels for p in pred),
        "verification errors": sum(1 for c in scored if preds[c.case_id].get("verify_error")),
        "errors": len(errors), "missing": len(missing),
    })
    per_label = M.per_label_prf(gold, pred, sorted(set(gold)))
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
    notes.append("accuracy (exact match) maps answers exactly, then ignoring case/spacing/separators, then to a "
                 "label within difflib similarity 0.85; the paper protocol maps every answer to its closest label "
                 "by thefuzz WRatio >= 70 (\"Billing\" → \"Billing dispute\"), else \"others\"")
    return TaskReport(
        task=f"intent prediction ({taxonomy.name}, {len(taxonomy.entries)} intents)", metrics=metrics,
        tables=[Table("Per intent", ["intent", "support", "correct", "precision", "recall", "F1",
                                     "most often predicted instead"], label_rows),
                Table("Confusions (gold → predicted)", ["gold", "predicted", "count"],
                      [list(m) for m in mistakes[:15]])],
        notes=notes, problems=len(errors) + len(missing) + metrics["verification errors"],
        reference=[TABLE4_INTENT])

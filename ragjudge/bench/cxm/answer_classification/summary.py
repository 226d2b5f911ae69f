"""Multi-turn answer classification scores: the class distribution and agreement with gold labels.

A row's retrieved articles are `ranking` (article ids, best first), as in every CXMArena predictions file; the
older key `retrieved_ids` is still read, with a deprecation warning."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragjudge.bench.cxm import metrics as M
from ragjudge.bench.cxm.answer_classification.scorers import gold_recall
from ragjudge.bench.cxm.models import ANSWER_LABELS, RagCase, normalize_class
from ragjudge.bench.cxm.rows import Rows, bad, ids, known_id
from ragjudge.bench.cxm.summary import TaskReport, table


def score_classification(cases: Sequence[RagCase], rows: Rows, path: Path | None = None) -> TaskReport:
    by_id = {c.case_id: c for c in cases}
    labels: dict[str, str] = {}
    retrieved: dict[str, list[str]] = {}
    errors = 0
    seen: set[str] = set()
    old_key: list[int] = []
    for line, row in rows:
        case_id = known_id(row, "case_id", set(by_id), path, line, "case")
        if case_id in seen:
            raise bad(path, line, "case_id", f"second prediction for case {case_id!r}")
        seen.add(case_id)
        key = "ranking" if row.get("ranking") is not None or row.get("retrieved_ids") is None else "retrieved_ids"
        if row.get(key) is not None:
            retrieved[case_id] = ids(row, key, path, line)
            if key == "retrieved_ids":
                old_key.append(line)
        if row.get("error"):
            errors += 1
            continue
        label = normalize_class(row.get("label"))
        if label is None:
            raise bad(path, line, "label",
                       f"label must be one of {', '.join(ANSWER_LABELS)}, got {row.get('label')!r}")
        labels[case_id] = label
    missing = [c.case_id for c in cases if c.case_id not in seen]
    dist = M.distribution(list(labels.values()), ANSWER_LABELS)
    metrics: dict[str, Any] = {"cases": len(cases), "classified": len(labels)}
    for label, stats in dist.items():
        metrics[f"{label} share"] = stats["share"]
    gold_pairs = [(normalize_class(by_id[cid].label), lab) for cid, lab in labels.items() if by_id[cid].label]
    tables = [table("Answer classes", ["class", "count", "share"],
                    [[k, v["count"], v["share"]] for k, v in dist.items()])]
    if gold_pairs:
        metrics["judge agreement with gold labels"] = M.accuracy([g for g, _ in gold_pairs], [p for _, p in gold_pairs])
        conf = M.confusion([g or "?" for g, _ in gold_pairs], [p for _, p in gold_pairs])
        tables.append(table("Judge vs gold labels", ["gold", *ANSWER_LABELS],
                            [[g, *(conf[g][p] for p in ANSWER_LABELS)] for g in ANSWER_LABELS if g in conf]))
    recalls = [gold_recall(by_id[cid].kb_ids, ids) for cid, ids in retrieved.items() if by_id[cid].kb_ids]
    if recalls:
        metrics["retrieval recall of gold articles"] = sum(recalls) / len(recalls)
    metrics.update({"errors": errors, "missing": len(missing)})
    notes = [f"no prediction for {len(missing)} case(s), e.g. {missing[0]}"] if missing else []
    warnings = []
    if old_key:
        where = f"{path}:{old_key[0]}" if path else f"row {old_key[0]}"
        warnings.append(f"warning: {where}: 'retrieved_ids' is deprecated: use 'ranking' (the retrieved article ids, "
                        f"best first; {len(old_key)} row(s))")
    ns = {f"{label} share": len(labels) for label in ANSWER_LABELS}
    ns.update({"judge agreement with gold labels": len(gold_pairs), "retrieval recall of gold articles": len(recalls)})
    return TaskReport(task="multi-turn answer classification", metrics=metrics, tables=tables, notes=notes,
                      problems=errors + len(missing), ns=ns, errors={name: errors for name in ns},
                      headline=[("Correct share", "replies"), ("Hallucination share", "replies")], warnings=warnings)

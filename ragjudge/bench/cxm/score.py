"""Score prediction rows (from `ragjudge cxm run` or any system) against a task's gold data.

Each scorer validates the rows (bad rows are InputErrors naming file, line and field), computes the
metrics with `ragjudge.bench.cxm.metrics` and returns a TaskReport. Rows with `error` (calls that failed) and
items without a prediction are left out of the metrics and counted as problems.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragjudge.bench.cxm import metrics as M
from ragjudge.bench.cxm.loaders import normalize_message_id, parse_answer, read_pair
from ragjudge.bench.cxm.models import (
    ANSWER_LABELS,
    PAIR_KINDS,
    Article,
    IntentCase,
    QualityCase,
    RagCase,
    SearchQuery,
    Taxonomy,
    ToolCase,
    normalize_class,
    parse_arguments,
)
from ragjudge.bench.cxm.report import Table, TaskReport
from ragjudge.bench.cxm.tables import id_list
from ragjudge.errors import InputError

Rows = Sequence[tuple[int, dict[str, Any]]]
"""(line number, prediction row) as read from a predictions JSONL file."""


def _bad(path: Path | None, line: int, field: str, message: str) -> InputError:
    return InputError(message, file=str(path) if path else None, line=line, field=field)


def _ids(row: dict[str, Any], key: str, path: Path | None, line: int) -> list[str]:
    return id_list(row.get(key), path=path or Path("-"), line=line, name=key)


def _known_id(row: dict[str, Any], key: str, known: set[str], path: Path | None, line: int, what: str) -> str:
    value = row.get(key)
    if value is None:
        raise _bad(path, line, key, f"missing {key}")
    value = str(value)
    if value not in known:
        raise _bad(path, line, key, f"unknown {what} {value!r}")
    return value


# -- intent prediction ----------------------------------------------------------------------------------

def score_intent(cases: Sequence[IntentCase], taxonomies: dict[str, Taxonomy], rows: Rows,
                 path: Path | None = None, taxonomy: str | None = None) -> list[TaskReport]:
    """One report per taxonomy that has predictions (or only `taxonomy`)."""
    ids = {c.case_id for c in cases}
    by_tax: dict[str, dict[str, dict[str, Any]]] = {}
    for line, row in rows:
        case_id = _known_id(row, "case_id", ids, path, line, "case")
        name = row.get("taxonomy")
        if name is None:
            if len(taxonomies) != 1:
                raise _bad(path, line, "taxonomy", f"missing taxonomy (one of {', '.join(taxonomies)})")
            name = next(iter(taxonomies))
        name = str(name).lower()
        if name not in taxonomies:
            raise _bad(path, line, "taxonomy", f"unknown taxonomy {name!r}")
        intent = row.get("intent")
        if intent is not None and not isinstance(intent, str):
            raise _bad(path, line, "intent", "intent must be text or null")
        verified = row.get("verified_match")
        if verified is not None and not isinstance(verified, bool):
            raise _bad(path, line, "verified_match", "verified_match must be true, false or null")
        if case_id in by_tax.setdefault(name, {}):
            raise _bad(path, line, "case_id", f"second prediction for case {case_id!r} ({name})")
        by_tax[name][case_id] = row
    names = [taxonomy.lower()] if taxonomy else list(by_tax)
    reports = []
    for name in names:
        if name not in taxonomies:
            raise InputError(f"unknown taxonomy {name!r} (available: {', '.join(taxonomies)})")
        reports.append(_score_taxonomy(cases, taxonomies[name], by_tax.get(name, {})))
    return reports


def _score_taxonomy(cases: Sequence[IntentCase], taxonomy: Taxonomy,
                    preds: dict[str, dict[str, Any]]) -> TaskReport:
    labels = set(taxonomy.labels)
    gold_cases = [c for c in cases if taxonomy.name in c.gold]
    missing = [c.case_id for c in gold_cases if c.case_id not in preds]
    errors = [c.case_id for c in gold_cases if c.case_id in preds and preds[c.case_id].get("error")]
    scored = [c for c in gold_cases if c.case_id in preds and not preds[c.case_id].get("error")]
    gold = [c.gold[taxonomy.name] for c in scored]
    pred = [preds[c.case_id].get("intent") or M.UNPARSABLE for c in scored]
    verified = [(c, preds[c.case_id].get("verified_match")) for c in scored]
    judged = [v for _, v in verified if v is not None]
    metrics: dict[str, Any] = {
        "cases": len(gold_cases), "scored": len(scored),
        "accuracy (exact match)": M.accuracy(gold, pred),
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
    return TaskReport(
        task=f"intent prediction ({taxonomy.name}, {len(taxonomy.entries)} intents)", metrics=metrics,
        tables=[Table("Per intent", ["intent", "support", "correct", "precision", "recall", "F1",
                                     "most often predicted instead"], label_rows),
                Table("Confusions (gold → predicted)", ["gold", "predicted", "count"],
                      [list(m) for m in mistakes[:15]])],
        notes=notes, problems=len(errors) + len(missing) + metrics["verification errors"])


# -- agent quality adherence ----------------------------------------------------------------------------

def _answer_name(value: bool | None | str) -> str:
    return {True: "true", False: "false", None: "na"}.get(value, "unreadable") if not isinstance(value, str) \
        else "unreadable"


def score_quality(cases: Sequence[QualityCase], rows: Rows, path: Path | None = None) -> TaskReport:
    by_id = {c.case_id: c for c in cases}
    preds: dict[str, dict[str, Any]] = {}
    for line, row in rows:
        case_id = _known_id(row, "case_id", set(by_id), path, line, "case")
        if case_id in preds:
            raise _bad(path, line, "case_id", f"second prediction for case {case_id!r}")
        answers = {}
        items = row.get("answers") or []
        if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
            raise _bad(path, line, "answers", 'answers must be a list of {"question_id", "answer", "evidence"}')
        for item in items:
            qid = str(item.get("question_id"))
            if qid not in {q.question_id for q in by_id[case_id].questions}:
                raise _bad(path, line, "answers", f"case {case_id!r} has no question {qid!r}")
            try:
                answer = parse_answer(item.get("answer"))
            except ValueError as exc:
                raise _bad(path, line, "answers", str(exc)) from None
            key = "evidence" if item.get("evidence") is not None else "message_ids"
            evidence = tuple(normalize_message_id(x) for x in _ids(item, key, path, line))
            answers[qid] = (answer, evidence)
        preds[case_id] = {"error": row.get("error"), "answers": answers}
    outcomes: list[M.QuestionOutcome] = []
    by_text: dict[str, list[bool]] = {}
    missing = [c.case_id for c in cases if c.case_id not in preds]
    errors = [cid for cid, p in preds.items() if p["error"]]
    for case in cases:
        p = preds.get(case.case_id)
        if p is None or p["error"]:
            continue
        for q in case.questions:
            answer, evidence = p["answers"].get(q.question_id, (M.UNPARSABLE, ()))
            outcome = M.QuestionOutcome(case.case_id, q.answer, answer,
                                        tuple(q.evidence) if q.evidence is not None else None, evidence)
            outcomes.append(outcome)
            by_text.setdefault(q.text, []).append(outcome.correct)
    prf = M.binary_prf(outcomes)
    ev = M.evidence_prf(outcomes)
    metrics = {
        "cases": len(cases), "scored cases": len({o.case_id for o in outcomes}), "questions": len(outcomes),
        "question accuracy": M.question_accuracy(outcomes),
        "question precision (true)": prf["precision"], "question recall (true)": prf["recall"],
        "question F1 (true)": prf["f1"],
        "case accuracy (all questions right)": M.case_accuracy(outcomes),
        "evidence precision": ev["precision"], "evidence recall": ev["recall"], "evidence F1": ev["f1"],
        "questions with gold evidence": ev["questions"],
        "unreadable answers": sum(o.pred == M.UNPARSABLE for o in outcomes),
        "errors": len(errors), "missing": len(missing),
    }
    question_rows = sorted(([t, len(v), M.ratio(sum(v), len(v))] for t, v in by_text.items()),
                           key=lambda r: (-r[1], r[0]))[:20]
    grid = Counter((_answer_name(o.gold), _answer_name(o.pred)) for o in outcomes)
    answer_rows = [[f"gold {g}", *(grid[(g, p)] for p in ("true", "false", "na", "unreadable"))]
                   for g in ("true", "false", "na") if any(grid[(g, p)] for p in ("true", "false", "na", "unreadable"))]
    notes = [f"no prediction for {len(missing)} case(s), e.g. {missing[0]}"] if missing else []
    return TaskReport(
        task="agent quality adherence", metrics=metrics,
        tables=[Table("Answers (gold × predicted)", ["", "pred true", "pred false", "pred na", "unreadable"],
                      answer_rows),
                Table("By question", ["question", "n", "accuracy"], question_rows)],
        notes=notes, problems=len(errors) + len(missing))


# -- tool calls -----------------------------------------------------------------------------------------

def _pred_calls(row: dict[str, Any], path: Path | None, line: int) -> list[tuple[str, dict[str, Any] | None]]:
    calls = []
    for call in row.get("tool_calls") or []:
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            raise _bad(path, line, "tool_calls", "each tool call needs a name")
        calls.append((call["name"], parse_arguments(call.get("arguments"))))
    return calls


def score_tools(cases: Sequence[ToolCase], rows: Rows, path: Path | None = None) -> TaskReport:
    by_id = {c.case_id: c for c in cases}
    seen: set[tuple[str, int, str]] = set()
    results: list[dict[str, Any]] = []
    errors = 0
    for line, row in rows:
        case_id = _known_id(row, "case_id", set(by_id), path, line, "case")
        try:
            size = int(row["n_tools"])
        except (KeyError, TypeError, ValueError):
            raise _bad(path, line, "n_tools", "n_tools must be the number of offered tools") from None
        mode = str(row.get("mode") or "auto")
        if (case_id, size, mode) in seen:
            raise _bad(path, line, "case_id", f"second prediction for case {case_id!r} with {size} tools ({mode})")
        seen.add((case_id, size, mode))
        if row.get("error"):
            errors += 1
            continue
        case = by_id[case_id]
        pred = _pred_calls(row, path, line)
        gold = [(c.name, c.arguments) for c in case.expected]
        hit, total = M.argument_value_accuracy(gold, pred)
        results.append({"case": case_id, "size": size, "mode": mode,
                        "selected": M.tool_selection_correct([g for g, _ in gold], [p for p, _ in pred]),
                        "args": M.arguments_match(gold, pred), "hit": hit, "total": total, "no_call": not pred})
    missing = [c.case_id for c in cases if not any(r["case"] == c.case_id for r in results)
               and not any(k[0] == c.case_id for k in seen)]
    modes = sorted({r["mode"] for r in results})
    metrics: dict[str, Any] = {"cases": len(cases), "predictions": len(results)}
    table_rows = []
    for mode in modes:
        mine = [r for r in results if r["mode"] == mode]
        prefix = "" if len(modes) == 1 else f"{mode} "
        with_args = [r["args"] for r in mine if r["args"] is not None]
        metrics[f"{prefix}tool-selection accuracy"] = M.ratio(sum(r["selected"] for r in mine), len(mine))
        metrics[f"{prefix}argument match"] = M.ratio(sum(with_args), len(with_args)) if with_args else None
        metrics[f"{prefix}argument values right"] = M.ratio(sum(r["hit"] for r in mine), sum(r["total"] for r in mine))
        metrics[f"{prefix}no tool called"] = M.ratio(sum(r["no_call"] for r in mine), len(mine))
        curve = M.accuracy_by_size((r["size"], r["selected"]) for r in mine)
        for size, stats in curve.items():
            metrics[f"{prefix}tool-selection accuracy @{size} tools"] = stats["accuracy"]
            at = [r for r in mine if r["size"] == size]
            args_at = [r["args"] for r in at if r["args"] is not None]
            table_rows.append([mode, size, stats["n"], stats["accuracy"],
                               M.ratio(sum(args_at), len(args_at)) if args_at else None,
                               M.ratio(sum(r["no_call"] for r in at), len(at))])
    metrics.update({"errors": errors, "missing": len(missing)})
    notes = [f"no prediction for {len(missing)} case(s), e.g. {missing[0]}"] if missing else []
    if not any(c.arguments is not None for case in cases for c in case.expected):
        notes.append("the gold names tools only (no arguments): argument match is not measured")
    return TaskReport(task="tool calls", metrics=metrics,
                      tables=[Table("Accuracy vs number of offered tools",
                                    ["mode", "tools", "n", "selection acc", "argument match", "no call"], table_rows)],
                      notes=notes, problems=errors + len(missing))


# -- answer classification ------------------------------------------------------------------------------

def score_classification(cases: Sequence[RagCase], rows: Rows, path: Path | None = None) -> TaskReport:
    by_id = {c.case_id: c for c in cases}
    labels: dict[str, str] = {}
    retrieved: dict[str, list[str]] = {}
    errors = 0
    seen: set[str] = set()
    for line, row in rows:
        case_id = _known_id(row, "case_id", set(by_id), path, line, "case")
        if case_id in seen:
            raise _bad(path, line, "case_id", f"second prediction for case {case_id!r}")
        seen.add(case_id)
        if row.get("retrieved_ids") is not None:
            retrieved[case_id] = _ids(row, "retrieved_ids", path, line)
        if row.get("error"):
            errors += 1
            continue
        label = normalize_class(row.get("label"))
        if label is None:
            raise _bad(path, line, "label",
                       f"label must be one of {', '.join(ANSWER_LABELS)}, got {row.get('label')!r}")
        labels[case_id] = label
    missing = [c.case_id for c in cases if c.case_id not in seen]
    dist = M.distribution(list(labels.values()), ANSWER_LABELS)
    metrics: dict[str, Any] = {"cases": len(cases), "classified": len(labels)}
    for label, stats in dist.items():
        metrics[f"{label} share"] = stats["share"]
    gold_pairs = [(normalize_class(by_id[cid].label), lab) for cid, lab in labels.items() if by_id[cid].label]
    tables = [Table("Answer classes", ["class", "count", "share"],
                    [[k, v["count"], v["share"]] for k, v in dist.items()])]
    if gold_pairs:
        metrics["judge agreement with gold labels"] = M.accuracy([g for g, _ in gold_pairs], [p for _, p in gold_pairs])
        conf = M.confusion([g or "?" for g, _ in gold_pairs], [p for _, p in gold_pairs])
        tables.append(Table("Judge vs gold labels", ["gold", *ANSWER_LABELS],
                            [[g, *(conf[g][p] for p in ANSWER_LABELS)] for g in ANSWER_LABELS if g in conf]))
    recalls = [len(set(by_id[cid].kb_ids) & set(ids)) / len(set(by_id[cid].kb_ids))
               for cid, ids in retrieved.items() if by_id[cid].kb_ids]
    if recalls:
        metrics["retrieval recall of gold articles"] = sum(recalls) / len(recalls)
    metrics.update({"errors": errors, "missing": len(missing)})
    notes = [f"no prediction for {len(missing)} case(s), e.g. {missing[0]}"] if missing else []
    return TaskReport(task="multi-turn answer classification", metrics=metrics, tables=tables, notes=notes,
                      problems=errors + len(missing))


# -- KB refinement --------------------------------------------------------------------------------------

DEFAULT_THRESHOLDS = tuple(round(float(t), 2) for t in np.arange(0.3, 0.96, 0.05))


def read_predicted_pairs(rows: Rows, path: Path | None = None) -> dict[str, set[frozenset[str]]]:
    out: dict[str, set[frozenset[str]]] = {}
    for line, row in rows:
        kind = str(row.get("kind", "")).strip().lower()
        kind = {"similarity": "similar", "contradiction": "contradictory"}.get(kind, kind)
        if kind not in PAIR_KINDS:
            raise _bad(path, line, "kind", f"kind must be one of {', '.join(PAIR_KINDS)}")
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


# -- article search -------------------------------------------------------------------------------------

def score_search(queries: Sequence[SearchQuery], rows: Rows, ks: Sequence[int], path: Path | None = None,
                 articles: dict[str, Article] | None = None) -> TaskReport:
    by_id = {q.query_id: q for q in queries}
    rankings: dict[str, list[str]] = {}
    for line, row in rows:
        query_id = _known_id(row, "query_id", set(by_id), path, line, "query")
        if query_id in rankings:
            raise _bad(path, line, "query_id", f"second ranking for query {query_id!r}")
        if not isinstance(row.get("ranking"), list):
            raise _bad(path, line, "ranking", "ranking must be a list of article ids, best first")
        rankings[query_id] = _ids(row, "ranking", path, line)
    missing = [q.query_id for q in queries if q.query_id not in rankings]
    pairs = [(rankings[q.query_id], q.relevant) for q in queries if q.query_id in rankings]
    scores = M.search_scores(pairs, ks)
    metrics: dict[str, Any] = {"queries": len(queries), "ranked": len(pairs), **scores, "missing": len(missing)}
    notes = [f"no ranking for {len(missing)} query(ies), e.g. {missing[0]}"] if missing else []
    if articles is not None:
        unknown = sorted({d for r, _ in pairs for d in r} - set(articles))
        if unknown:
            notes.append(f"{len(unknown)} ranked article id(s) are not in the KB, e.g. {unknown[0]}")
    return TaskReport(task="article search", metrics=metrics,
                      tables=[Table("By cut-off", ["k", "precision@k", "recall@k"],
                                    [[k, scores[f"P@{k}"], scores[f"R@{k}"]] for k in ks])],
                      notes=notes, problems=len(missing))

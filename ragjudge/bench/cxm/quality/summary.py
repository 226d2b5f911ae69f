"""Agent quality adherence scores: per question, per case (all right) and on the cited evidence."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragjudge.bench.cxm import metrics as M
from ragjudge.bench.cxm.models import QualityCase
from ragjudge.bench.cxm.quality.scorers import paper_outcomes, question_outcomes, read_answers
from ragjudge.bench.cxm.rows import Rows, bad, known_id
from ragjudge.bench.cxm.summary import TaskReport, table


def _answer_name(value: bool | None | str) -> str:
    return {True: "true", False: "false", None: "na"}.get(value, "unreadable") if not isinstance(value, str) \
        else "unreadable"


PAPER_ACCURACY = "question accuracy (paper protocol: unanswered skipped)"


def figures(outcomes: Sequence[M.QuestionOutcome], paper: Sequence[bool], protocol: str = "ragjudge"
            ) -> dict[str, Any]:
    """The figures over questions (the run's, or one case's in the sample log), both accuracies in `protocol`'s
    order; None where there is nothing to average over."""
    prf, evidence = M.binary_prf(outcomes), M.evidence_prf(outcomes)
    accuracy = {"question accuracy": M.question_accuracy(outcomes), PAPER_ACCURACY: M.ratio(sum(paper), len(paper))}
    return {**(dict(reversed(accuracy.items())) if protocol == "paper" else accuracy),
            "question precision (true)": prf["precision"], "question recall (true)": prf["recall"],
            "question F1 (true)": prf["f1"], "case accuracy (all questions right)": M.case_accuracy(outcomes),
            "evidence precision": evidence["precision"], "evidence recall": evidence["recall"],
            "evidence F1": evidence["f1"]}


def score_quality(cases: Sequence[QualityCase], rows: Rows, path: Path | None = None,
                  protocol: str = "ragjudge") -> TaskReport:
    by_id = {c.case_id: c for c in cases}
    known = set(by_id)
    preds: dict[str, dict[str, Any]] = {}
    for line, row in rows:
        case_id = known_id(row, "case_id", known, path, line, "case")
        if case_id in preds:
            raise bad(path, line, "case_id", f"second prediction for case {case_id!r}")
        answers, unreadable = read_answers(by_id[case_id], row, path, line)
        preds[case_id] = {"error": row.get("error"), "answers": answers, "unreadable": unreadable}
    outcomes: list[M.QuestionOutcome] = []
    by_text: dict[str, list[bool]] = {}
    missing = [c.case_id for c in cases if c.case_id not in preds]
    errors = [cid for cid, p in preds.items() if p["error"]]
    paper: list[bool] = []
    for case in cases:
        p = preds.get(case.case_id)
        if p is None or p["error"]:
            continue
        paper += paper_outcomes(case, p["answers"], p["unreadable"])
        mine = question_outcomes(case, p["answers"])
        outcomes += mine
        for q, outcome in zip(case.questions, mine, strict=True):
            by_text.setdefault(q.text, []).append(outcome.correct)
    spoiled = [q for c in cases for q in c.questions if q.evidence_error]
    ev = M.evidence_prf(outcomes)
    metrics = {
        "cases": len(cases), "scored cases": len({o.case_id for o in outcomes}),
        "questions": len(outcomes), "questions answered": len(paper), **figures(outcomes, paper, protocol),
        "questions with gold evidence": ev["questions"],
        "unreadable answers": sum(o.pred == M.UNPARSABLE for o in outcomes),
        "questions with malformed gold evidence": len(spoiled), "errors": len(errors), "missing": len(missing),
    }
    question_rows = sorted(([t, len(v), M.ratio(sum(v), len(v))] for t, v in by_text.items()),
                           key=lambda r: (-r[1], r[0]))[:20]
    grid = Counter((_answer_name(o.gold), _answer_name(o.pred)) for o in outcomes)
    answer_rows = [[f"gold {g}", *(grid[(g, p)] for p in ("true", "false", "na", "unreadable"))]
                   for g in ("true", "false", "na") if any(grid[(g, p)] for p in ("true", "false", "na", "unreadable"))]
    notes = [f"no prediction for {len(missing)} case(s), e.g. {missing[0]}"] if missing else []
    if spoiled:
        notes.append(f"{len(spoiled)} question(s) whose gold evidence is malformed are left out of the evidence "
                     f"metrics (their answers are scored); first: {spoiled[0].evidence_error}")
    notes.append("question accuracy counts a question the model left unanswered as wrong; the paper protocol "
                 "(CXMArena's evaluator) skips it; both count case accuracy only when every question is right")
    scored_cases = metrics["scored cases"]
    ns = {"question accuracy": len(outcomes), PAPER_ACCURACY: len(paper), "question precision (true)": len(outcomes),
          "question recall (true)": len(outcomes), "question F1 (true)": len(outcomes),
          "case accuracy (all questions right)": scored_cases, "evidence precision": ev["questions"],
          "evidence recall": ev["questions"], "evidence F1": ev["questions"]}
    leading = PAPER_ACCURACY if protocol == "paper" else "question accuracy"
    return TaskReport(
        task="agent quality adherence", metrics=metrics,
        tables=[table("Answers (gold × predicted)", ["", "pred true", "pred false", "pred na", "unreadable"],
                      answer_rows),
                table("By question", ["question", "n", "accuracy"], question_rows)],
        notes=notes, problems=len(errors) + len(missing), ns=ns,
        errors={name: len(errors) for name in ns},
        headline=[(leading, "questions"), ("case accuracy (all questions right)", "conversations")])

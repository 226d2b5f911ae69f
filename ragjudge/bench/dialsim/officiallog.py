"""Rescoring the official simulator's logs (`results/entire_log-*.json`) with ragjudge's scorers (the command:
docs/benches/dialsim.md, Official logs). The log's parallel lists: `gold_answer_list` holds "(B)" or the answer text;
`result_list` Correct, Wrong, Ambiguous or "Wrong (Timeout ...)"; `result_time_list` seconds or a "<<<Timeout ...>>>"
marker; `target_level_list` [{"current_type"}]; `ret_histories_question_answer_list` [memory, question as asked,
gold, distilled answer]. Option texts come from the question lines, as the official `calibrate` reads them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragjudge.bench.dialsim.judge import AnswerJudge
from ragjudge.bench.dialsim.plan import OPTION_LETTERS
from ragjudge.bench.dialsim.scorers import JudgeKind, answer_score, timed_out
from ragjudge.bench.dialsim.summary import figures
from ragjudge.engine.parallel import each_as_completed
from ragjudge.engine.summary import Summary, Table
from ragjudge.errors import InputError
from ragjudge.formats.jsonl import json_type, read_json

REQUIRED = ("answer_list", "gold_answer_list", "result_list")
OPTIONAL = ("calibrated_result_list", "result_time_list", "target_level_list", "ret_histories_question_answer_list")
FAN_TYPES = ("ans_w_time", "ans_wo_time", "before_event_unans", "dont_know_unans", "dont_know_unans_time")
IDK_GOLD = "I don't know."


@dataclass
class LoggedAnswer:
    index: int
    answer: str
    gold: str
    question: str
    official: str
    official_calibrated: str | None
    seconds: float | None
    type: str | None


@dataclass
class OfficialLog:
    path: Path
    fmt: str
    answers: list[LoggedAnswer]
    score: float | None
    calibrated_score: float | None


def read_log(path: Path, fmt: str | None = None) -> OfficialLog:
    """The log, read through ragjudge.formats.files: a missing file, a folder, bytes that are not UTF-8 (line and
    byte offset), an empty or cut-off file, a field of the wrong type or out of range are one InputError each."""
    data = read_json(path, "official simulator log (entire_log-*.json)")
    if not isinstance(data, dict):
        raise InputError(f"expected the official simulator's log object (entire_log-*.json), got {json_type(data)}",
                         file=str(path))
    for key in REQUIRED:
        if not isinstance(data.get(key), list):
            raise InputError("missing or not a list (is this an entire_log-*.json file?)", file=str(path), field=key)
    n = len(data["answer_list"])
    for key in (*REQUIRED, *OPTIONAL):
        if key in data and (not isinstance(data[key], list) or len(data[key]) != n):
            raise InputError(f"expected a list of {n} entries, like answer_list", file=str(path), field=key)
    questions = [_question(entry) for entry in data.get("ret_histories_question_answer_list") or [None] * n]
    answers = []
    for i in range(n):
        answer, gold = data["answer_list"][i], data["gold_answer_list"][i]
        for key, value in (("answer_list", answer), ("gold_answer_list", gold)):
            if not isinstance(value, str):
                raise InputError(f"expected text, got {json_type(value)}", file=str(path), field=f"{key}[{i}]")
        if fmt == "mc" and gold not in OPTION_LETTERS:
            raise InputError(f"expected an option, (A) to (E), for --answer-format mc, got {gold!r}", file=str(path),
                             field=f"gold_answer_list[{i}]")
        level = (data.get("target_level_list") or [None] * n)[i]
        seconds = (data.get("result_time_list") or [None] * n)[i]
        if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) and \
                not (math.isfinite(seconds) and seconds >= 0):
            raise InputError(f"expected seconds (a number >= 0) or a timeout marker, got {seconds}", file=str(path),
                             field=f"result_time_list[{i}]")
        answers.append(LoggedAnswer(
            index=i, answer=answer, gold=gold, question=questions[i], official=str(data["result_list"][i]),
            official_calibrated=str(data["calibrated_result_list"][i]) if "calibrated_result_list" in data else None,
            seconds=float(seconds) if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) else None,
            type=level.get("current_type") if isinstance(level, dict) else None))
    found = fmt or detect_format(answers)
    return OfficialLog(path=path, fmt=found, answers=answers, score=_number(data.get("score")),
                       calibrated_score=_number(data.get("calibrated_score")))


def _question(entry: Any) -> str:
    return entry[1] if isinstance(entry, (list, tuple)) and len(entry) > 1 and isinstance(entry[1], str) else ""


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) else None


def detect_format(answers: list[LoggedAnswer]) -> str:
    if answers and all(a.gold in OPTION_LETTERS for a in answers):
        return "mc"
    if any(a.question.rstrip().endswith("you don't know?") for a in answers):
        return "mc-nl"
    return "open"


def options_of(question: str, fmt: str) -> list[str]:
    """Option texts from the question line as the official simulator wrote it."""
    if fmt == "mc":
        parts = question.split("\t")
        return [p.replace(letter, "", 1).strip() for p, letter in zip(parts[1:6], OPTION_LETTERS)] \
            if len(parts) >= 6 else []
    marker = "you don't know?"
    if fmt != "mc-nl" or not question.rstrip().endswith(marker):
        return []
    body = question.rstrip()[: -len(marker)]
    parts = body.split("? or ")[:-1] if body.endswith("? or ") else body.split("? or ")
    if len(parts) < 4:
        return []
    head, *rest = parts[-4:]
    first = head.rsplit("? ", 1)[-1]
    return [first, *rest, IDK_GOLD]


async def rescore(log: OfficialLog, judge: JudgeKind, llm_judge: AnswerJudge | None) -> list[dict[str, Any]]:
    """One row per logged answer, in the shape `summary.figures` takes, with the official verdicts beside."""

    async def one(a: LoggedAnswer) -> dict[str, Any]:
        options = options_of(a.question, log.fmt)
        if log.fmt == "mc":
            gold, gold_text = a.gold, options[OPTION_LETTERS.index(a.gold)] if options else ""
        else:
            gold = "(E)" if a.gold.strip() == IDK_GOLD else "(A)"
            gold_text = a.gold
        timeout = a.answer.startswith("<<<Timeout") or a.official.startswith("Wrong (Timeout")
        score = timed_out() if timeout else await answer_score(log.fmt, gold, gold_text, options or [""] * 5, a.answer,
                                                               judge, llm_judge, a.question)
        error = score.get("error")
        qtype = a.type
        source = None if qtype is None else ("fan" if qtype in FAN_TYPES else "temporal")
        return {
            "index": a.index, "show": log_show(log.path), "seed": 0, "type": qtype, "source": source,
            "hop": None if source != "temporal" else ("two-hop" if "_" in (qtype or "") else "one-hop"),
            "answerability": "unanswerable" if gold == "(E)" else "answerable", "answer": a.answer, "gold": a.gold,
            "official": a.official, "official_calibrated": a.official_calibrated,
            "verdict": None if error else score["verdict"], "calibrated": None if error else score["calibrated"],
            "correct": None if error else score["value"],
            "correct_calibrated": None if error else score["calibrated_value"],
            "declined": score.get("declined"), "committed": score.get("committed"), "judged_by": score["judged_by"],
            "judge_raw": score.get("judge_raw"), "latency": a.seconds, "cached": False, "errors": error,
        }

    rows = [row async for _, row in each_as_completed(log.answers, one)]
    return sorted(rows, key=lambda r: r["index"])


def log_show(path: Path) -> str:
    """`entire_log-friends-model_...json` -> friends."""
    parts = path.stem.split("-")
    return parts[1] if len(parts) > 1 and parts[0] in ("entire_log", "results") else path.stem


def summarize_log(log: OfficialLog, rows: list[dict[str, Any]], limits: list[float],
                  judges: list[str] | None = None) -> Summary:
    """The log's Summary: ragjudge's figures (the bench's metrics and breakdowns), the official scores beside
    them, and the answers the two score differently."""
    found = figures(rows, limits, by_seed=False)
    n = len(rows)
    official = sum(r["official"] == "Correct" for r in rows)
    official_cal = sum(r["official_calibrated"] == "Correct" for r in rows) if log.answers and \
        log.answers[0].official_calibrated is not None else None
    scores = {"score": log.score, "calibrated_score": log.calibrated_score,
              "recounted_score": round(official / n, 6) if n else None,
              "recounted_calibrated_score": round(official_cal / n, 6) if n and official_cal is not None else None}
    agree = sum((r["official"] == "Correct") == (r["verdict"] == "correct") for r in rows if r["verdict"])
    differ = [[r["index"], r["official"], r["verdict"], r["answer"][:80]] for r in rows
              if r["verdict"] and (r["official"] == "Correct") != (r["verdict"] == "correct")]
    tables = [Table(title=f"Official log ({log.fmt}, {n} answers): official vs ragjudge scores",
                    columns=["score", "official", "ragjudge"],
                    rows=[["strict", scores["recounted_score"], found.metrics["accuracy"].value],
                          ["calibrated", scores["recounted_calibrated_score"],
                           found.metrics["accuracy_calibrated"].value]],
                    notes=[("official: the log's verdicts recounted over all its answers; ragjudge: over the "
                            "answers it could judge")])]
    if differ:
        tables.append(Table(title="Answers scored differently", columns=["#", "official", "ragjudge", "answer"],
                            rows=differ[:20], notes=[(f"{len(differ)} in all: --out FILE writes every answer "
                                                      "with both verdicts")] if len(differ) > 20 else []))
    details = {**found.details, "format": log.fmt, "log": str(log.path), "official": scores,
               "agreement": {"answers": n, "same_verdict": agree, "different": len(differ)},
               "judges": {"dialsim": judges or []}}
    return Summary(bench="dialsim", title=f"dialsim score: {n} answers ({log.fmt}) of {log.path.name}",
                   unit="questions", n_samples=n, n_errors=found.details["counts"]["errors"], metrics=found.metrics,
                   headline=found.headline, breakdowns=found.breakdowns, tables=tables, details=details)

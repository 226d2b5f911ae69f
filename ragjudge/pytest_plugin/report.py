"""What the session judged: per-judge pass rates and means for the terminal, and the JSON report. A judgement
passes when an assertion helper said so, else when its score reaches the session's threshold for that judge; IDK
judges pass when they agree with the expected answerability.

PYTEST_DONT_REWRITE
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ragjudge.version import __version__
from ragjudge.formats.files import atomic_output
from ragjudge.formats.jsonl import to_jsonable
from ragjudge.pytest_plugin.config import DEFAULT_THRESHOLDS, Settings

if TYPE_CHECKING:  # annotations only: the Recorder is created at configure time in every test suite
    from ragjudge.formats.samples import Score
    from ragjudge.pytest_plugin.result import RagResult

IDK_JUDGES = ("idk", "idk_lexical")


@dataclass
class Entry:
    test: str | None
    result: RagResult


class Recorder:
    """Every evaluation of the session, with the outcome of the test that made it."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self.outcomes: dict[str, str] = {}

    def add(self, test: str | None, result: RagResult) -> None:
        self.entries.append(Entry(test, result))

    def record_outcome(self, report: pytest.TestReport) -> None:
        """Setup and call phases set the outcome; a failing teardown turns it into an error."""
        if report.when == "teardown" and not report.failed:
            return
        if hasattr(report, "wasxfail"):
            outcome = "xfailed" if report.skipped else "xpassed"
        elif report.failed and report.when != "call":
            outcome = "error"
        else:
            outcome = report.outcome
        self.outcomes[report.nodeid] = outcome


def _verdict(name: str, judgement: Score, result: RagResult, settings: Settings
             ) -> tuple[bool | None, float | str | None]:
    """(passed, threshold) of one scored judgement."""
    checks = [c for c in result.checks if c.judge == name and c.metric == judgement.metric and c.passed is not None]
    if checks:
        last = checks[-1]
        return last.passed, last.threshold if last.threshold is not None else "answerability"
    if name in IDK_JUDGES:
        from ragjudge.judges.conditioning import answerability_correct

        correct = answerability_correct(judgement.value, result.answerability)
        return (None, None) if correct is None else (bool(correct), "answerability")
    threshold = settings.threshold(name)
    if threshold is None or judgement.value is None:
        return None, None
    return judgement.value >= threshold, threshold


def summarize(evaluations: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per judge: how many scored, mean, pass rate (and thresholds), skipped with reasons, errors; from the evaluation
    records alone, so that pytest-xdist workers' reports merge into the summary one process would have written."""
    acc: dict[str, dict[str, Any]] = {}
    for evaluation in evaluations:
        for name, judgement in evaluation["judges"].items():
            row = acc.setdefault(name, {"metrics": [], "values": [], "passed": 0, "judged": 0, "thresholds": [],
                                        "skipped": 0, "skip_reasons": [], "errors": 0})
            if judgement["metric"] not in row["metrics"]:
                row["metrics"].append(judgement["metric"])
            if judgement.get("value") is not None:
                row["values"].append(judgement["value"])
                if judgement.get("passed") is not None:
                    row["judged"] += 1
                    row["passed"] += int(judgement["passed"])
                    if judgement["threshold"] not in row["thresholds"]:
                        row["thresholds"].append(judgement["threshold"])
            elif judgement.get("error"):
                row["errors"] += 1
            else:
                row["skipped"] += 1
                reason = str((judgement.get("details") or {}).get("skipped", "not scored"))
                if reason not in row["skip_reasons"]:
                    row["skip_reasons"].append(reason)
    out = {}
    for name, row in acc.items():
        values = row["values"]
        out[name] = {
            "metric": ", ".join(row["metrics"]),
            "n": len(values),
            "mean": statistics.fmean(values) if values else None,
            "passed": row["passed"],
            "judged": row["judged"],
            "pass_rate": row["passed"] / row["judged"] if row["judged"] else None,
            "thresholds": row["thresholds"],
            "skipped": row["skipped"],
            "skip_reasons": row["skip_reasons"],
            "errors": row["errors"],
        }
    return out


def evaluation_record(entry: Entry, outcomes: dict[str, str], settings: Settings) -> dict[str, Any]:
    result = entry.result
    judges = {}
    for name, judgement in result.judgements.items():
        record = judgement.record()
        if judgement.value is not None:
            passed, threshold = _verdict(name, judgement, result, settings)
            record["passed"], record["threshold"] = passed, threshold
        judges[name] = record
    return {
        "test": entry.test,
        "outcome": outcomes.get(entry.test or ""),
        "task_id": result.task.task_id,
        "conversation": [t.model_dump() for t in result.task.history],
        "question": result.question,
        "answer": result.answer,
        "reference": result.reference,
        "answerability": result.answerability,
        "passages": [p.document_id for p in result.passages],
        "expected_passage_ids": result.expected_passage_ids,
        "judges": judges,
        "checks": [c.as_dict() for c in result.checks],
    }


def build_report(recorder: Recorder, settings: Settings, usage: dict[str, Any]) -> dict[str, Any]:
    evaluations = [evaluation_record(e, recorder.outcomes, settings) for e in recorder.entries]
    return {
        "ragjudge_version": __version__,
        "judge_models": list(settings.judge_models),
        "offline": settings.offline,
        "llm_unavailable": settings.llm_unavailable,
        "cache_dir": str(settings.cache_dir) if settings.cache_dir else None,
        "thresholds": {**DEFAULT_THRESHOLDS, **settings.thresholds},
        "recall_k": settings.recall_k,
        "llm": usage,
        "summary": summarize(evaluations),
        "tests": {e.test: recorder.outcomes.get(e.test) for e in recorder.entries if e.test},
        "evaluations": evaluations,
    }


def merge_reports(reports: list[dict[str, Any]]) -> dict[str, Any]:
    """The reports of pytest-xdist workers as one: tests and evaluations together, LLM usage added up, the
    summary recomputed over every evaluation. Settings are the session's, the same in every worker."""
    merged = dict(reports[0])
    merged["tests"] = {k: v for r in reports for k, v in r["tests"].items()}
    merged["evaluations"] = [e for r in reports for e in r["evaluations"]]
    merged["summary"] = summarize(merged["evaluations"])
    llm: dict[str, Any] = {"requests_sent": 0, "calls": 0, "cached": 0, "by_model": {}}
    for r in reports:
        for key in ("requests_sent", "calls", "cached"):
            llm[key] += r["llm"][key]
        for model, counts in r["llm"]["by_model"].items():
            totals = llm["by_model"].setdefault(model, {})
            for name, value in counts.items():
                totals[name] = totals.get(name, 0) + value
    merged["llm"] = llm
    return merged


def write_report(path: Path, report: dict[str, Any]) -> None:
    """Atomically, so CI never picks up half a file."""
    with atomic_output(path) as tmp:
        tmp.write_text(json.dumps(to_jsonable(report), indent=2, ensure_ascii=False, allow_nan=False) + "\n",
                       encoding="utf-8")


def _fmt_threshold(thresholds: list[Any]) -> str:
    if not thresholds:
        return "-"
    return ", ".join(t if isinstance(t, str) else f">= {t:g}" for t in thresholds)


def summary_lines(report: dict[str, Any]) -> list[str]:
    """The terminal section: one row per judge, skip reasons, LLM usage."""
    header = ("judge", "metric", "n", "mean", "pass rate", "threshold", "skipped", "errors")
    rows = [header]
    skipped_by_reason: dict[str, list[str]] = {}
    for name, s in report["summary"].items():
        rate = "-" if s["pass_rate"] is None else f"{s['passed']}/{s['judged']} ({s['pass_rate']:.0%})"
        mean = "-" if s["mean"] is None else f"{s['mean']:.3f}"
        rows.append((name, s["metric"], str(s["n"]), mean, rate, _fmt_threshold(s["thresholds"]),
                     str(s["skipped"]), str(s["errors"])))
        for reason in s["skip_reasons"]:
            skipped_by_reason.setdefault(reason, []).append(name)
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    unavailable = report["llm_unavailable"]
    for reason, names in skipped_by_reason.items():
        if reason != unavailable:
            lines.append(f"skipped ({', '.join(names)}): {reason}")
    if unavailable:
        judges = skipped_by_reason.get(unavailable, [])
        lines.append(f"LLM judges not run{' (' + ', '.join(judges) + ')' if judges else ''}: {unavailable}")
    else:
        llm = report["llm"]
        lines.append(f"LLM judges: {', '.join(report['judge_models'])}; {llm['requests_sent']} request(s) sent, "
                     f"{llm['cached']} answered from the response cache")
    return lines

"""Measuring an offline judge on labelled answers: a fixed split in two halves, precision, recall, false alarms.

A positive is an answer the judge should flag (a decline for `idk_lexical`, a clarification request for a
clarification judge). On MTRAG(-UN) references the task labels them: UNANSWERABLE references decline, ANSWERABLE and
PARTIAL ones answer, UNDERSPECIFIED ones ask to clarify. A judge flags when its value is 1: the decision IDK
conditioning acts on, so a partial (0.5) is an answer here too. Sets split in two by task id alone (`half_of`,
independent of file order and judge): `rules` may be read while writing patterns, `held-out` is only measured.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ragjudge.formats.samples import Score as Judgement
from ragjudge.judges.base import JudgeContext, JudgedItem
from ragjudge.judges.registry import JudgeRegistry
from ragjudge.models import Task, Turn

HALVES = ("rules", "held-out")
"""The half used to write a judge's rules, and the half kept out of it."""


def half_of(task_id: str) -> str:
    """`rules` when the first byte of sha256(task id) is even, else `held-out`: fixed, and about half each."""
    return HALVES[hashlib.sha256(task_id.encode("utf-8")).digest()[0] % 2]


@dataclass(frozen=True)
class Labelled:
    """One answer with its label: the task (answerability, conversation), the answer's text, positive or not."""

    task: Task
    text: str
    positive: bool
    expected: str | None = None
    """The full label where there is one beyond positive/negative (the IDK prompt's yes / partial / no)."""

    @property
    def half(self) -> str:
        return half_of(self.task.task_id)


def reference_answers(tasks: Iterable[Task], positives: Sequence[str], negatives: Sequence[str]) -> list[Labelled]:
    """The reference answer of every task whose answerability is in `positives` (positive) or `negatives`."""
    return [Labelled(task, task.reference, task.answerability in positives) for task in tasks
            if task.reference and task.answerability in (*positives, *negatives)]


@dataclass(frozen=True)
class Verdict:
    item: Labelled
    result: Judgement

    @property
    def flagged(self) -> bool:
        return self.result.error is None and self.result.value == 1.0


def judge_answers(judge_name: str, items: Sequence[Labelled], registry: JudgeRegistry | None = None) -> list[Verdict]:
    """Run an offline judge (no LLM) on the labelled answers, as `ragjudge judge` would with them as predictions."""
    judge = (registry or JudgeRegistry()).build(judge_name)
    if judge.needs_llm:
        raise ValueError(f"{judge_name} needs an LLM; this measures offline judges")
    batch = [JudgedItem(i.task.key, i.task.input, i.text, i.task.contexts, i.task.reference) for i in items]
    results = asyncio.run(judge.judge(batch, JudgeContext()))
    return [Verdict(i, r) for i, r in zip(items, results, strict=True)]


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


@dataclass
class Score:
    """How a judge did on one half (or on both): counts, precision, recall, false-alarm rate, the mistakes."""

    positives: int = 0
    negatives: int = 0
    true_positives: int = 0
    false_positives: int = 0
    labels: dict[str, dict[str, int]] = field(default_factory=lambda: {"positive": {}, "negative": {}})
    """The judge's labels (yes / partial / no ...) among positives and among negatives."""
    misses: list[Verdict] = field(default_factory=list)
    false_alarms: list[Verdict] = field(default_factory=list)

    def add(self, verdict: Verdict) -> None:
        positive, flagged = verdict.item.positive, verdict.flagged
        side = self.labels["positive" if positive else "negative"]
        label = verdict.result.label or ("error" if verdict.result.error else str(verdict.result.value))
        side[label] = side.get(label, 0) + 1
        if positive:
            self.positives += 1
            self.true_positives += flagged
        else:
            self.negatives += 1
            self.false_positives += flagged
        if positive != flagged:
            (self.misses if positive else self.false_alarms).append(verdict)

    @property
    def precision(self) -> float | None:
        return _ratio(self.true_positives, self.true_positives + self.false_positives)

    @property
    def recall(self) -> float | None:
        return _ratio(self.true_positives, self.positives)

    @property
    def false_alarm_rate(self) -> float | None:
        return _ratio(self.false_positives, self.negatives)

    def as_dict(self) -> dict[str, object]:
        def mistakes(verdicts: list[Verdict]) -> list[dict[str, object]]:
            return [{"task_id": v.item.task.task_id, "answerability": v.item.task.answerability,
                     "label": v.result.label, "text": v.item.text, "rationale": v.result.rationale}
                    for v in verdicts]
        return {"positives": self.positives, "negatives": self.negatives, "true_positives": self.true_positives,
                "false_positives": self.false_positives, "precision": self.precision, "recall": self.recall,
                "false_alarm_rate": self.false_alarm_rate, "labels": self.labels,
                "misses": mistakes(self.misses), "false_alarms": mistakes(self.false_alarms)}


def score(verdicts: Iterable[Verdict]) -> dict[str, Score]:
    """{"rules": Score, "held-out": Score, "all": Score}."""
    out = {name: Score() for name in (*HALVES, "all")}
    for verdict in verdicts:
        out[verdict.item.half].add(verdict)
        out["all"].add(verdict)
    return out


def read_reference_set(path: str | Path, positives: Sequence[str], negatives: Sequence[str]) -> list[Labelled]:
    """`reference_answers` of an MTRAG-format task file (MTRAG or MTRAG-UN)."""
    from ragjudge.formats.mtrag import read_tasks

    return reference_answers(read_tasks(path), positives, negatives)


_EXAMPLE = re.compile(r"\[Inquiry\]\n(.*?)\n\n\[Response\]\n(.*?)\n\n\[Output\]\n(yes|no|partial)\n", re.DOTALL)


def idk_prompt_examples(registry: JudgeRegistry | None = None) -> list[Labelled]:
    """The 15 labelled responses of MTRAG's IDK prompt (`judges/idk.yaml`, the benchmark's judge_utils.py):
    positive when labelled yes, with the label (yes / partial / no) as `expected`."""
    prompt = (registry or JudgeRegistry()).spec("idk").prompt
    assert prompt is not None
    return [Labelled(Task(task_id=f"idk-prompt::{i}", conversation_id="idk-prompt", turn=i,
                          input=[Turn(speaker="user", text=inquiry)]), response, label == "yes", expected=label)
            for i, (inquiry, response, label) in enumerate(_EXAMPLE.findall(prompt.user), 1)]


def idk_labelled_predictions(path: str | Path) -> list[Labelled]:
    """The predictions of an MTRAG results file that carry an IDK judgement (`metrics.idk_eval`, as the
    benchmark's own evaluation writes it, a number or a one-item list): positive when it is 1. Records
    without one are left out, so a file of bare predictions gives an empty list."""
    from ragjudge.formats.jsonl import read_jsonl
    from ragjudge.formats.mtrag import prediction_from_record, task_from_record

    out = []
    for line, record in read_jsonl(path):
        metrics = record.get("metrics")
        value = metrics.get("idk_eval") if isinstance(metrics, dict) else None
        if isinstance(value, list):
            value = value[0] if value else None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not record.get("predictions"):
            continue
        task = task_from_record(record, file=str(path), line=line)
        prediction = prediction_from_record(record, file=str(path), line=line)
        out.append(Labelled(task, prediction.text, float(value) == 1.0,
                            expected={1.0: "yes", 0.5: "partial", 0.0: "no"}.get(float(value))))
    return out

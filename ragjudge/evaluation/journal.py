"""Append-only journals that make runs resumable: finished generations and judgements are never redone.

Each judgement carries a fingerprint of the judge's spec and models, so changing a judge (or its
models) reruns it instead of reusing stale scores.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from ragjudge.formats.jsonl import JsonlAppender, read_jsonl
from ragjudge.models import JudgeResult, Passage, Prediction, normalize_task_id


def fingerprint(*parts: object) -> str:
    blob = json.dumps(parts, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


class PredictionJournal:
    """Finished generations. With `passages` (task key → what the generator is shown, for the retrieval
    settings), each answer is saved with its passages and reused only when the same passages come back:
    retrieval can change between runs while the spec does not (a failed rewrite that now succeeds), and an
    answer must never be reported next to passages it was not generated from."""

    def __init__(self, path: Path, generator_fingerprint: str, passages: dict[str, list[Passage]] | None = None):
        self.path = path
        self.fp = generator_fingerprint
        self._passages = passages
        self.done: dict[str, Prediction] = {}
        if path.exists():
            for _, rec in read_jsonl(path, tolerate_truncated_tail=True):
                if rec.get("fingerprint") == self.fp and not rec["prediction"].get("error"):
                    pred = Prediction.model_validate(rec["prediction"])
                    key = normalize_task_id(pred.task_id)
                    if passages is None or passage_ids(pred.contexts) == passage_ids(passages.get(key)):
                        self.done[key] = pred
        self._out: JsonlAppender | None = None

    def record(self, prediction: Prediction) -> None:
        if self._out is None:
            self._out = JsonlAppender(self.path)
        shown = self._passages.get(normalize_task_id(prediction.task_id)) if self._passages else None
        if prediction.contexts is None and shown is not None:
            prediction = prediction.model_copy(update={"contexts": shown})
        self._out.append({"fingerprint": self.fp, "prediction": prediction.model_dump(exclude_none=True)})
        if not prediction.error:
            self.done[normalize_task_id(prediction.task_id)] = prediction

    def close(self) -> None:
        if self._out is not None:
            self._out.close()


def passage_ids(passages: list[Passage] | None) -> list[str] | None:
    return None if passages is None else [p.document_id for p in passages]


class JudgementJournal:
    """(task, judge, fingerprint) → result. The runner's fingerprint covers the judge's spec and models and
    the very answer and passages judged, so a changed judge or a regenerated answer is judged again.
    Errored judgements are not reused: they are retried on the next run (an unparsable answer comes back
    from the response cache at no cost, so it is the same error)."""

    def __init__(self, path: Path):
        self.path = path
        self.done: dict[tuple[str, str, str], JudgeResult] = {}
        if path.exists():
            for _, rec in read_jsonl(path, tolerate_truncated_tail=True):
                result = JudgeResult.model_validate(rec["result"])
                if result.error is None:
                    self.done[(normalize_task_id(rec["task_id"]), result.judge, rec["fingerprint"])] = result
        self._out: JsonlAppender | None = None

    def get(self, task_id: str, judge: str, fp: str) -> JudgeResult | None:
        return self.done.get((normalize_task_id(task_id), judge, fp))

    def record(self, task_id: str, fp: str, result: JudgeResult) -> None:
        if self._out is None:
            self._out = JsonlAppender(self.path)
        self._out.append({"task_id": task_id, "fingerprint": fp, "result": result.model_dump(exclude_none=True)})

    def close(self) -> None:
        if self._out is not None:
            self._out.close()

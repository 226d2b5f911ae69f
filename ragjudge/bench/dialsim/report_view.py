"""How `ragjudge report` shows a DialSim run: each question with its options (the gold one marked), the agent's
answer, the verdict and what judged it, and the memory it recalled.

A DialSim record keeps its verdict under `score` (`value`: strict, `calibrated_value`: calibrated), not under the
generic view's `metrics`/`scores`: read here as the summary's own metric names, `accuracy` and
`accuracy_calibrated`, so the task list's columns, their direction and the comparison of two runs line up with
the summary. (The run as a whole is its summary, which the overview reads through the result contract.)
"""

from __future__ import annotations

import math
from typing import Any

from ragjudge.report.view import Block, Record, ReportView, generic_blocks

SCORE_METRICS = (("value", "accuracy"), ("calibrated_value", "accuracy_calibrated"))
"""`score` field -> the summary metric it is the per-question value of."""
FACETS = ("show", "seed", "names", "source", "type", "hop", "answerability", "asker")
SHOWN = ("question", "options", "gold", "gold_text", "answer")
"""Fields of the question block, in order; the rest of the record is the generic field table."""


class DialSimView(ReportView):
    def _score(self, record: Record) -> dict[str, Any]:
        score = record.get("score")
        if score is None:
            return {}
        if not isinstance(score, dict):  # read_samples turns this into an error naming the file and line
            raise TypeError(f"field 'score' must be an object, got {type(score).__name__}")
        return score

    def metrics(self, record: Record) -> dict[str, float]:
        score = self._score(record)
        out: dict[str, float] = {}
        for key, name in SCORE_METRICS:
            value = score.get(key)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                continue
            out[name] = float(value)
        return out

    def facets(self, record: Record) -> dict[str, str | list[str]]:
        out: dict[str, str | list[str]] = {k: str(record[k]) for k in FACETS
                                           if isinstance(record.get(k), (str, int)) and not isinstance(record[k], bool)}
        verdict = self._score(record).get("verdict")
        if isinstance(verdict, str):
            out["verdict"] = verdict
        return out

    def judges(self, record: Record) -> dict[str, dict[str, Any]]:
        return {}  # the verdict is the question block's; a rule is not a judge to correlate

    def errors(self, record: Record) -> dict[str, str]:
        out = super().errors(record)
        error = self._score(record).get("error")
        if error:
            out["score"] = str(error)
        return out

    def blocks(self, record: Record) -> list[Block]:
        blocks = self.error_blocks(record)
        blocks.append({"kind": "fields", "title": "Question", "items": self._question(record)})
        return blocks + generic_blocks(record, {*SHOWN, "score", "error", "errors"})

    def _question(self, record: Record) -> list[list[str]]:
        score = self._score(record)
        output = record.get("output") if isinstance(record.get("output"), dict) else {}
        items: list[list[str]] = [["question", str(record.get("question", ""))]]
        options = record.get("options")
        if isinstance(options, list):
            gold = record.get("gold")
            for i, option in enumerate(options):
                letter = f"({chr(ord('A') + i)})"
                items.append([letter, f"{option}" + ("  ← gold" if letter == gold else "")])
        if record.get("gold_text") is not None:
            items.append(["gold", f"{record.get('gold', '')} {record['gold_text']}".strip()])
        items.append(["answer", str(output.get("answer", ""))])
        for key in ("verdict", "calibrated", "choice", "judged_by", "judge_raw"):
            if score.get(key) is not None:
                items.append([key, str(score[key])])
        return items

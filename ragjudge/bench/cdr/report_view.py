"""How `ragjudge report` shows a CDR run: each query with its category, relevant conversations and ranking, and
its figures under the summary's names (`hit@k`, `P@k`, `R@k`, `nDCG@k`, `MRR@k`).

A CDR record keeps its figures in `scores.metrics.metrics` (the scorer is named `metrics`, its `value` the
headline nDCG@10): the generic view would read that scorer as one metric (and one judge) called `metrics`. Read
here as the figures they are, so the task list's columns, their direction and the comparison of two runs line up
with the summary. (The run as a whole is its summary, which the overview reads through the result contract.)
"""

from __future__ import annotations

import math
from typing import Any

from ragjudge.report.view import Block, Record, ReportView, generic_blocks, object_field

SCORER = "metrics"



class CdrView(ReportView):
    def _score(self, record: Record) -> dict[str, Any]:
        return object_field(object_field(record.get("scores"), "scores").get(SCORER), f"scores.{SCORER}")

    def metrics(self, record: Record) -> dict[str, float]:
        figures = object_field(self._score(record).get("metrics"), f"scores.{SCORER}.metrics")
        return {name: float(value) for name, value in figures.items()
                if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)}

    def facets(self, record: Record) -> dict[str, str | list[str]]:
        category = record.get("category")
        return {"category": category} if isinstance(category, str) and category else {}

    def judges(self, record: Record) -> dict[str, dict[str, Any]]:
        return {}  # figures, not judges

    def errors(self, record: Record) -> dict[str, str]:
        out = super().errors(record)
        for name, score in object_field(record.get("scores"), "scores").items():
            if isinstance(score, dict) and score.get("error"):
                out[name] = str(score["error"])
        return out

    def blocks(self, record: Record) -> list[Block]:
        blocks = self.error_blocks(record)
        blocks += generic_blocks(record, {"scores", "output", "error", "errors"})
        output = object_field(record.get("output"), "output")
        relevant = set(record.get("relevant") or []) if isinstance(record.get("relevant"), list) else set()
        ranking = output.get("ranking")
        if isinstance(ranking, list) and ranking:
            items = []
            for rank, entry in enumerate(ranking, 1):
                entry = object_field(entry, f"output.ranking[{rank - 1}]")
                score = entry.get("score")
                shown = f"{score:.4f}" if isinstance(score, (int, float)) and not isinstance(score, bool) else "–"
                items.append([f"{rank}. {entry.get('id', '')}" + (" ✓ relevant" if entry.get("id") in relevant
                                                                   else ""),
                              f"{shown} (best unit {entry.get('unit', '–')})"])
            blocks.append({"kind": "fields", "title": "Ranking", "items": items})
        metrics = self.metrics(record)
        if metrics:
            blocks.append({"kind": "metrics", "title": "Metrics", "items": [[k, v] for k, v in metrics.items()]})
        return blocks

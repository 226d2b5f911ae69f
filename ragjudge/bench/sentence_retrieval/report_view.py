"""How `ragjudge report` shows a sentence-retrieval run: each dialogue with its query, and every system's
figures on it.

A record keeps each system's figures under `systems.<name>.tested` (AP, nDCG@5 and RR of the dialogue, averaged
over the test halves that hold it; a dialogue in no test half has none) and every grid setting's under
`settings`: the generic view reads none of them. Here each system's tested figures are `<system> AP`,
`<system> nDCG@5`, `<system> RR`, as in results.csv. (The run as a whole is its summary: the best system's MAP,
nDCG@5 and MRR over the splits, every system in the `system` breakdown; the overview reads it through the result
contract.)
"""

from __future__ import annotations

import math
from typing import Any

from ragjudge.report.view import Block, Record, ReportView, generic_blocks, object_field



class SentenceRetrievalView(ReportView):
    def _systems(self, record: Record) -> dict[str, dict[str, Any]]:
        systems = object_field(record.get("systems"), "systems")
        return {name: object_field(entry, f"systems.{name}") for name, entry in systems.items()}

    def title(self, record: Record) -> str:
        """The last turn (the query most systems rank by), else the first query of any strategy."""
        queries = object_field(record.get("queries"), "queries")
        for key in ("last_turn", *queries):
            parts = queries.get(key)
            if isinstance(parts, list):
                texts = [p[1] for p in parts if isinstance(p, list) and len(p) == 2 and isinstance(p[1], str)]
                if texts:
                    return texts[-1]
        return ""

    def metrics(self, record: Record) -> dict[str, float]:
        out: dict[str, float] = {}
        for name, entry in self._systems(record).items():
            for metric, value in object_field(entry.get("tested"), f"systems.{name}.tested").items():
                if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
                    out[f"{name} {metric}"] = float(value)
        return out

    def facets(self, record: Record) -> dict[str, str | list[str]]:
        out: dict[str, str | list[str]] = {}
        if isinstance(record.get("type"), str):
            out["type"] = record["type"]
        if isinstance(record.get("n_relevant"), int) and not isinstance(record["n_relevant"], bool):
            out["relevant"] = str(record["n_relevant"])
        return out

    def judges(self, record: Record) -> dict[str, dict[str, Any]]:
        return {}  # rankers, not judges

    def errors(self, record: Record) -> dict[str, str]:
        out = super().errors(record)
        for name, entry in self._systems(record).items():
            if entry.get("error"):
                out[name] = str(entry["error"])
        return out

    def blocks(self, record: Record) -> list[Block]:
        blocks = self.error_blocks(record)
        blocks += generic_blocks(record, {"systems", "queries", "error", "errors"})
        queries = object_field(record.get("queries"), "queries")
        items = [[f"{key} ({weight:g})" if isinstance(weight, (int, float)) else key, text]
                 for key, parts in queries.items() if isinstance(parts, list)
                 for weight, text in (p for p in parts if isinstance(p, list) and len(p) == 2)]
        if items:
            blocks.append({"kind": "fields", "title": "Queries (strategy, weight)", "items": items})
        rows = []
        for name, entry in self._systems(record).items():
            tested = object_field(entry.get("tested"), f"systems.{name}.tested")
            settings = object_field(entry.get("settings"), f"systems.{name}.settings")
            shown = ", ".join(f"{k} {v:.3f}" for k, v in tested.items() if isinstance(v, (int, float))) \
                if tested else "not in any test half"
            rows.append([name, f"{shown} ({len(settings)} setting(s))"])
        if rows:
            blocks.append({"kind": "fields", "title": "Systems (tested: mean over the test halves holding it)",
                           "items": rows})
        metrics = self.metrics(record)
        if metrics:
            blocks.append({"kind": "metrics", "title": "Metrics", "items": [[k, v] for k, v in metrics.items()]})
        return blocks

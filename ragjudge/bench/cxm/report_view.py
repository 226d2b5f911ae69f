"""How `ragjudge report` shows a CXMArena run: the prediction rows as the generic view reads them, and each
task report's metrics and tables (the summary holds `reports`, not `metrics`)."""

from __future__ import annotations

from typing import Any

from ragjudge.engine.render import Table
from ragjudge.report.view import ReportView


class CxmView(ReportView):
    def summary_metrics(self, summary: dict[str, Any]) -> dict[str, dict[str, Any]]:
        """The reports' numeric metrics; with several task reports each name is prefixed by its task."""
        reports = summary.get("reports") or []
        out: dict[str, dict[str, Any]] = {}
        for report in reports:
            prefix = f"{report['task']}: " if len(reports) > 1 else ""
            for name, value in report.get("metrics", {}).items():
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    out[prefix + name] = {"mean": float(value), "n": None, "errors": None}
        return out

    def extra_tables(self, summary: dict[str, Any]) -> list[Table]:
        from ragjudge.bench.cxm.base import report_tables

        return [t for t in report_tables(summary) if t.columns != ["metric", "value"]] + super().extra_tables(summary)

    def notes(self, summary: dict[str, Any]) -> list[str]:
        return [str(n) for report in summary.get("reports") or [] for n in report.get("notes") or []] + \
            super().notes(summary)

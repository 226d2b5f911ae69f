"""How `ragjudge report` shows a CXMArena run: the prediction rows as the generic view reads them (the run as a
whole is its summary, which the overview reads through the result contract), each row checked as `cxm score`
checks a predictions file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragjudge.report.view import ReportView


class CxmView(ReportView):
    def check_record(self, record: dict[str, Any], path: Path, line: int) -> None:
        from ragjudge.bench.cxm.score.common import ROW_FIELDS, check_row

        task = self.run_info.get("task")
        if task in ROW_FIELDS:
            check_row(task, record, path, line)

"""How `ragjudge report` shows a CXMArena run: the prediction rows as the generic view reads them (the run as a
whole is its summary, which the overview reads through the result contract)."""

from __future__ import annotations

from ragjudge.report.view import ReportView


class CxmView(ReportView):
    pass

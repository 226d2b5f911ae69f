"""`ragjudge report`: one self-contained HTML file to read a run, compare systems and inspect judges (docs/report.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragjudge.report.build import BuiltReport

__all__ = ["build_report"]


def build_report(*args: Any, **kwargs: Any) -> BuiltReport:
    """See `ragjudge.report.build.build_report` (imported on use: benches import `report.view` cheaply)."""
    from ragjudge.report.build import build_report as build

    return build(*args, **kwargs)

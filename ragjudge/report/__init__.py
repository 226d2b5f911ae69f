"""`ragjudge report`: one self-contained HTML file to read a run, compare systems and inspect judges.

`load` reads run folders and results files, `view` (and a bench's own, named by `Bench.view`) says how samples are
shown, `pack` shapes the task data for the page, `overview`, `compare` and `judges` compute what the page
shows besides, `charts` draws SVG, `build` renders the page from `assets/`.
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

"""The one run engine every benchmark goes through: journals and resume, outputs, progress, rendering, and the
result contract (`summary.py`).

Names are imported on first use: `ragjudge.engine.summary` is imported by the bench interface itself, which
the runner imports in turn.
"""

from __future__ import annotations

from typing import Any

_EXPORTS = {
    "EngineOptions": "ragjudge.engine.context", "RunContext": "ragjudge.engine.context",
    "OutputPaths": "ragjudge.engine.outputs", "RunOutcome": "ragjudge.engine.runner",
    "run": "ragjudge.engine.runner",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'ragjudge.engine' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(_EXPORTS[name]), name)

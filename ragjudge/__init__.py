"""ragjudge: evaluate retrieval-augmented generation on multi-turn conversations.

The Python API (`evaluate`, `evaluate_async`, `run_bench`, `load_run`, `EvalResult`, `criterion`, and every other
command's function: `retrieve`, `evaluate_retrieval`, `correlate`, `export`, `dialsim_convert`, `dialsim_score`) is
imported on first use, so `import ragjudge` stays light (the CLI and the pytest plugin import this package first).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragjudge.version import __version__
    from ragjudge.api import (EvalResult, correlate, criterion, dialsim_convert, dialsim_score, evaluate,
                              evaluate_async, evaluate_retrieval, export, load_run, retrieve, run_bench)

__all__ = ["EvalResult", "__version__", "correlate", "criterion", "dialsim_convert", "dialsim_score", "evaluate",
           "evaluate_async", "evaluate_retrieval", "export", "load_run", "retrieve", "run_bench"]
_API = frozenset(__all__) - {"__version__"}


def __getattr__(name: str) -> Any:
    if name == "__version__":  # reading the installed metadata costs tens of milliseconds: only when asked
        from ragjudge.version import __version__

        return __version__
    if name in _API:
        import ragjudge.api

        return getattr(ragjudge.api, name)
    raise AttributeError(f"module 'ragjudge' has no attribute {name!r}")

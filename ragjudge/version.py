"""ragjudge's version, in a module of its own: what the engine records in every run.json without importing the
package's front (`ragjudge/__init__.py`, which sits above everything)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("ragjudge")
except PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0.0.0+source"

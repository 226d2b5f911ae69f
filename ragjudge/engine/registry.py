"""Benches by name: the built-in ones and third-party ones from the `ragjudge.benches` entry-point group
(docs/extending.md shows the pyproject.toml lines).

Classes are imported only when a bench is used or shown; listing the built-ins reads their cards (`bench_cards.py`).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragjudge.engine.bench_cards import CARDS, BenchCard
from ragjudge.errors import UsageError

if TYPE_CHECKING:
    from ragjudge.engine.bench import Bench

ENTRY_POINT_GROUP = "ragjudge.benches"


@dataclass(frozen=True)
class BenchEntry:
    name: str
    target: str
    """`module:Class`."""
    origin: str
    """`built-in` or the distribution that registered it."""
    card: BenchCard | None = None
    """A built-in's card; a plug-in is described by its class."""

    def load(self) -> type[Bench[Any, Any]]:
        from ragjudge.engine.bench import Bench

        module_name, _, attr = self.target.partition(":")
        try:
            cls = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError) as exc:
            raise UsageError(f"bench {self.name} ({self.origin}) cannot be loaded from {self.target}: {exc}") from None
        if not (isinstance(cls, type) and issubclass(cls, Bench)):
            raise UsageError(f"bench {self.name} ({self.origin}): {self.target} is not a ragjudge Bench class")
        return cls


def entries() -> dict[str, BenchEntry]:
    """Every bench by name; a third-party bench may not take a built-in name."""
    found = {name: BenchEntry(name, card.target, "built-in", card) for name, card in CARDS.items()}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in CARDS:
            continue
        dist = getattr(getattr(ep, "dist", None), "name", None) or "a plugin"
        found.setdefault(ep.name, BenchEntry(ep.name, ep.value, dist))
    return dict(sorted(found.items()))


def get(name: str) -> BenchEntry:
    known = entries()
    if name not in known:
        raise UsageError(f"unknown bench {name!r} (available: {', '.join(known)}; or a path to MTRAG-format "
                         f"tasks; `ragjudge benches` lists them)")
    return known[name]


def resolve(bench: str) -> tuple[type[Bench[Any, Any]], str, dict[str, Any]]:
    """`--bench VALUE` → (bench class, label for default output folders, options the value implies): a registered
    name, else an existing path of MTRAG-format tasks."""
    if bench in entries():
        return get(bench).load(), bench, {}
    path = Path(bench)
    if path.exists():
        return get("mtrag").load(), path.name, {"data": str(path)}
    if bench == "cxm":
        cxm = [n for n in entries() if n.startswith("cxm-")]
        raise UsageError(f"CXMArena tasks are separate benches: {', '.join(cxm)}")
    return get(bench).load(), bench, {}  # raises the unknown-bench error

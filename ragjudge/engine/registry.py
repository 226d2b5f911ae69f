"""Benches by name: the built-in ones and third-party ones from the `ragjudge.benches` entry-point group.

A package adds a bench with, in its pyproject.toml:

    [project.entry-points."ragjudge.benches"]
    support-chat = "my_package.bench:SupportChatBench"

Classes are imported only when a bench is used or shown, so listing benches stays fast.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from ragjudge.engine.bench import Bench
from ragjudge.errors import UsageError

ENTRY_POINT_GROUP = "ragjudge.benches"

BUILTIN: dict[str, str] = {
    "mtrag": "ragjudge.bench.mtrag.bench:MtragBench",
    "mtrag-un": "ragjudge.bench.mtrag.un.bench:MtragUnBench",
    "mtrag-retrieval": "ragjudge.bench.mtrag.retrieval.bench:MtragRetrievalBench",
    "mtrag-un-retrieval": "ragjudge.bench.mtrag.un_retrieval.bench:MtragUnRetrievalBench",
    "dialsim": "ragjudge.bench.dialsim.bench:DialSimBench",
    "cxm-intent": "ragjudge.bench.cxm.intent.bench:IntentBench",
    "cxm-quality": "ragjudge.bench.cxm.quality.bench:QualityBench",
    "cxm-tool-calls": "ragjudge.bench.cxm.tool_calls.bench:ToolCallsBench",
    "cxm-answer-classification": "ragjudge.bench.cxm.answer_classification.bench:AnswerClassificationBench",
    "cxm-kb-refinement": "ragjudge.bench.cxm.kb_refinement.bench:KbRefinementBench",
    "cxm-article-search": "ragjudge.bench.cxm.article_search.bench:ArticleSearchBench",
    "sentence-retrieval": "ragjudge.bench.sentence_retrieval.bench:SentenceRetrievalBench",
    "cdr": "ragjudge.bench.cdr.bench:CdrBench",
    "rag": "ragjudge.bench.rag.bench:RagBench",
    "cxm-multiturn-retrieval": "ragjudge.bench.cxm.multiturn_retrieval.bench:MultiTurnRetrievalBench",
}


@dataclass(frozen=True)
class BenchEntry:
    name: str
    target: str
    """`module:Class`."""
    origin: str
    """`built-in` or the distribution that registered it."""

    def load(self) -> type[Bench[Any, Any]]:
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
    found = {name: BenchEntry(name, target, "built-in") for name, target in BUILTIN.items()}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in BUILTIN:
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
    """`--bench VALUE` → (bench class, label for default output folders, options the value implies).

    A registered name wins; otherwise an existing path is MTRAG-format tasks (`--bench PATH`, as before)."""
    if bench in entries():
        return get(bench).load(), bench, {}
    path = Path(bench)
    if path.exists():
        return get("mtrag").load(), path.name, {"data": str(path)}
    if bench == "cxm":
        cxm = [n for n in entries() if n.startswith("cxm-")]
        raise UsageError(f"CXMArena tasks are separate benches: {', '.join(cxm)}")
    return get(bench).load(), bench, {}  # raises the unknown-bench error

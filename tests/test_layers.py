"""The package's layers point one way: formats and models at the bottom, engine and judges above, benches as
plug-ins, the API above them, the CLI on the API. Read from the code's own imports (every `import` and `from ...
import`, inside functions and under TYPE_CHECKING too), so a newcomer's picture of the structure is the code's."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "ragjudge"

LAYERS: list[set[str]] = [
    {"errors", "version", "defaults", "models", "normalize", "progress", "specs", "formats"},
    {"llm", "embeddings", "metrics"},
    {"retrieval", "generation", "judges"},
    {"engine"},
    {"retrieval_eval", "correlation", "trust", "report"},
    {"bench"},
    {"api", "pytest_plugin"},
    {"cli", "__main__", "__init__"},
    {"testing"},
]
"""Top-level modules and packages, bottom to top: a module may import its own layer and those below. `testing` (the
local OpenAI-compatible server, the conformance kit) sits on top: the kit drives the command line as a user does."""
UP_ALLOWED = 2
"""Imports that run up a layer: at most this many in the package, each saying why in a comment on its line or the
line above (`# up a layer: ...`)."""


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in PACKAGE.rglob("*.py")}


MAIN_TESTS = {"__name__ == '__main__'", "'__main__' == __name__"}


def imports(path: Path, known: dict[str, Path]) -> list[tuple[int, str, str]]:
    """(line, imported module, the source line) for every import of a ragjudge module in `path`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    me = module_name(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    lines = path.read_text(encoding="utf-8").splitlines()
    found = []
    # a `python -m` entry block runs only when the module is the program, never on import: not a dependency
    entry = {id(n) for block in tree.body if isinstance(block, ast.If) and ast.unparse(block.test) in MAIN_TESTS
             for n in ast.walk(block)}
    for node in ast.walk(tree):
        if id(node) in entry:
            continue
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            for alias in node.names:  # `from pkg import submodule` is an import of the submodule
                targets.append(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
        for target in targets:
            if target.split(".")[0] == "ragjudge":
                while target not in known and "." in target:
                    target = target.rpartition(".")[0]
                found.append((node.lineno, target, lines[node.lineno - 1]))
    return found


def top(name: str) -> str:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def layer_of(name: str) -> int:
    return next(i for i, layer in enumerate(LAYERS) if top(name) in layer)


def graph() -> dict[str, list[tuple[int, str, str]]]:
    known = modules()
    return {name: imports(path, known) for name, path in known.items()}


def test_every_top_level_module_has_a_layer() -> None:
    named = set().union(*LAYERS)
    assert {top(m) for m in modules()} <= named, sorted({top(m) for m in modules()} - named)


def test_the_api_never_imports_the_cli() -> None:
    bad = [f"{m}:{line} -> {t}" for m, found in graph().items() if top(m) == "api"
           for line, t, _ in found if top(t) == "cli"]
    assert not bad, bad


def test_the_lower_layers_never_import_a_bench_or_the_cli() -> None:
    lower = {"engine", "report", "judges", "correlation", "formats"}
    bad = [f"{m}:{line} -> {t}" for m, found in graph().items() if top(m) in lower
           for line, t, _ in found if top(t) in ("bench", "cli")]
    assert not bad, "\n".join(bad)


def test_bench_holds_plug_ins_only() -> None:
    loose = [p.name for p in (PACKAGE / "bench").glob("*.py") if p.name != "__init__.py"]
    assert not loose, loose


def test_imports_that_run_up_a_layer_are_few_and_say_why() -> None:
    up = []
    for m, found in graph().items():
        for line, target, text in found:
            if layer_of(target) > layer_of(m):
                above = modules()[m].read_text(encoding="utf-8").splitlines()[line - 2] if line > 1 else ""
                up.append((f"{m}:{line} -> {target}", "up a layer:" in text or "up a layer:" in above))
    assert len(up) <= UP_ALLOWED, "\n".join(u for u, _ in up)
    assert all(why for _, why in up), [u for u, why in up if not why]


def test_no_import_circle() -> None:
    edges = {m: {t for _, t, _ in found if t != m} for m, found in graph().items()}
    circles = strongly_connected(edges)
    assert not circles, "\n".join(" -> ".join(c) for c in circles)
    packages: dict[str, set[str]] = defaultdict(set)
    for m, targets in edges.items():
        packages[top(m)] |= {top(t) for t in targets if top(t) != top(m)}
    assert not ("embeddings" in packages["metrics"] and "metrics" in packages["embeddings"])


def strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm: the circles (components of more than one module)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in list(edges):
        if v not in index:
            visit(v)
    return out

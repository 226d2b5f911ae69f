"""ragas behind one adapter: every import of ragas (its private metric modules, its prompt classes) is in
`ragjudge/judges/ragas_adapter.py`, so the next ragas release is one file's work; and one `missing` helper."""

from __future__ import annotations

import ast
import math
from pathlib import Path

from ragjudge.formats.jsonl import missing

PACKAGE = Path(__file__).resolve().parents[1] / "ragjudge"
ADAPTER = PACKAGE / "judges" / "ragas_adapter.py"


def ragas_imports(path: Path) -> list[int]:
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "ragas" for a in node.names):
            lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "ragas":
            lines.append(node.lineno)
    return lines


def test_only_the_adapter_imports_ragas():
    found = {f"{p.relative_to(PACKAGE.parent)}:{line}" for p in PACKAGE.rglob("*.py") if p != ADAPTER
             for line in ragas_imports(p)}
    assert not found, f"import ragas through ragjudge.judges.ragas_adapter: {sorted(found)}"
    assert ragas_imports(ADAPTER), "the adapter imports ragas"


def test_the_adapter_turns_ragas_telemetry_off_before_importing_it():
    text = ADAPTER.read_text(encoding="utf-8")
    assert text.index('setdefault("RAGAS_DO_NOT_TRACK", "true")') < text.index("\nfrom ragas")


def test_one_missing_helper():
    defined = [f"{p.relative_to(PACKAGE.parent)}:{n.lineno}" for p in PACKAGE.rglob("*.py")
               for n in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
               if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name in ("_missing", "missing")]
    assert defined == ["ragjudge/formats/jsonl.py:" + defined[0].rsplit(":", 1)[1]], defined


def test_missing():
    assert missing(None) and missing(math.nan) and missing(float("nan"))
    assert not missing("") and not missing([]) and not missing(0) and not missing(False) and not missing("N/A")
    assert missing("", empty=True) and missing([], empty=True) and not missing(" ", empty=True)
    assert not missing([0], empty=True) and not missing(0.0, empty=True)
    assert missing(" N/A ", na=frozenset({"N/A"})) and not missing("n/a ", na=frozenset({"N/A"}))

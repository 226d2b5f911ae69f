"""The scripts in benchmarks/ keep up with the package's API: each one imports, and each with a command line
answers `--help`. Issue 42 renamed parts of the API and nothing ran the scripts afterwards, so some broke unseen;
running them is too slow for the suite, importing them is not. No benchmark runs here: a script's main is
guarded by `if __name__ == "__main__"`, and one without that guard is never executed (its imports are resolved
one by one instead)."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]
BENCHMARKS = REPO / "benchmarks"
SCRIPTS = sorted(BENCHMARKS.glob("*.py"))


def parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def has_main_guard(tree: ast.Module) -> bool:
    """A module-level `if __name__ == "__main__":` (importing the script then runs none of its work)."""
    return any(isinstance(node, ast.If) and ast.unparse(node.test) == "__name__ == '__main__'" for node in tree.body)


def has_command_line(tree: ast.Module) -> bool:
    """Builds an `argparse.ArgumentParser` somewhere (so `--help` must answer)."""
    return any(isinstance(node, ast.Call) and (
        (isinstance(node.func, ast.Attribute) and node.func.attr == "ArgumentParser")
        or (isinstance(node.func, ast.Name) and node.func.id == "ArgumentParser")) for node in ast.walk(tree))


def unresolved_imports(tree: ast.Module) -> list[str]:
    """Every absolute import of the script (module level or not) that does not resolve, as `module` or
    `module.name`, found without executing the script itself."""
    missing = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [(alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            targets = [(node.module, alias.name) for alias in node.names if alias.name != "*"]
        else:
            continue
        for module_name, name in targets:
            try:
                module = importlib.import_module(module_name)
            except ImportError:
                missing.append(module_name)
                continue
            if name is not None and not hasattr(module, name):
                try:
                    importlib.import_module(f"{module_name}.{name}")
                except ImportError:
                    missing.append(f"{module_name}.{name}")
    return missing


def load(path: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """Import a guarded script as its own module, its folder on sys.path (scripts import their siblings);
    sys.path and sys.modules are restored afterwards."""
    monkeypatch.syspath_prepend(str(path.parent))
    for sibling in path.parent.glob("*.py"):  # a sibling a script imports is loaded fresh, then dropped again
        if sibling.stem in sys.modules:
            monkeypatch.setitem(sys.modules, sibling.stem, sys.modules[sibling.stem])
        else:
            monkeypatch.setitem(sys.modules, sibling.stem, None)
            monkeypatch.delitem(sys.modules, sibling.stem)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, path.stem, module)
    spec.loader.exec_module(module)
    return module


def check_imports(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tree = parse(path)
    if has_main_guard(tree):
        load(path, monkeypatch)
    else:
        monkeypatch.syspath_prepend(str(path.parent))
        assert unresolved_imports(tree) == [], f"{path.name}: imports that no longer resolve"


def test_the_scripts_are_found() -> None:
    names = {p.stem for p in SCRIPTS}
    assert {"bench_rb_alg", "bench_batch", "retrieval_table"} <= names, sorted(names)


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.stem)
def test_script_imports(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    check_imports(path, monkeypatch)


@pytest.mark.parametrize("path", [p for p in SCRIPTS if has_command_line(parse(p))], ids=lambda p: p.stem)
def test_script_help(path: Path, tmp_path: Path) -> None:
    """The script as a user runs it, in a fresh interpreter, from another folder."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, str(path), "--help"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("usage:"), done.stdout[:500]


def test_a_name_gone_from_the_api_fails_both_checks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What caught bench_rb_alg after issue 42 (`from ragjudge.judges import JudgeItem`), with a name that never
    existed; the unguarded script is not executed (it would exit)."""
    guarded = tmp_path / "guarded" / "bench_guarded.py"
    guarded.parent.mkdir()
    guarded.write_text("from ragjudge.judges import JudgeContext, NoSuchName\n\n"
                       "if __name__ == '__main__':\n    pass\n")
    with pytest.raises(ImportError, match="NoSuchName"):
        check_imports(guarded, monkeypatch)
    unguarded = tmp_path / "unguarded" / "bench_unguarded.py"
    unguarded.parent.mkdir()
    unguarded.write_text("import sys\nfrom ragjudge.judges import JudgeContext, NoSuchName\n"
                         "from ragjudge.no_such_module import x\nsys.exit('executed')\n")
    assert unresolved_imports(parse(unguarded)) == ["ragjudge.judges.NoSuchName", "ragjudge.no_such_module"]
    with pytest.raises(AssertionError, match="no longer resolve"):
        check_imports(unguarded, monkeypatch)

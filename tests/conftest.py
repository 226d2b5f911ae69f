"""Shared test set-up: offline, no stray caches in the home folder, and a local LLM server.

Floats from models (the rule for every test, see tests/README.md): a value computed by a float32 model
(MiniLM embeddings, BERTScore, cross-encoders) or derived from one (RB_alg, dense scores, their means) changes in
its last digits between CPUs (AVX-512, AVX2, none) and BLAS builds. Such values are compared with
`model_close` (relative 1e-4), never exactly nor at 1e-6; what is exact stays exact (ROUGE, counts, ids,
ranks of well-separated scores, formulas on given inputs).
"""

from __future__ import annotations

import contextlib
from contextlib import contextmanager
import io
import math
import os
import re
import shutil
import subprocess
import tempfile
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from shared_data import SHARED_DATA, need_shared  # tests/shared_data.py: the one locator for ../shared/data

# Before anything imports litellm or transformers: no network at import, no hub downloads.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")

REPO = Path(__file__).resolve().parents[1]
SHARED_MTRAG = SHARED_DATA / "mtrag"
"""The real MTRAG development data wherever tests/shared_data.py found it ($RAGJUDGE_SHARED_DATA, else the first
shared/data above the repository). It may not exist: use the `shared_mtrag` fixture or `requires_shared`."""
MTRAG_FIXTURES = REPO / "tests" / "fixtures" / "mtrag"
"""Our own miniature of it: the same layout and formats, made-up text (tests/fixtures/mtrag/README.md)."""
MINI = REPO / "examples" / "mini"
GOLDEN = REPO / "tests" / "fixtures" / "golden"
"""Outputs written before a refactoring, which it must reproduce (model-derived values at `model_close`)."""


@pytest.fixture(scope="session", autouse=True)
def _session_cache(tmp_path_factory: pytest.TempPathFactory):
    """Module fixtures run before the per-test cache below: they (and their subprocesses) get this one. ONNX exports
    of the local model go to one folder per test process, made once, whatever cache a test uses."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RAGJUDGE_CACHE_DIR", str(tmp_path_factory.mktemp("session-cache")))
        patch.setenv("RAGJUDGE_ONNX_DIR", str(tmp_path_factory.mktemp("onnx-exports")))
        yield


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test gets its own LLM response cache unless it sets one itself."""
    monkeypatch.setenv("RAGJUDGE_CACHE_DIR", str(tmp_path_factory.mktemp("llm-cache")))


@pytest.fixture
def shared_mtrag() -> Path:
    return need_shared("mtrag")


@pytest.fixture
def llm_server():
    from ragjudge.testing.openai_server import OpenAIServer

    with OpenAIServer() as server:
        yield server


def run_cli(args: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
            ) -> tuple[int, str, str]:
    """Run the `ragjudge` entry point in-process: (exit code, stdout, stderr)."""
    from ragjudge.cli import main

    monkeypatch.setattr(sys, "argv", ["ragjudge", *args])
    with pytest.raises(SystemExit) as exit_info:
        main()
    captured = capsys.readouterr()
    return int(exit_info.value.code or 0), captured.out, captured.err


def run_cli_once(args: list[str], env: Mapping[str, str] | None = None) -> tuple[int, str, str]:
    """`run_cli` for module-scoped fixtures (no monkeypatch or capsys there): the entry point in-process with
    `env` set, sys.argv and the environment restored afterwards; (exit code, stdout, stderr)."""
    from ragjudge.cli import main

    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        for name, value in (env or {}).items():
            patch.setenv(name, value)
        patch.setattr(sys, "argv", ["ragjudge", *args])
        with pytest.raises(SystemExit) as exit_info:
            main()
    return int(exit_info.value.code or 0), out.getvalue(), err.getvalue()


@contextlib.contextmanager
def tmpfs(mount: Path, options: str, why_root: str) -> Iterator[Path]:
    """A real small file system mounted at `mount` for the block (`options`: e.g. `size=1m` or `size=1m,ro`), where
    the machine lets tests mount one (root); elsewhere the test skips with `why_root`."""
    mount.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip(why_root)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def ctrl_c_default() -> None:
    """For a subprocess a test interrupts with SIGINT: Ctrl-C acts as at a terminal, even when the suite runs
    as a background job (`cmd &` in a script starts it with SIGINT ignored, and children inherit that)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


MODEL_RTOL = 1e-4
"""Relative tolerance for model-derived floats: float32 encoders differ across CPUs by ~1e-6 relative (seen:
BertKPrec 0.915694 on AVX-512, 0.915693 on AVX2); 1e-4 holds with room, and still fails on any real change."""
MODEL_ATOL = 1e-6
"""For model-derived values near zero, where a relative tolerance means nothing."""


def model_close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=MODEL_RTOL, abs_tol=MODEL_ATOL)


def model_derived(pattern: str) -> Callable[[str], bool]:
    """A predicate on JSON paths (`/metrics/BertKPrec`, `[3]/metrics/RB_alg[0]`): True where the value came from
    a model, e.g. `model_derived(r"Bert|RB_(alg|agg)")`."""
    compiled = re.compile(pattern)
    return lambda path: bool(compiled.search(path))


def _printed_number(text: str) -> bool:
    return re.fullmatch(r"-?\d+\.\d+", text) is not None


def assert_json_equal(got: Any, want: Any, model_floats: Callable[[str], bool] = lambda path: False,
                      path: str = "") -> None:
    """Equal JSON values: exact everywhere (floats included), except at paths `model_floats` accepts: floats are
    compared with `model_close`, and a number printed as text (`"0.9329"`) may differ by one step in its last
    printed digit. The assertion names the first path that differs."""
    if isinstance(got, float) and isinstance(want, float) and model_floats(path):
        assert model_close(got, want), (path, got, want)
    elif isinstance(got, str) and isinstance(want, str) and model_floats(path) and _printed_number(want):
        step = 10.0 ** -len(want.partition(".")[2])
        assert _printed_number(got) and abs(float(got) - float(want)) <= step * 1.0001, (path, got, want)
    elif isinstance(got, dict) and isinstance(want, dict):
        assert set(got) == set(want), (path, sorted(set(got) ^ set(want)))
        for key in got:
            assert_json_equal(got[key], want[key], model_floats, f"{path}/{key}")
    elif isinstance(got, list) and isinstance(want, list):
        assert len(got) == len(want), (path, len(got), len(want))
        for i, (x, y) in enumerate(zip(got, want)):
            assert_json_equal(x, y, model_floats, f"{path}[{i}]")
    else:
        assert got == want, (path, got, want)


# -- spoiling a JSON data file the way the bench tests do (the line each error must name is fixed) ------------------

def non_utf8_on_line_3(path: Path) -> None:
    """A byte that is not UTF-8 in the 9th column of line 3."""
    lines = path.read_bytes().split(b"\n")
    lines[2] = lines[2][:8] + b"\xff" + lines[2][8:]
    path.write_bytes(b"\n".join(lines))


def truncated_in_line_4(path: Path) -> None:
    """Cut in the middle of line 4 (a copy that stopped mid-write)."""
    lines = path.read_text().split("\n")
    path.write_text("\n".join(lines[:3] + [lines[3][: len(lines[3]) // 2]]))


def folder_instead(path: Path) -> None:
    path.unlink()
    path.mkdir()


# -- permissions: as root they do not apply, so tests that need them step down ---------------------------------

NOBODY = 65534


def needed_as_nobody() -> list[Path]:
    """What a block run as `nobody` reads: the environment's site-packages (ragjudge's code, and what it imports
    lazily), ragjudge itself (an editable install lives in its checkout) and the bundled model (its own package)."""
    import sysconfig

    import ragjudge
    from ragjudge.embeddings.bertscore import bundled_model_dir

    paths = sysconfig.get_paths()
    return sorted({Path(paths["purelib"]), Path(paths["platlib"]), Path(ragjudge.__file__).parent,
                   bundled_model_dir()})


def _unreadable(paths: list[Path]) -> str | None:
    """The first of `paths` this process cannot list, or whose first file it cannot open, with the reason."""
    for path in paths:
        try:
            first = next((p for p in sorted(path.iterdir()) if p.is_file()), None)
            if first is not None:
                first.open("rb").close()
        except OSError as exc:
            return f"{exc.filename or path} ({exc.strerror})"
    return None


_CHECKED: dict[tuple[Path, ...], str | None] = {}


def unreadable_as_nobody(paths: list[Path]) -> str | None:
    """What of `paths` `nobody` cannot read (None: it reads them all); checked once per set of paths."""
    key = tuple(paths)
    if key not in _CHECKED:
        os.setegid(NOBODY)
        os.seteuid(NOBODY)
        try:
            _CHECKED[key] = _unreadable(paths)
        finally:
            os.seteuid(0)
            os.setegid(0)
    return _CHECKED[key]


@contextmanager
def unprivileged(*needs: Path) -> Iterator[None]:
    """File permissions apply to us: as root they do not, so root steps down to `nobody` for the block. Every test
    that drops privileges does it here. Where `nobody` cannot read what the block needs (`needed_as_nobody`, and
    `needs`), as when the virtual environment sits in a folder only root can read (root's home), the test is skipped,
    saying what it cannot read, rather than failing on a model or module it cannot load."""
    if os.geteuid() != 0:
        yield
        return
    problem = unreadable_as_nobody([*needed_as_nobody(), *needs])
    if problem is not None:
        pytest.skip(f"this test steps down to the user nobody (uid {NOBODY}), who cannot read {problem}: the "
                    "environment sits in a folder only root can read; run the suite from a readable place, or as a "
                    "user other than root")
    os.setegid(NOBODY)
    os.seteuid(NOBODY)
    try:
        yield
    finally:
        os.seteuid(0)
        os.setegid(0)


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A folder every user may traverse (pytest's tmp_path is private to its owner)."""
    folder = Path(tempfile.mkdtemp(prefix="ragjudge-os-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)

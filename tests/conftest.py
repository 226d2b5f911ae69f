"""Shared test set-up: offline, no stray caches in the home folder, and a local LLM server."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# Before anything imports litellm or transformers: no network at import, no hub downloads.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")

REPO = Path(__file__).resolve().parents[1]
SHARED_MTRAG = REPO.parent / "shared" / "data" / "mtrag"
MINI = REPO / "examples" / "mini"


@pytest.fixture(scope="session", autouse=True)
def _session_cache(tmp_path_factory: pytest.TempPathFactory):
    """Module fixtures run before the per-test cache below: they (and their subprocesses) get this one."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RAGJUDGE_CACHE_DIR", str(tmp_path_factory.mktemp("session-cache")))
        yield


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test gets its own LLM response cache unless it sets one itself."""
    monkeypatch.setenv("RAGJUDGE_CACHE_DIR", str(tmp_path_factory.mktemp("llm-cache")))


@pytest.fixture
def shared_mtrag() -> Path:
    if not SHARED_MTRAG.is_dir():
        pytest.skip("shared MTRAG data (../shared/data/mtrag) is not present")
    return SHARED_MTRAG


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


def ctrl_c_default() -> None:
    """For a subprocess a test interrupts with SIGINT: Ctrl-C acts as at a terminal, even when the suite runs
    as a background job (`cmd &` in a script starts it with SIGINT ignored, and children inherit that)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)

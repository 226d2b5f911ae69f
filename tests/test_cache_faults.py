"""`ragjudge cache info` and `cache clear` over every kind of cache folder a user may have (issue 36): read-only,
unreadable, a file for the folder, another program's file where the store goes (text, image, SQLite), a damaged
store, and two clears at once. Whatever the case: no internal error, one line for a refusal, the right exit code
(2 the input, 3 the machine), and a file that is not ragjudge's is never deleted."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from conftest import run_cli, unprivileged
from ragjudge.embeddings.spaces import VectorSpace
from ragjudge.embeddings.store import STORE_FILE, EmbeddingStore
from test_embedding_store import damage


def populated(folder: Path) -> None:
    store = EmbeddingStore(folder)
    VectorSpace(store, {"m": 1}, "m").put(["a", "b", "c"], np.ones((3, 4), dtype=np.float32))
    store.close()
    (folder / "indexes" / "bm25-x").mkdir(parents=True)
    (folder / "llm-responses.sqlite").write_bytes(b"")


def foreign_sqlite(path: Path) -> None:
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE notes (x)")
    db.commit()
    db.close()


NOT_OURS: dict[str, Callable[[Path], None]] = {
    "text": lambda p: p.write_text("my notes\n" * 50),
    "png": lambda p: p.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(300)),
    "sqlite": foreign_sqlite,
    "folder": lambda p: p.mkdir(),
}


def no_crash(err: str) -> None:
    assert "internal error" not in err and "Traceback" not in err, err


@pytest.mark.parametrize("kind", sorted(NOT_OURS))
@pytest.mark.parametrize("command", [["info"], ["info", "--format", "json"], ["clear"], ["clear", "--older-than", "1d"]])
def test_a_file_that_is_not_ragjudges_is_never_deleted(kind: str, command: list[str], tmp_path: Path, monkeypatch,
                                                      capsys) -> None:
    target = tmp_path / STORE_FILE
    NOT_OURS[kind](target)
    before = target.read_bytes() if target.is_file() else None
    code, out, err = run_cli(["cache", *command, "--cache-dir", str(tmp_path)], monkeypatch, capsys)
    no_crash(err)
    assert target.exists() and (before is None or target.read_bytes() == before)
    assert code == 2 and err.count("\n") == 1 and str(target) in err, err


@pytest.mark.parametrize("command", [["info"], ["clear"], ["clear", "--older-than", "1d"]])
def test_a_file_given_for_the_folder_is_one_line(command: list[str], tmp_path: Path, monkeypatch, capsys) -> None:
    file = tmp_path / "cache.txt"
    file.write_text("x")
    code, _, err = run_cli(["cache", *command, "--cache-dir", str(file)], monkeypatch, capsys)
    assert code == 2 and err == f"error: {file}: field '--cache-dir': is a file, expected the cache folder\n"
    assert file.read_text() == "x"


def test_a_damaged_store_is_refused_by_info_and_removed_by_clear(tmp_path: Path, monkeypatch, capsys) -> None:
    damage(tmp_path)
    code, _, err = run_cli(["cache", "info", "--cache-dir", str(tmp_path)], monkeypatch, capsys)
    assert code == 2 and "not a usable ragjudge embedding store" in err and err.count("\n") == 1
    code, out, err = run_cli(["cache", "clear", "--cache-dir", str(tmp_path)], monkeypatch, capsys)
    assert code == 0 and not (tmp_path / STORE_FILE).exists(), err


def test_a_read_only_cache_can_be_looked_at_but_not_cleared(open_dir: Path, monkeypatch, capsys) -> None:
    cache = open_dir / "cache"
    populated(cache)
    code, want, err = run_cli(["cache", "info", "--cache-dir", str(cache), "--format", "json"], monkeypatch, capsys)
    assert code == 0, err
    for path in [cache, *cache.rglob("*")]:
        path.chmod(0o555 if path.is_dir() else 0o444)
    try:
        with unprivileged():
            code, out, err = run_cli(["cache", "info", "--cache-dir", str(cache), "--format", "json"], monkeypatch,
                                     capsys)
            assert code == 0 and err == "", err  # looking needs no write, and warns of nothing
            assert json.loads(out)["embeddings"]["spaces"][0]["entries"] == 3
            for command in (["clear"], ["clear", "--older-than", "1d"]):
                code, _, err = run_cli(["cache", *command, "--cache-dir", str(cache)], monkeypatch, capsys)
                no_crash(err)
                assert code == 3 and err.count("\n") == 1 and str(cache) in err, err
    finally:
        for path in [cache, *cache.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
    assert (cache / STORE_FILE).exists()


def test_an_unreadable_cache_is_exit_3(open_dir: Path, monkeypatch, capsys) -> None:
    cache = open_dir / "cache"
    populated(cache)
    cache.chmod(0o000)
    try:
        with unprivileged():
            for command in (["info"], ["clear"]):
                code, _, err = run_cli(["cache", *command, "--cache-dir", str(cache)], monkeypatch, capsys)
                no_crash(err)
                assert code == 3 and err.count("\n") == 1 and str(cache) in err, err
    finally:
        cache.chmod(0o755)


def test_two_clears_at_once_both_finish(tmp_path: Path) -> None:
    populated(tmp_path)
    for n in range(40):
        (tmp_path / "indexes" / f"index-{n}").mkdir()
        (tmp_path / "indexes" / f"index-{n}" / "data").write_bytes(bytes(10_000))
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    args = [sys.executable, "-m", "ragjudge", "cache", "clear", "--cache-dir", str(tmp_path)]
    procs = [subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for _ in range(2)]
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        no_crash(err)
        assert proc.returncode == 0, err
    assert not (tmp_path / STORE_FILE).exists() and list((tmp_path / "indexes").iterdir()) == []

"""Faults of the machine, not of the input: a read-only output folder (permissions), an unreadable input, a full
disk (a real tiny tmpfs where the tests may mount one, and an fsync that reports ENOSPC everywhere), a full or
unusable response cache, an output folder removed during a run. Each is one line naming the path and the OS
reason, exit 3 (never "internal error", never exit 1); a cache that cannot be written only warns."""

from __future__ import annotations

import errno
import gc
import json
import os
import re
import shutil
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import MINI, run_cli, tmpfs, unprivileged

@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    with tmpfs(tmp_path / "disk", "size=1m",
               "mounting a tiny tmpfs needs root; the ENOSPC tests below cover the same path everywhere") as mount:
        yield mount


def fill(disk: Path) -> None:
    """Leave no free byte on `disk`."""
    with (disk / "filler").open("wb", buffering=0) as fh:
        try:
            while True:
                fh.write(b"\0" * 4096)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC


def _one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip() and line.startswith("error")]
    assert len(lines) == 1, err
    assert "internal error" not in err and "Traceback" not in err and "this is a bug" not in err, err
    return lines[0]


def _eval(out: Path, *extra: str) -> list[str]:
    return ["eval", "--bench", str(MINI), "--gen", "extractive", "--judges", "idk_lexical", "--limit", "6",
            "--out", str(out), *extra]


# ----------------------------------------------------------------------------------- permissions

def test_read_only_output_folder_is_exit_3_naming_the_folder(
        open_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(_eval(open_dir / "warm"), monkeypatch, capsys)  # imports done while we may read them
    assert code == 0, err
    locked = open_dir / "locked"
    locked.mkdir(mode=0o555)
    locked.chmod(0o555)
    with unprivileged():
        code, _, err = run_cli(_eval(locked / "run"), monkeypatch, capsys)
    assert code == 3
    assert _one_error_line(err) == (f"error: {locked / 'run'}: cannot write: permission denied (EACCES) in "
                                    f"folder {locked}")
    # a journal made read-only in a run folder we may write: the OS says no at the first append, also exit 3
    run = open_dir / "run"
    code, _, err = run_cli(_eval(run), monkeypatch, capsys)
    assert code == 0
    run.chmod(0o777)
    for path in run.iterdir():
        path.chmod(0o666)
    (run / "predictions.jsonl").chmod(0o444)
    with unprivileged():
        code, _, err = run_cli(_eval(run, "--limit", "8"), monkeypatch, capsys)
    assert code == 3
    assert _one_error_line(err) == (f"error: {run / 'predictions.jsonl'}: cannot write the journal: Permission "
                                    "denied (EACCES)")


def test_read_only_file_system_is_named_as_such(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """A read-only mount refuses root too; the reason given is the file system's, not "permission denied"."""
    with tmpfs(tmp_path / "ro", "size=1m,ro", "mounting a read-only tmpfs needs root") as mount:
        code, _, err = run_cli(_eval(mount / "run"), monkeypatch, capsys)
    assert code == 3
    assert _one_error_line(err) == (f"error: {mount / 'run'}: cannot write: read-only file system (EROFS) in "
                                    f"folder {mount}")


def test_a_second_judge_on_the_same_results_file_names_that_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from ragjudge.engine.outputs import OutputLock, OutputPaths

    out = tmp_path / "scored.jsonl"
    with OutputLock(OutputPaths.beside(out).lock):  # another run holds it
        code, _, err = run_cli(["judge", str(Path(__file__).parent / "fixtures" / "golden" / "mini_results.jsonl"),
                                "--out", str(out)], monkeypatch, capsys)
    assert code == 2
    assert _one_error_line(err) == (f"error: {out} is in use by another ragjudge run (pid {os.getpid()}); wait for "
                                    "it to finish or pass another --out")


def test_a_second_retrieve_on_the_same_run_file_stops_before_indexing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Two retrieves writing one run file would both pay for every rewrite: the second stops at once."""
    from ragjudge.engine.outputs import OutputLock

    out = tmp_path / "run.jsonl"
    args = ["retrieve", "--queries", str(MINI / "tasks.jsonl"), "--corpus", str(MINI / "corpus.jsonl"),
            "--pipeline", "bm25", "--index-dir", str(tmp_path / "indexes"), "--out", str(out)]
    with OutputLock(tmp_path / "run.lock"):  # another retrieve holds it
        code, _, err = run_cli(args, monkeypatch, capsys)
    assert code == 2
    assert _one_error_line(err) == (f"error: {out} is in use by another ragjudge run (pid {os.getpid()}); wait for "
                                    "it to finish or pass another --out")
    assert not (tmp_path / "indexes").exists() and not out.exists()
    code, _, err = run_cli(args, monkeypatch, capsys)  # once it is free, the same command runs
    assert code == 0, err
    assert out.exists()


def test_unreadable_input_is_exit_3_naming_the_file(
        open_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    open_dir.chmod(0o777)
    tasks = open_dir / "tasks.jsonl"
    shutil.copy(MINI / "tasks.jsonl", tasks)
    code, _, err = run_cli(["eval", "--bench", str(tasks), "--gen", "extractive", "--judges", "idk_lexical",
                            "--out", str(open_dir / "warm")], monkeypatch, capsys)
    assert code == 0, err
    tasks.chmod(0o000)
    with unprivileged():
        code, _, err = run_cli(["eval", "--bench", str(tasks), "--gen", "extractive", "--judges", "idk_lexical",
                                "--out", str(open_dir / "run")], monkeypatch, capsys)
    assert code == 3
    assert _one_error_line(err) == f"error: {tasks}: cannot read: Permission denied (EACCES)"


# ----------------------------------------------------------------------------------- full disk

def test_full_disk_under_the_output_is_exit_3_naming_the_file(
        tiny_disk: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    (tiny_disk / "out").mkdir()
    fill(tiny_disk)
    code, _, err = run_cli(_eval(tiny_disk / "out" / "run"), monkeypatch, capsys)
    assert code == 3
    line = _one_error_line(err)
    assert line.startswith(f"error: {tiny_disk / 'out' / 'run'}/") and line.endswith("No space left on device (ENOSPC)")


def test_full_disk_under_report_csv_and_per_query_files_names_the_file_and_leaves_the_old_one(
        tiny_disk: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Every final file is written beside itself and renamed: a full disk leaves the previous file whole and no
    temporary file behind, and the error names the file."""
    human = Path(__file__).parent / "fixtures" / "inspectorraget" / "human_eval.json"
    run = tiny_disk.parent / "run"
    code, _, err = run_cli(_eval(run), monkeypatch, capsys)
    assert code == 0, err
    qrels = tiny_disk.parent / "qrels.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\nmini-c01::1\tastro-mars-0\t1\n")
    retrieval = tiny_disk.parent / "retrieval.jsonl"
    retrieval.write_text(json.dumps({"task_id": "mini-c01::1", "Collection": "mini", "contexts": [
        {"document_id": "astro-mars-0", "score": 1.0}]}) + "\n")
    targets = {"report": (tiny_disk / "report.html", ["report", str(run), "--out", str(tiny_disk / "report.html")]),
               "csv": (tiny_disk / "c.csv", ["correlate", str(human), "--bootstrap", "0", "--csv",
                                             str(tiny_disk / "c.csv")]),
               "per-query": (tiny_disk / "pq.csv", ["retrieval-eval", str(retrieval), "--qrels", str(qrels),
                                                    "--per-query", str(tiny_disk / "pq.csv")])}
    for path, _ in targets.values():
        path.write_text("the previous file\n")
    fill(tiny_disk)
    for name, (path, args) in targets.items():
        code, _, err = run_cli(args, monkeypatch, capsys)
        assert code == 3, (name, err)
        line = _one_error_line(err)
        assert line.startswith(f"error: {path}: ") and line.endswith("No space left on device (ENOSPC)"), line
        assert path.read_text() == "the previous file\n", name
    assert sorted(p.name for p in tiny_disk.iterdir()) == ["c.csv", "filler", "pq.csv", "report.html"]


def fsync_fails_after(n: int):  # noqa: ANN201 - a replacement for os.fsync
    """os.fsync that syncs `n` times, then reports a full disk (ENOSPC) as the OS would."""
    real_fsync, calls = os.fsync, []

    def fsync(fd: int) -> None:
        calls.append(fd)
        if len(calls) > n:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_fsync(fd)

    return fsync


def test_disk_full_at_a_journal_write_is_exit_3_and_finished_work_is_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The same fault on any machine: the OS refuses the journal's fsync after three records (ENOSPC)."""
    real_fsync, fsync = os.fsync, fsync_fails_after(3)
    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setenv("RAGJUDGE_FSYNC_SECONDS", "0")  # a sync per record, so the fault hits an append
    out = tmp_path / "run"
    code, _, err = run_cli(_eval(out), monkeypatch, capsys)
    assert code == 3
    assert _one_error_line(err) == (f"error: {out / 'predictions.jsonl'}: cannot write the journal: No space left "
                                    "on device (ENOSPC)")
    kept = (out / "predictions.jsonl").read_text().splitlines()
    assert len(kept) >= 3 and all(json.loads(line)["stage"] == "solve" for line in kept[:3])
    monkeypatch.setattr(os, "fsync", real_fsync)
    code, _, err = run_cli(_eval(out), monkeypatch, capsys)  # space again: the rerun resumes and finishes
    assert code == 0, err


def test_disk_full_while_llm_calls_are_in_flight_stops_cleanly(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Calls still in flight when the run stops are cancelled: one error line, no "coroutine ... was never
    awaited" noise from litellm's worker threads."""
    from ragjudge.testing.openai_server import OpenAIServer, Reply

    fsync = fsync_fails_after(3)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setenv("RAGJUDGE_FSYNC_SECONDS", "0")  # a sync per record, so the fault hits an append
    with OpenAIServer(lambda request: Reply(content="An answer.", delay=0.2)) as server, \
            warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code, _, err = run_cli(_llm_eval(server.base_url, tmp_path / "run", tmp_path / "cache", limit=20),
                               monkeypatch, capsys)
        _no_unawaited_coroutines(caught)
    assert code == 3
    assert "cannot write the journal: No space left on device (ENOSPC)" in _one_error_line(err)


# ----------------------------------------------------------------------------------- the response cache

def _llm_eval(server_url: str, out: Path, cache: Path, limit: int = 6) -> list[str]:
    return ["eval", "--bench", str(MINI), "--gen", "openai/gen-a", "--api-base", server_url, "--judges",
            "idk_lexical", "--limit", str(limit), "--cache-dir", str(cache), "--out", str(out)]


def _no_unawaited_coroutines(caught: list[warnings.WarningMessage]) -> None:
    gc.collect()
    assert not [w for w in caught if "never awaited" in str(w.message)], [str(w.message) for w in caught]


def test_full_disk_under_the_cache_warns_once_and_the_run_goes_on(
        tiny_disk: Path, tmp_path: Path, llm_server, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    import sqlite3

    from ragjudge.llm.cache import ResponseCache

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    cache = tiny_disk / "cache"
    ResponseCache(cache).close()
    held = sqlite3.connect(cache / "llm-responses.sqlite")  # keeps its -wal/-shm: writes fail, reads work
    held.execute("PRAGMA journal_mode=WAL")
    held.execute("INSERT INTO responses VALUES ('k', 'm', '{}')")
    held.commit()
    fill(tiny_disk)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            code, _, err = run_cli(_llm_eval(llm_server.base_url, tmp_path / "run", cache), monkeypatch, capsys)
            _no_unawaited_coroutines(caught)
    finally:
        held.close()
    assert code == 0, err
    warned = [line for line in err.splitlines() if line.startswith("warning: the LLM response cache")]
    assert len(warned) == 1 and "cannot be written (database or disk is full)" in warned[0], err
    results = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert len(results) == 6 and all(r["predictions"][0]["text"] for r in results)
    assert len(llm_server.requests) == 6


def test_cache_that_cannot_be_opened_warns_once_and_the_run_goes_on(
        tmp_path: Path, llm_server, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder should be\n")
    code, _, err = run_cli(_llm_eval(llm_server.base_url, tmp_path / "run", blocker), monkeypatch, capsys)
    assert code == 0, err
    warned = [line for line in err.splitlines() if line.startswith("warning: the LLM response cache")]
    assert len(warned) == 1 and "cannot be opened" in warned[0] and "the cache off" in warned[0]
    assert len((tmp_path / "run" / "results.jsonl").read_text().splitlines()) == 6


def test_read_only_cache_folder_still_answers_what_it_holds(
        open_dir: Path, llm_server, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    cache = open_dir / "cache"
    code, _, err = run_cli(_llm_eval(llm_server.base_url, open_dir / "first", cache, limit=4), monkeypatch, capsys)
    assert code == 0 and len(llm_server.requests) == 4, err
    cache.chmod(0o555)
    (cache / "llm-responses.sqlite").chmod(0o444)
    out = open_dir / "second"
    out.mkdir(mode=0o777)
    out.chmod(0o777)
    with unprivileged():
        code, _, err = run_cli(_llm_eval(llm_server.base_url, out / "run", cache, limit=6), monkeypatch, capsys)
    assert code == 0, err
    warned = [line for line in err.splitlines() if line.startswith("warning: the LLM response cache")]
    assert len(warned) == 1 and "the cache read-only" in warned[0], err
    assert len(llm_server.requests) == 4 + 2  # the 4 known answers came from the read-only cache


def test_an_embedding_cache_that_cannot_be_written_is_one_warning_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "embeddings.sqlite").mkdir()  # a folder where the embedding store's file should be
    code, _, err = run_cli(["eval", "--bench", str(MINI), "--gen", "extractive", "--judges", "rb_alg", "--limit", "3",
                            "--cache-dir", str(cache), "--out", str(tmp_path / "run")], monkeypatch, capsys)
    assert code == 0, err
    warned = [line for line in err.splitlines() if "embedding cache off" in line]
    assert len(warned) == 1 and warned[0].startswith("warning: embedding cache off: "), err
    assert "EmbeddingCacheWarning" not in err and ".py:" not in err, err


def test_cache_factory_returns_none_for_an_unusable_folder(tmp_path: Path) -> None:
    from ragjudge.llm import open_cache

    said: list[str] = []
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert open_cache(blocker, warn=said.append) is None
    assert len(said) == 1 and str(blocker) in said[0]
    cache = open_cache(tmp_path / "ok", warn=said.append)
    assert cache is not None and len(said) == 1
    cache.put("k", "m", {"text": "t"})
    assert cache.get("k") == {"text": "t"}
    cache.close()


# ----------------------------------------------------------------------------------- a folder that vanishes

def test_output_folder_removed_during_a_run_is_not_a_crash(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from ragjudge.testing.openai_server import OpenAIServer, Reply

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    out = tmp_path / "run"
    with OpenAIServer(lambda request: Reply(content="An answer.", delay=0.3)) as server:
        def remove_soon() -> None:
            time.sleep(1.0)
            shutil.rmtree(out, ignore_errors=True)

        remover = threading.Thread(target=remove_soon)
        remover.start()
        code, _, err = run_cli(_llm_eval(server.base_url, out, tmp_path / "cache", limit=10) + ["--concurrency", "2"],
                               monkeypatch, capsys)
        remover.join()
    assert code in (0, 3), err
    if code == 3:
        _one_error_line(err)
    else:  # the folder is made again for the final files: the results are whole
        assert len((out / "results.jsonl").read_text().splitlines()) == 10
    assert "internal error" not in err


def test_judge_on_a_read_only_cache_folder_warns_once(
        open_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 36: `judge` with a read-only cache folder printed the same "embedding cache off" warning twice."""
    cache = open_dir / "cache"
    cache.mkdir()
    code, _, err = run_cli(["eval", "--bench", str(MINI), "--gen", "extractive", "--limit", "3",
                            "--cache-dir", str(open_dir / "other-cache"), "--out", str(open_dir / "run")],
                           monkeypatch, capsys)
    assert code == 0, err
    cache.chmod(0o555)
    out = open_dir / "judged"
    out.mkdir(mode=0o777)
    out.chmod(0o777)
    with unprivileged():
        code, _, err = run_cli(["judge", str(open_dir / "run" / "results.jsonl"), "--judges", "rb_alg",
                                "--cache-dir", str(cache), "--out", str(out / "judged.jsonl")], monkeypatch, capsys)
    assert code == 0, err
    warned = [line for line in err.splitlines() if "cache off" in line or "read-only" in line]
    assert len(warned) == 1, err


def test_a_test_that_steps_down_skips_when_nobody_cannot_read_the_environment(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 41, item 6: with the virtual environment in a folder only root can read, a test that stepped down to
    `nobody` could not load the bundled model (exit 3). Every such test goes through `conftest.unprivileged`, which
    checks what `nobody` can read (site-packages, ragjudge, the bundled model) and skips saying what it cannot."""
    import sysconfig

    import conftest

    if os.geteuid() != 0:
        pytest.skip("as a user other than root nothing steps down: file permissions already apply")
    venv = tmp_path / "venv" / "lib" / "python3" / "site-packages"  # tmp_path: only its owner, root, may enter
    venv.mkdir(parents=True)
    (venv / "module.py").write_text("")
    paths = {**sysconfig.get_paths(), "purelib": str(venv)}
    monkeypatch.setattr(sysconfig, "get_paths", lambda *a, **k: paths)
    assert venv in conftest.needed_as_nobody()
    with pytest.raises(pytest.skip.Exception, match=rf"cannot read {re.escape(str(tmp_path))}.* \(Permission denied\)"):
        with unprivileged():
            raise AssertionError("ran as nobody")
    assert os.geteuid() == 0 and os.getegid() == 0
    with pytest.raises(pytest.skip.Exception, match="Permission denied"):  # what a test names itself, too
        with unprivileged(tmp_path / "venv"):
            raise AssertionError("ran as nobody")

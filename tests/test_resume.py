"""Kill a judging run midway, rerun it: every task exactly once, no finished LLM call repeated."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from conftest import ctrl_c_default
from ragjudge.testing.openai_server import OpenAIServer, Request

N_TASKS = 40
CONCURRENCY = 2
"""Fixed: at most this many calls are in flight when the run is killed."""


def responder(request: Request) -> str:
    return "no" if "[Output]" in request.prompt else "Rating: [[7]]"


def write_predictions(path: Path) -> None:
    with path.open("w") as fh:
        for i in range(N_TASKS):
            fh.write(json.dumps({
                "task_id": f"c{i}::1", "input": [{"speaker": "user", "text": f"question number {i}?"}],
                "targets": [{"speaker": "agent", "text": f"answer {i}"}], "answerability": ["ANSWERABLE"],
                "contexts": [{"document_id": f"d{i}", "text": f"passage {i}", "score": 1.0}],
                "predictions": [{"text": f"response {i}"}],
            }) + "\n")


def start(server: OpenAIServer, source: Path, out: Path, cache: Path) -> subprocess.Popen:
    env = {**os.environ, "RAGJUDGE_CACHE_DIR": str(cache), "OPENAI_API_KEY": "sk-test"}
    return subprocess.Popen(
        [sys.executable, "-m", "ragjudge", "judge", str(source), "--judges", "idk,rb_llm", "--judge-models",
         "openai/a,openai/b", "--api-base", server.base_url, "--concurrency", str(CONCURRENCY), "--fixed-concurrency",
         "--out", str(out), "--format", "json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, preexec_fn=ctrl_c_default,
    )


def wait_for_journal_lines(journal: Path, n: int, timeout: float = 60) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if journal.exists() and journal.read_text().count("\n") >= n:
            return
        time.sleep(0.05)
    raise AssertionError(f"journal never reached {n} lines")


def request_keys(server: OpenAIServer) -> Counter:
    return Counter((r.model, json.dumps(r.messages)) for r in server.requests)


def test_kill_midway_then_resume(tmp_path: Path) -> None:
    source = tmp_path / "preds.jsonl"
    write_predictions(source)
    out = tmp_path / "out.jsonl"
    journal = tmp_path / "out.judgements.jsonl"
    with OpenAIServer(responder, latency=0.05) as server:
        proc = start(server, source, out, tmp_path / "cache")
        wait_for_journal_lines(journal, 16)  # the first chunk of IDK judgements is saved
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        assert not out.exists()  # killed before the end: no results file yet
        sent_before = len(server.requests)
        assert sent_before < N_TASKS * 3  # really stopped midway (40 IDK + 80 panel calls in all)

        proc = start(server, source, out, tmp_path / "cache")
        stdout, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 0, stderr

        rows = [json.loads(line) for line in out.read_text().splitlines()]
        assert sorted(r["task_id"] for r in rows) == sorted(f"c{i}::1" for i in range(N_TASKS))
        assert all(r["metrics"]["RB_llm"] == [0.7] and r["metrics"]["idk_eval"] == [0.0] for r in rows)
        # Every distinct call reached the server once, except calls in flight when the process was killed.
        repeated = sum(n - 1 for n in request_keys(server).values())
        assert repeated <= CONCURRENCY
        assert len(request_keys(server)) == N_TASKS * 3
        assert json.loads(stdout)["n_samples"] == N_TASKS


def test_ctrl_c_saves_work_and_says_how_to_resume(tmp_path: Path) -> None:
    source = tmp_path / "preds.jsonl"
    write_predictions(source)
    out = tmp_path / "out.jsonl"
    with OpenAIServer(responder, latency=0.05) as server:
        proc = start(server, source, out, tmp_path / "cache")
        wait_for_journal_lines(tmp_path / "out.judgements.jsonl", 16)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=30)
        assert proc.returncode == 130
        assert "Traceback" not in stderr and "rerun the same command to resume" in stderr
        done = (tmp_path / "out.judgements.jsonl").read_text().count("\n")
        assert done >= 16

"""`ragjudge judge --batch` end to end, through litellm's files + batches calls against the local server: the same
results as direct calls, a run killed with SIGKILL while its batches are in progress resumes without submitting
anything twice (including a batch created but never journaled), RL_F's two stages as two batches, unparsable
answers never reused, and the flag refused where it cannot work."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from conftest import run_cli
from test_rl_f import judge_model

from ragjudge.testing.openai_server import OpenAIServer, Request

N_TASKS = 6
EXAMPLE_CXM = Path(__file__).resolve().parents[1] / "examples" / "cxm"


def predictions(path: Path, n: int = N_TASKS) -> Path:
    path.write_text("".join(json.dumps({
        "task_id": f"c{i}::1", "input": [{"speaker": "user", "text": f"Where is landmark number {i}?"}],
        "targets": [{"speaker": "agent", "text": f"Landmark {i} is in Paris."}], "answerability": ["ANSWERABLE"],
        "contexts": [{"document_id": f"d{i}", "text": f"Landmark {i} is in Paris. It was built in 18{i}0.",
                      "score": 1.0}],
        "predictions": [{"text": f"Landmark {i} is in Paris. It is blue."}]}) + "\n" for i in range(n)))
    return path


def judge(request: Request) -> str:
    """IDK: 'no'; RB_llm: a rating that depends on the task and the judge model, so results can differ."""
    if "[The Start of Reference Answer]" not in request.prompt:
        return "no"
    task = int(request.prompt.split("landmark number ", 1)[1].split("?", 1)[0])
    return f"Fine.\nRating: [[{(task + (3 if request.model == 'b' else 0)) % 10 + 1}]]"


def judge_args(source: Path, out: Path, server: OpenAIServer, *extra: str) -> list[str]:
    return ["judge", str(source), "--judges", "idk,rb_llm", "--judge-models", "openai/a,openai/b",
            "--api-base", server.base_url, "--out", str(out), "--format", "json", *extra]


def metrics(out: Path) -> dict[str, dict]:
    return {row["task_id"]: row["metrics"] for row in map(json.loads, out.read_text().splitlines())}


def test_a_batch_run_gives_the_results_of_direct_calls_and_records_its_usage(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    source = predictions(tmp_path / "preds.jsonl")
    with OpenAIServer(judge, batch_delay=0.3) as server:
        monkeypatch.setenv("RAGJUDGE_CACHE_DIR", str(tmp_path / "direct-cache"))
        code, direct_out, err = run_cli(judge_args(source, tmp_path / "direct.jsonl", server), monkeypatch, capsys)
        assert code == 0, err
        direct_calls = server.chat_count()
        monkeypatch.setenv("RAGJUDGE_CACHE_DIR", str(tmp_path / "batch-cache"))
        code, batch_out, err = run_cli(judge_args(source, tmp_path / "batched.jsonl", server, "--batch"),
                                       monkeypatch, capsys)
        assert code == 0, err
        assert server.chat_count() == direct_calls == 3 * N_TASKS  # the batch run made no direct call
        assert len(server.batches.submitted) == 3 * N_TASKS and len(server.batches.batches) == 2  # one per model
    assert json.loads(batch_out)["metrics"] == json.loads(direct_out)["metrics"]
    assert metrics(tmp_path / "batched.jsonl") == metrics(tmp_path / "direct.jsonl")
    run = json.loads((tmp_path / "batched.run.json").read_text())
    assert run["engine"]["batch"] is True
    assert {m: (u["requests"], u["batched"], u["calls"]) for m, u in run["usage"].items()} == \
        {"openai/a": (12, 12, 12), "openai/b": (6, 6, 6)}
    assert sorted(b["status"] for b in run["batches"].values()) == ["completed", "completed"]
    journal = [json.loads(line) for line in (tmp_path / "batched.batches.jsonl").read_text().splitlines()]
    assert [e["event"] for e in journal].count("finished") == 2


def _start(source: Path, out: Path, server: OpenAIServer, cache: Path) -> subprocess.Popen:
    env = {**os.environ, "RAGJUDGE_CACHE_DIR": str(cache), "OPENAI_API_KEY": "sk-test"}
    return subprocess.Popen([sys.executable, "-m", "ragjudge", *judge_args(source, out, server, "--batch")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def test_a_batch_run_killed_with_sigkill_resumes_without_submitting_anything_twice(tmp_path: Path) -> None:
    source = predictions(tmp_path / "preds.jsonl")
    out, journal = tmp_path / "out.jsonl", tmp_path / "out.batches.jsonl"
    with OpenAIServer(judge, batch_delay=6.0) as server:
        proc = _start(source, out, server, tmp_path / "cache")
        deadline = time.time() + 120
        while time.time() < deadline and (not journal.exists() or journal.read_text().count("\n") < 2):
            assert proc.poll() is None, proc.communicate()[1]
            time.sleep(0.05)
        assert all(b["status"] == "in_progress" for b in server.batches.batches.values())
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        assert not out.exists() and len(server.batches.submitted) == 3 * N_TASKS
        # The second batch as if the kill had come between its creation and its journal line:
        first, _ = journal.read_text().splitlines()
        journal.write_text(first + "\n")

        proc = _start(source, out, server, tmp_path / "cache")
        stdout, stderr = proc.communicate(timeout=180)
        assert proc.returncode == 0, stderr
        submitted = Counter(server.batches.submitted)
        assert len(submitted) == 3 * N_TASKS and set(submitted.values()) == {1}  # nothing submitted twice
        assert server.chat_count() == 0 and len(server.batches.batches) == 2
    summary = json.loads(stdout)
    assert summary["metrics"]["RB_llm"]["n"] == N_TASKS and summary["metrics"]["RB_llm"]["errors"] == 0
    assert summary["metrics"]["idk_eval"]["n"] == N_TASKS
    rows = metrics(out)
    assert rows["c0::1"]["RB_llm"] == [pytest.approx(0.25)]  # the median of judge a (1/10) and b (4/10)
    run = json.loads((tmp_path / "out.run.json").read_text())
    assert sorted(b["resumed"] for b in run["batches"].values()) == [True, True]
    usage = run["usage"]  # every invocation: the run paid for each request once
    assert sum(u["requests"] for u in usage.values()) == 3 * N_TASKS
    assert sum(u["calls"] for u in usage.values()) == 3 * N_TASKS
    assert '"adopted": true' in journal.read_text()


def test_rl_f_statements_then_verdicts_are_two_batches(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    source = predictions(tmp_path / "preds.jsonl", 3)
    with OpenAIServer(judge_model(), batch_delay=0.2) as server:
        code, out, err = run_cli(["judge", str(source), "--judges", "rl_f", "--judge-models", "openai/j",
                                  "--api-base", server.base_url, "--out", str(tmp_path / "out.jsonl"),
                                  "--format", "json", "--batch"], monkeypatch, capsys)
        batches = list(server.batches.batches.values())
        assert server.chat_count() == 0
    assert code == 0, err
    assert [b["request_counts"]["total"] for b in batches] == [3, 3]  # statements, then NLI verdicts
    assert json.loads(out)["metrics"]["RL_F"]["value"] == pytest.approx(0.5)  # "in Paris" yes, "blue" no


def test_an_unparsable_batch_answer_is_an_error_kept_and_asked_again_when_told(tmp_path, monkeypatch,
                                                                               capsys) -> None:
    """The unparsable answer was paid for: a plain rerun re-reads it (0 submissions), --retry-errors asks it alone
    again (issue 36)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    source = predictions(tmp_path / "preds.jsonl", 3)
    unreadable = {"left": 1}

    def idk(request: Request) -> str:
        if "landmark number 1?" in request.prompt and unreadable["left"]:
            unreadable["left"] -= 1
            return "Hmm, hard to say."
        return "no"

    def args(server: OpenAIServer, *extra: str) -> list[str]:
        return ["judge", str(source), "--judges", "idk", "--judge-models", "openai/a", "--api-base", server.base_url,
                "--out", str(tmp_path / "out.jsonl"), "--format", "json", "--batch", *extra]

    with OpenAIServer(idk, batch_delay=0.2) as server:
        code, out, _ = run_cli(args(server), monkeypatch, capsys)
        assert code == 1 and json.loads(out)["metrics"]["idk_eval"]["errors"] == 1
        row = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()][1]
        assert "idk_eval" not in row["metrics"]  # an error, never a number
        assert row["ragjudge"]["judges"]["idk"]["raw"] == "Hmm, hard to say."
        assert row["ragjudge"]["errors"]["idk"].startswith("unparsable judge output")
        code, out, err = run_cli(args(server), monkeypatch, capsys)
        assert code == 1 and json.loads(out)["metrics"]["idk_eval"]["errors"] == 1, err
        assert len(server.batches.batches) == 1  # nothing submitted again
        code, out, err = run_cli(args(server, "--retry-errors"), monkeypatch, capsys)
        assert code == 0, err
        assert json.loads(out)["metrics"]["idk_eval"]["errors"] == 0
        assert sorted(Counter(server.batches.submitted).values()) == [1, 1, 2]  # only the unreadable one again
        assert [b["request_counts"]["total"] for b in server.batches.batches.values()] == [3, 1]


def test_batch_is_refused_where_it_cannot_work(tmp_path, monkeypatch, capsys) -> None:
    source = predictions(tmp_path / "preds.jsonl", 1)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    code, out, err = run_cli(["judge", str(source), "--judges", "idk", "--judge-models", "anthropic/claude-3-5-haiku",
                              "--out", str(tmp_path / "o.jsonl"), "--batch"], monkeypatch, capsys)
    assert code == 2 and out == "" and "Traceback" not in err
    assert err.strip().startswith("error: --batch: litellm cannot create batches for anthropic/claude-3-5-haiku")
    cdr = Path(__file__).resolve().parents[1] / "examples" / "cdr-mini"
    code, out, err = run_cli(["eval", "--bench", "cdr", "--data", str(cdr), "--pipeline", "bm25", "--batch"],
                             monkeypatch, capsys)
    assert code == 2 and "--batch is not used by bench cdr (it calls no LLM)" in err

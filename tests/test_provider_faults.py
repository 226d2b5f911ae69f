"""A provider that is down, a key that is missing or refused, a mixed panel over two endpoints, a panel that
answers partly, usage that survives a kill: each stops early or is counted, never paid twice or hidden."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import MINI, run_cli
from ragjudge.testing.openai_server import OpenAIServer, Request, by_model


def predictions(path: Path, n: int = 6) -> Path:
    path.write_text("".join(json.dumps({
        "task_id": f"c{i}::1", "input": [{"speaker": "user", "text": f"question {i}?"}],
        "targets": [{"speaker": "agent", "text": f"answer {i}"}], "answerability": ["ANSWERABLE"],
        "contexts": [{"document_id": f"d{i}", "text": f"passage {i}", "score": 1.0}],
        "predictions": [{"text": f"response {i}"}]}) + "\n" for i in range(n)))
    return path


def judge(tmp_path: Path, *args: str) -> list[str]:
    return ["judge", str(predictions(tmp_path / "preds.jsonl")), "--out", str(tmp_path / "out.jsonl"), *args]


def rating(request: Request) -> str:
    return "Fine.\nRating: [[6]]" if "[The Start of Reference Answer]" in request.prompt else "no"


def test_a_provider_at_a_closed_port_stops_the_run_in_seconds(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    started = time.monotonic()
    code, out, err = run_cli(judge(tmp_path, "--judges", "idk", "--judge-models", "openai/j",
                                   "--api-base", "http://127.0.0.1:9/v1"), monkeypatch, capsys)
    assert code == 3 and out == "" and time.monotonic() - started < 20
    assert err.strip() == "error: cannot reach http://127.0.0.1:9/v1 (model openai/j): connection refused or host " \
                          "unreachable"
    assert not (tmp_path / "out.judgements.jsonl").exists()  # checked before any work


def test_without_the_preflight_the_breaker_stops_the_run_and_keeps_finished_work(tmp_path, monkeypatch,
                                                                                  capsys) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    started = time.monotonic()
    code, _, err = run_cli(judge(tmp_path, "--judges", "idk", "--judge-models", "openai/j", "--no-preflight",
                                 "--api-base", "http://127.0.0.1:9/v1", "--max-retries", "6"), monkeypatch, capsys)
    assert code == 3 and time.monotonic() - started < 30
    [line] = err.strip().splitlines()[-1:]
    assert line.startswith("error: cannot reach http://127.0.0.1:9/v1 (model openai/j)") and "HTTP 500" not in err


def test_the_breaker_stops_the_run_with_one_line_and_no_stray_tracebacks(tmp_path: Path) -> None:
    """Requests still in flight when the breaker opens fail too: their exceptions are collected, not printed
    by asyncio at exit as "Task exception was never retrieved" with a traceback each."""
    source = predictions(tmp_path / "preds.jsonl", 20)
    env = {**os.environ, "RAGJUDGE_CACHE_DIR": str(tmp_path / "cache"), "OPENAI_API_KEY": "sk-test"}
    done = subprocess.run([sys.executable, "-m", "ragjudge", "judge", str(source), "--judges", "idk",
                           "--judge-models", "openai/j", "--no-preflight", "--api-base", "http://127.0.0.1:9/v1",
                           "--out", str(tmp_path / "out.jsonl"), "--format", "json"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr and "never retrieved" not in done.stderr, done.stderr[:2000]
    errors = [line for line in done.stderr.splitlines() if line.startswith("error")]
    assert len(errors) == 1 and errors[0].startswith("error: cannot reach http://127.0.0.1:9/v1"), done.stderr


def test_a_missing_key_is_found_before_any_work(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with OpenAIServer() as server:
        code, out, err = run_cli(judge(tmp_path, "--judges", "idk", "--judge-models", "openai/j",
                                       "--api-base", server.base_url), monkeypatch, capsys)
        assert server.requests == [] and server.listings == []
    assert code == 2 and err.strip() == ("error: model openai/j: no credentials: set OPENAI_API_KEY (or api_key: "
                                         "os.environ/VARIABLE for it in a --models file)")


def _embedding_spec(path: Path, api_base: str) -> Path:
    path.write_text(f"retriever:\n  name: dense\n  options:\n    encoder: litellm\n    model: openai/emb\n"
                    f"    api_base: {api_base}\nquery:\n  strategy: last_turn\nk: 3\n")
    return path


def test_an_embedding_model_without_a_key_is_refused_at_once(tmp_path, monkeypatch, capsys) -> None:
    """A pipeline's embeddings API is checked like any model: no key is one line, exit 2, no request, no
    minute of retries reported as "HTTP 500"."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with OpenAIServer() as server:
        started = time.monotonic()
        code, _, err = run_cli(["retrieve", "--corpus", str(MINI / "corpus.jsonl"), "--queries",
                                str(MINI / "tasks.jsonl"), "--pipeline", str(_embedding_spec(tmp_path / "emb.yaml",
                                                                                               server.base_url)),
                                "--out", str(tmp_path / "run.jsonl")], monkeypatch, capsys)
        assert server.requests == []
    assert code == 2 and time.monotonic() - started < 10, err
    assert err.strip().splitlines()[-1] == ("error: model openai/emb: no credentials: set OPENAI_API_KEY (or "
                                            "api_key: os.environ/VARIABLE for it in a --models file)")
    assert "HTTP 500" not in err


def test_an_embedding_endpoint_at_a_closed_port_is_named_when_the_run_stops(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    code, _, err = run_cli(["retrieve", "--corpus", str(MINI / "corpus.jsonl"), "--queries", str(MINI / "tasks.jsonl"),
                            "--pipeline", str(_embedding_spec(tmp_path / "emb.yaml", "http://127.0.0.1:9/v1")),
                            "--out", str(tmp_path / "run.jsonl")], monkeypatch, capsys)
    assert code == 3
    assert err.strip().splitlines()[-1].startswith("error: cannot reach http://127.0.0.1:9/v1 (model openai/emb)")


def test_retrieve_checks_the_rewrite_model_before_indexing(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with OpenAIServer() as server:
        code, out, err = run_cli(["retrieve", "--corpus", str(MINI / "corpus.jsonl"), "--queries",
                                  str(MINI / "tasks.jsonl"), "--pipeline", "bm25_rewrite", "--rewrite-model",
                                  "openai/rw", "--api-base", server.base_url, "--out", str(tmp_path / "run.jsonl")],
                                 monkeypatch, capsys)
        assert server.requests == []
    assert code == 2 and out == "", err
    assert err.strip() == ("error: model openai/rw: no credentials: set OPENAI_API_KEY (or api_key: "
                           "os.environ/VARIABLE for it in a --models file)")
    assert not (tmp_path / "run.jsonl").exists()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    started = time.monotonic()
    code, _, err = run_cli(["retrieve", "--corpus", str(MINI / "corpus.jsonl"), "--queries", str(MINI / "tasks.jsonl"),
                            "--pipeline", "bm25_rewrite", "--rewrite-model", "openai/rw", "--api-base",
                            "http://127.0.0.1:9/v1", "--out", str(tmp_path / "run.jsonl")], monkeypatch, capsys)
    assert code == 3 and time.monotonic() - started < 20
    assert err.strip() == ("error: cannot reach http://127.0.0.1:9/v1 (model openai/rw): connection refused or host "
                           "unreachable")


def test_rl_f_at_a_closed_port_stops_the_run_like_every_judge(tmp_path, monkeypatch, capsys) -> None:
    """ragas calls the judge inside RL_F: a provider that cannot be reached stops the run there too (it is not
    'ragas could not use the judge's output' on every task)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    code, _, err = run_cli(judge(tmp_path, "--judges", "rl_f", "--judge-models", "openai/j", "--no-preflight",
                                 "--api-base", "http://127.0.0.1:9/v1"), monkeypatch, capsys)
    assert code == 3, err
    errors = [line for line in err.splitlines() if line.startswith("error")]
    assert len(errors) == 1 and errors[0].startswith("error: cannot reach http://127.0.0.1:9/v1 (model openai/j)")
    assert "ragas could not use" not in err


def test_credentials_rejected_mid_run_stop_it_after_a_few_requests(tmp_path, monkeypatch, capsys) -> None:
    """A provider whose keys the preflight cannot check (litellm has no validation for it, or the preflight is
    off): the first few 401s in a row stop the run with one line, instead of paying nothing for every task."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong-key-000")
    source = predictions(tmp_path / "preds.jsonl", 30)
    with OpenAIServer() as server:
        server.valid_key = "sk-right-key-000"
        code, _, err = run_cli(["judge", str(source), "--out", str(tmp_path / "out.jsonl"), "--judges", "idk",
                                "--judge-models", "openai/j", "--no-preflight", "--concurrency", "1",
                                "--api-base", server.base_url], monkeypatch, capsys)
        sent = len(server.requests)
    assert code == 2, err
    errors = [line for line in err.splitlines() if line.startswith("error")]
    assert len(errors) == 1 and "rejected the credentials (HTTP 401)" in errors[0], err
    assert "sk-wrong-key-000" not in err
    assert sent <= 3  # not one refused request per task


def test_a_refused_key_is_found_before_any_work(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong-key-000")
    with OpenAIServer() as server:
        server.valid_key = "sk-right-key-000"
        code, _, err = run_cli(judge(tmp_path, "--judges", "idk", "--judge-models", "openai/j",
                                     "--api-base", server.base_url), monkeypatch, capsys)
        assert server.requests == [] and len(server.listings) == 1
    assert code == 2 and "rejected the credentials (HTTP 401)" in err and "sk-wrong-key-000" not in err


def test_a_mixed_panel_over_two_endpoints_from_a_models_file(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("LOCAL_KEY", "sk-local-secret-1234")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-provider-secret-5678")
    with OpenAIServer(rating) as local, OpenAIServer(rating) as provider:
        models = tmp_path / "models.yaml"
        models.write_text(f"""model_list:
  - model_name: local-judge
    litellm_params: {{model: openai/llama-local, api_base: "{local.base_url}", api_key: os.environ/LOCAL_KEY}}
  - model_name: openai/gpt-judge
    litellm_params: {{model: openai/gpt-judge, api_base: "{provider.base_url}", rpm: 6000}}
""")
        code, out, err = run_cli(judge(tmp_path, "--judges", "rb_llm", "--judge-models", "local-judge,openai/gpt-judge",
                                       "--models", str(models), "--format", "json"), monkeypatch, capsys)
        assert {r.model for r in local.requests} == {"llama-local"} and len(local.requests) == 6
        assert {r.model for r in provider.requests} == {"gpt-judge"} and len(provider.requests) == 6
    assert code == 0, err
    assert json.loads(out)["metrics"]["RB_llm"]["value"] == pytest.approx(0.6)
    run = json.loads((tmp_path / "out.run.json").read_text())
    assert set(run["usage"]) == {"local-judge", "openai/gpt-judge"} and run["usage"]["local-judge"]["requests"] == 6
    for file in tmp_path.iterdir():
        assert b"sk-local-secret" not in file.read_bytes() and b"sk-provider-secret" not in file.read_bytes(), file


def test_retrieve_routes_its_rewrite_model_through_a_models_file(tmp_path, monkeypatch, capsys) -> None:
    """retrieve takes the same models file as eval and judge: the rewrite model's endpoint, key and rpm."""
    monkeypatch.setenv("LOCAL_KEY", "sk-local-secret-1234")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    rewritten = json.dumps({"class": "non-standalone", "question": "what does the passage say about it?"})
    with OpenAIServer(lambda request: rewritten) as local:
        local.valid_key = "sk-local-secret-1234"
        models = tmp_path / "models.yaml"
        models.write_text(f"""model_list:
  - model_name: rewriter
    litellm_params: {{model: openai/llama-local, api_base: "{local.base_url}", api_key: os.environ/LOCAL_KEY,
                      rpm: 6000}}
""")
        code, _, err = run_cli(["retrieve", "--corpus", str(MINI / "corpus.jsonl"), "--queries",
                                str(MINI / "tasks.jsonl"), "--pipeline", "bm25_rewrite", "--rewrite-model", "rewriter",
                                "--models", str(models), "--index-dir", str(tmp_path / "indexes"),
                                "--out", str(tmp_path / "run.jsonl")], monkeypatch, capsys)
        asked = {r.model for r in local.requests}
    assert code == 0, err
    assert asked == {"llama-local"} and len(local.listings) == 1  # checked first, then every rewrite sent there
    queries = [json.loads(line) for line in (tmp_path / "run.queries.jsonl").read_text().splitlines()]
    assert any(q["text"] == "what does the passage say about it?" for q in queries)  # the rewrites came from it


def test_a_bad_models_file_is_one_line(tmp_path, monkeypatch, capsys) -> None:
    models = tmp_path / "models.yaml"
    models.write_text("model_list:\n  - model_name: x\n    litellm_params: {model: openai/x, api_key: sk-literal}\n")
    code, _, err = run_cli(judge(tmp_path, "--judges", "idk", "--judge-models", "x", "--models", str(models)),
                           monkeypatch, capsys)
    assert code == 2 and err.strip() == (f"error: {models}: field 'model_list[0].litellm_params.api_key': give the key "
                                         "as os.environ/VARIABLE: keys are never read from files")


def test_a_panel_answered_by_fewer_members_is_counted_or_refused(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with OpenAIServer(by_model({"a": rating, "b": rating})) as server:  # c is unknown to the server: 404
        base = judge(tmp_path, "--judges", "rb_llm", "--judge-models", "openai/a,openai/b,openai/c",
                     "--api-base", server.base_url, "--format", "json")
        code, out, err = run_cli(base, monkeypatch, capsys)
        assert code == 0  # two of three answered every time: a score, counted as partial and said aloud
        summary = json.loads(out)
        assert summary["metrics"]["RB_llm"]["details"]["partial_panels"] == 6 and summary["metrics"]["RB_llm"]["n"] == 6
        assert "warning: 6 RB_llm panel score(s) came from fewer judges than asked" in err
        table = [str(tmp_path / "table.jsonl") if a == str(tmp_path / "out.jsonl") else a for a in base[:-2]]
        code, out, _ = run_cli(table, monkeypatch, capsys)  # the printed table counts them too
        row = next(line.split() for line in out.splitlines() if line.split()[:1] == ["RB_llm"])
        header = next(line.split() for line in out.splitlines() if "partial" in line.split())
        assert header[-1] == "partial" and row[-1] == "6"  # the last column, whatever the columns before it
        assert code == 0 and "partial: scores from a judge panel" in out
        strict = [str(tmp_path / "strict.jsonl") if a == str(tmp_path / "out.jsonl") else a for a in base]
        code, out, _ = run_cli([*strict, "--min-panel", "3"], monkeypatch, capsys)
        summary = json.loads(out)
    assert code == 1 and summary["metrics"]["RB_llm"]["n"] == 0 and summary["metrics"]["RB_llm"]["errors"] == 6


def test_min_panel_larger_than_the_panel_is_refused_before_any_work(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with OpenAIServer(rating) as server:
        code, _, err = run_cli(judge(tmp_path, "--judges", "rb_llm", "--judge-models", "openai/a,openai/b",
                                     "--api-base", server.base_url, "--min-panel", "3"), monkeypatch, capsys)
        assert server.requests == []
    assert code == 2 and err.strip() == ("error: --min-panel 3: the panel has 2 judge model(s) (--judge-models); ask "
                                         "for at most 2 answers")


def test_retry_errors_asks_an_unreadable_judge_again_at_once(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    answers = iter(["Hmm, hard to say."])

    def idk(request: Request) -> str:
        return next(answers, "no")

    with OpenAIServer(idk) as server:
        code, out, err = run_cli(judge(tmp_path, "--judges", "idk", "--judge-models", "openai/j", "--api-base",
                                       server.base_url, "--retry-errors", "--concurrency", "1", "--format", "json"),
                                 monkeypatch, capsys)
        assert len(server.requests) == 7  # six tasks, one asked twice
    assert code == 0, err and json.loads(out)["metrics"]["idk_eval"]["errors"] == 0


def test_usage_after_kill_and_resume_equals_the_requests_received(tmp_path: Path) -> None:
    source = predictions(tmp_path / "preds.jsonl", 30)
    out = tmp_path / "out.jsonl"
    env = {**os.environ, "RAGJUDGE_CACHE_DIR": str(tmp_path / "cache"), "OPENAI_API_KEY": "sk-test"}

    def start(server: OpenAIServer) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-m", "ragjudge", "judge", str(source), "--judges", "idk,rb_llm",
                                 "--judge-models", "openai/a,openai/b", "--api-base", server.base_url,
                                 "--concurrency", "2", "--fixed-concurrency", "--out", str(out), "--format", "json"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)

    with OpenAIServer(rating, latency=0.05) as server:
        proc = start(server)
        deadline = time.time() + 60
        while time.time() < deadline and not (tmp_path / "out.judgements.jsonl").exists():
            time.sleep(0.05)
        # Kill while a call is surely in flight (however slow the machine): the next request hangs for 3 s.
        arrived = len(server.requests)
        server.hang_next(1, 3.0)
        while time.time() < deadline and not (len(server.requests) > arrived and server.in_flight > 0):
            time.sleep(0.01)
        time.sleep(0.2)
        assert server.in_flight > 0
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        proc = start(server)
        _, stderr = proc.communicate(timeout=120)
        received = len(server.requests)
    assert proc.returncode == 0, stderr
    usage = json.loads((tmp_path / "out.run.json").read_text())["usage"]
    logged = sum(u["requests"] for u in usage.values())
    # every request the server received is in the run's usage; a request is logged just before it is sent, so
    # a kill between the two can add at most one per slot (--concurrency 2, fixed) that never reached the server
    assert received <= logged <= received + 2
    assert received > 90  # the killed calls in flight were sent again, and counted

"""Resuming `ragjudge eval` in the retrieval settings: an answer is never reported with passages it was not
generated from, nor with judgements made on another answer; and retrieval usage errors come before indexing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import MINI, run_cli
from ragjudge.testing.openai_server import OpenAIServer, Reply


def results(folder: Path) -> dict[str, dict]:
    return {r["task_id"]: r for r in map(json.loads, (folder / "results.jsonl").read_text().splitlines())}


def answer_and_passages(record: dict) -> tuple[str, list[str]]:
    return record["predictions"][0]["text"], [c["document_id"] for c in record["contexts"]]


EVAL = ["eval", "--bench", str(MINI / "tasks.jsonl"), "--gen", "extractive", "-T", "setting=rag",
        "--corpus", str(MINI / "corpus.jsonl"), "--judges", "idk_lexical", "--format", "json"]


def test_resume_after_failed_rewrites_regenerates_answers_for_the_new_passages(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    state = {"up": False}

    def rewriter(request) -> str | Reply:
        if not state["up"]:
            return Reply(status=500, content="overloaded")
        return json.dumps({"class": "non-standalone", "question": "how do I make sourdough bread rise"})

    with OpenAIServer(rewriter) as server:
        common = [*EVAL, "--pipeline", "bm25_rewrite", "--rewrite-model", "openai/rewriter", "--api-base",
                  server.base_url, "--max-retries", "0", "--index-dir", str(tmp_path / "idx")]
        code, stdout, stderr = run_cli([*common, "--out", str(tmp_path / "resumed")], monkeypatch, capsys)
        assert code == 0, stderr
        rewrite = json.loads(stdout)["details"]["query_rewrite"]
        assert rewrite["fallback_error"] == 30 and json.loads(stdout)["details"]["pipeline"] == "bm25_rewrite"
        assert "warning: 30 rewrite(s) fell back to the last user turn (0 malformed answer(s), 30 failed call(s) " \
               "of openai/rewriter)" in stderr
        before = results(tmp_path / "resumed")

        state["up"] = True  # the same run again, now that the rewrites succeed
        code, stdout, stderr = run_cli([*common, "--out", str(tmp_path / "resumed")], monkeypatch, capsys)
        assert code == 0, stderr
        assert json.loads(stdout)["details"]["query_rewrite"]["rewritten"] == 30 and "warning" not in stderr
        code, _, stderr = run_cli([*common, "--out", str(tmp_path / "fresh")], monkeypatch, capsys)
        assert code == 0, stderr

    resumed, fresh = results(tmp_path / "resumed"), results(tmp_path / "fresh")
    later = "mini-c01::2"
    assert answer_and_passages(resumed[later])[1][0].startswith("cook-")  # retrieved for the new query
    assert answer_and_passages(resumed[later]) != answer_and_passages(before[later])
    for task_id, record in fresh.items():  # resuming gives exactly what a fresh run gives
        assert answer_and_passages(resumed[task_id]) == answer_and_passages(record), task_id
        assert resumed[task_id]["metrics"] == record["metrics"], task_id
    first_turn = "mini-c01::1"  # not rewritten: its answer was kept, not regenerated
    assert answer_and_passages(resumed[first_turn]) == answer_and_passages(before[first_turn])


def test_another_pipeline_gets_its_own_folder_and_never_stale_judgements(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "plain.yaml").write_text("retriever:\n  name: bm25\n  options: {stemmer: null, title: false, k1: 0.3}\n")
    monkeypatch.chdir(tmp_path)
    index_dir = tmp_path / "idx"
    for pipeline in ("bm25", "plain"):
        code, _, stderr = run_cli([*EVAL, "--pipeline", pipeline, "--pipeline-dir", str(specs), "--index-dir",
                                   str(index_dir)], monkeypatch, capsys)
        assert code == 0, stderr
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == ["tasks.jsonl-extractive-rag-bm25",
                                                                     "tasks.jsonl-extractive-rag-plain"]
    assert len(list(index_dir.glob("bm25-*"))) == 2  # --index-dir is where eval keeps its indexes

    # The same --out for both pipelines: answers that changed are judged again, not given the old scores.
    shared = tmp_path / "shared"
    for pipeline in ("bm25", "plain"):
        code, _, stderr = run_cli([*EVAL, "--pipeline", pipeline, "--pipeline-dir", str(specs), "--index-dir",
                                   str(index_dir), "--out", str(shared)], monkeypatch, capsys)
        assert code == 0, stderr
    by_bm25 = results(tmp_path / "runs" / "tasks.jsonl-extractive-rag-bm25")
    by_plain = results(tmp_path / "runs" / "tasks.jsonl-extractive-rag-plain")
    changed = sum(answer_and_passages(by_bm25[t]) != answer_and_passages(by_plain[t]) for t in by_plain)
    assert changed > 0
    journal = (shared / "judgements.jsonl").read_text().splitlines()
    assert len(journal) == 40 + changed
    assert {t: r["metrics"] for t, r in results(shared).items()} == {t: r["metrics"] for t, r in by_plain.items()}


def test_retrieve_usage_errors_come_before_indexing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    index_dir = tmp_path / "idx"
    base = ["retrieve", "--corpus", str(MINI / "corpus.jsonl"), "--index-dir", str(index_dir), "--out",
            str(tmp_path / "run.jsonl")]
    code, _, stderr = run_cli([*base, "--queries", str(MINI / "tasks.jsonl"), "--pipeline", "bm25_rewrite"],
                              monkeypatch, capsys)
    assert code == 2 and stderr.strip() == ("error: pipeline bm25_rewrite rewrites queries: pass --rewrite-model "
                                            "MODEL (or set query.model)")
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"_id": "q1", "text": "mars"}\n{"_id": "q2", "text": "|user|:  "}\n')
    code, _, stderr = run_cli([*base, "--queries", str(queries), "--pipeline", "bm25"], monkeypatch, capsys)
    assert code == 2 and stderr.strip() == (f"error: {queries}: field 'text': query 'q2' is empty once speaker "
                                            f"tags are removed")
    lines = (MINI / "tasks.jsonl").read_text().splitlines()[:3]
    broken = json.loads(lines[2])
    broken["input"][-1]["text"] = "  "
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("\n".join([*lines[:2], json.dumps(broken)]) + "\n")
    message = (f"error: {tasks}:3: field 'input': task '{broken['task_id']}': the last user turn is empty, there is "
               f"nothing to search for")
    code, _, stderr = run_cli([*base, "--queries", str(tasks), "--pipeline", "bm25"], monkeypatch, capsys)
    assert code == 2 and stderr.strip() == message
    code, _, stderr = run_cli(["eval", "--bench", str(tasks), "--gen", "extractive", "-T", "setting=rag", "--pipeline",
                               "bm25", "--corpus", str(MINI / "corpus.jsonl"), "--index-dir", str(index_dir),
                               "--out", str(tmp_path / "out")], monkeypatch, capsys)
    assert code == 2 and stderr.strip() == message
    assert not index_dir.exists()  # nothing was indexed for a run that could not go ahead

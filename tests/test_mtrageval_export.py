"""`ragjudge export --format mtrageval-a|b|c` (issue 22): SemEval-2026 MTRAGEval submissions, each validated by the
benchmark's own `format_checker.py` (run as it is published, from ../shared/data/mtrag-un/official-eval, in a
subprocess: it is a script with a command line and only the standard library)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, run_cli, run_cli_once
from shared_data import SHARED_DATA, requires_shared

FIXTURE = REPO / "tests" / "fixtures" / "mtrag-un" / "predictions.jsonl"
CHECKER = SHARED_DATA / "mtrag-un" / "official-eval" / "format_checker.py"
VALID = "Format is valid for the eval script."
needs_checker = requires_shared("mtrag-un", "official-eval/format_checker.py")


def check(submission: Path, tasks: Path, mode: str) -> str:
    """The official checker's report (it always exits 0; the verdict is its last line)."""
    done = subprocess.run([sys.executable, CHECKER.name, "--input_file", str(tasks), "--prediction_file",
                           str(submission), "--mode", mode], capture_output=True, text=True, cwd=CHECKER.parent,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def fixture_passages() -> dict[str, str]:
    return {c["document_id"]: c["text"] for r in map(json.loads, FIXTURE.read_text().splitlines())
            for c in r["contexts"]}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Task B's source (`ragjudge judge` on reference-passage answers) and task C's (`eval -T setting=rag` with
    BM25 over a small corpus of the fixture's passages and fillers)."""
    tmp = tmp_path_factory.mktemp("mtrageval")
    corpus = tmp / "corpus.jsonl"
    docs = [{"_id": d, "title": "", "text": t} for d, t in fixture_passages().items()]
    docs += [{"_id": f"filler-{i}", "title": "", "text": f"Filler {i}: permits, ferries, backups and funds."}
             for i in range(12)]
    corpus.write_text("".join(json.dumps(d) + "\n" for d in docs))
    judged = tmp / "b.judged.jsonl"
    code, _, err = run_cli_once(["judge", str(FIXTURE), "--judges", "idk_lexical", "--out", str(judged)])
    assert code == 0, err
    code, _, err = run_cli_once(["eval", "--bench", "mtrag-un", "--data", str(FIXTURE), "--gen", "extractive",
                                 "-T", "setting=rag", "--pipeline", "bm25", "--corpus", str(corpus), "--judges",
                                 "idk_lexical", "--out", str(tmp / "rag-run")])
    assert code == 0, err
    return {"b": judged, "c": tmp / "rag-run", "tmp": tmp}


def export(args: list[str], monkeypatch, capsys) -> tuple[int, str, str]:
    return run_cli(["export", *args], monkeypatch, capsys)


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@needs_checker
def test_task_b_passes_the_official_checker(runs, tmp_path: Path, monkeypatch, capsys) -> None:
    out = tmp_path / "task-b.jsonl"
    code, _, err = export([str(runs["b"]), "--format", "mtrageval-b", "--out", str(out), "--tasks", str(FIXTURE)],
                          monkeypatch, capsys)
    assert code == 0 and err == f"wrote {out}: MTRAGEval task B, 10 tasks (3 without passages)\n", err
    report = check(out, FIXTURE, "generation_taskb")
    assert report.rstrip().endswith(VALID), report
    got = {r["task_id"]: r for r in lines(out)}
    source = {r["task_id"]: r for r in lines(FIXTURE)}
    assert set(got) == set(source)
    for tid, r in got.items():
        assert r["predictions"] == source[tid]["predictions"] and r["input"] == source[tid]["input"]
        assert [c["document_id"] for c in r["contexts"]] == [c["document_id"] for c in source[tid]["contexts"]]
        assert all(c["score"] == 1.0 and c["text"] for c in r["contexts"])  # references carry no score
        assert "metrics" not in r and "targets" not in r and "ragjudge" not in r


@needs_checker
def test_task_c_passes_the_official_checker(runs, tmp_path: Path, monkeypatch, capsys) -> None:
    out = tmp_path / "task-c.jsonl"
    code, _, err = export([str(runs["c"]), "--format", "mtrageval-c", "--out", str(out), "--tasks", str(FIXTURE)],
                          monkeypatch, capsys)
    assert code == 0, err
    report = check(out, FIXTURE, "rag_taskc")
    assert report.rstrip().endswith(VALID), report
    results = {r["task_id"]: r for r in lines(runs["c"] / "results.jsonl")}
    for r in lines(out):
        assert r["Collection"] == results[r["task_id"]]["Collection"]
        retrieved = results[r["task_id"]]["contexts"]
        assert [c["document_id"] for c in r["contexts"]] == [c["document_id"] for c in retrieved][:10]
        assert [c["score"] for c in r["contexts"]] == [c["score"] for c in retrieved][:10]


@needs_checker
def test_task_a_passes_the_official_checker(tmp_path: Path, monkeypatch, capsys) -> None:
    """A TREC run (no Collection: taken from --tasks), 12 passages for one query (the top 10 are kept)."""
    tasks = lines(FIXTURE)
    run = tmp_path / "run.trec"
    rows = []
    for i, t in enumerate(tasks):
        depth = 12 if i == 0 else 3
        rows += [f"{t['task_id']} Q0 doc-{i}-{k} {k + 1} {10.0 - k / 2} bm25" for k in range(depth)]
    run.write_text("\n".join(rows) + "\n")
    out = tmp_path / "task-a.jsonl"
    code, _, err = export([str(run), "--to", "mtrageval-a", "--out", str(out), "--tasks", str(FIXTURE)], monkeypatch,
                          capsys)
    assert code == 0, err
    report = check(out, FIXTURE, "retrieval_taska")
    assert report.rstrip().endswith(VALID), report
    got = lines(out)
    assert [g["task_id"] for g in got] == [t["task_id"] for t in tasks]
    assert [g["Collection"] for g in got] == [t["Collection"] for t in tasks]
    assert [c["document_id"] for c in got[0]["contexts"]] == [f"doc-0-{k}" for k in range(10)]
    assert got[1]["contexts"] == [{"document_id": f"doc-1-{k}", "score": 10.0 - k / 2} for k in range(3)]


@needs_checker
def test_the_checker_does_flag_a_bad_submission(tmp_path: Path) -> None:
    """What a failure looks like, so that the tests above read its verdict right."""
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(json.dumps({"task_id": t["task_id"], "Collection": t["Collection"],
                                       "contexts": [{"document_id": "d"}]}) + "\n" for t in lines(FIXTURE)))
    report = check(bad, FIXTURE, "retrieval_taska")
    assert VALID not in report and "contexts[0] missing 'score'" in report


@requires_shared("mtrag-un", "generation/reference.jsonl", "official-eval/format_checker.py")
def test_task_b_on_the_whole_release_passes_the_official_checker(tmp_path: Path, monkeypatch, capsys) -> None:
    release = SHARED_DATA / "mtrag-un" / "generation" / "reference.jsonl"
    records = lines(release)
    for r in records:
        r["predictions"] = [{"text": r["targets"][0]["text"]}]
    source = tmp_path / "answers.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in records))
    code, _, err = run_cli(["judge", str(source), "--judges", "underspecified_lexical", "--out",
                            str(tmp_path / "judged.jsonl")], monkeypatch, capsys)
    assert code == 0, err
    out = tmp_path / "submission.jsonl"
    code, _, err = export([str(tmp_path / "judged.jsonl"), "--to", "mtrageval-b", "--out", str(out), "--tasks",
                           str(release)], monkeypatch, capsys)
    assert code == 0, err
    report = check(out, release, "generation_taskb")
    assert report.rstrip().endswith(VALID) and "issue(s)" not in report, report
    assert "'contexts' is empty on 130 line(s)" in report  # a warning: the 97 UNANSWERABLE and 33 UNDERSPECIFIED
    #                                                        tasks come without reference passages


@pytest.mark.parametrize(("args", "message"), [
    (["--to", "mtrageval-b", "--out", "x.json"], "error: --out x.json: an MTRAGEval submission is a .jsonl file"),
    (["--to", "mtrageval-d"], "error: --to must be one of inspectorraget, mtrageval-a, mtrageval-b, mtrageval-c"),
    (["--to", "inspectorraget", "--tasks", "t.jsonl"], "error: --tasks is for --to mtrageval-a|b|c"),
])
def test_usage_errors(args: list[str], message: str, runs, monkeypatch, capsys) -> None:
    code, out, err = export([str(runs["b"]), *args], monkeypatch, capsys)
    assert code == 2 and out == "" and err.startswith(message) and err.count("\n") == 1, err


def test_task_b_refuses_answers_from_retrieved_passages(runs, tmp_path: Path, monkeypatch, capsys) -> None:
    code, _, err = export([str(runs["c"]), "--to", "mtrageval-b", "--out", str(tmp_path / "b.jsonl")], monkeypatch,
                          capsys)
    assert code == 2 and "generated from retrieved passages" in err and not (tmp_path / "b.jsonl").exists()


def test_task_c_refuses_answers_from_the_reference_passages(runs, tmp_path: Path, monkeypatch, capsys) -> None:
    reference = runs["tmp"] / "reference-run"
    code, _, err = run_cli(["eval", "--bench", "mtrag-un", "--data", str(FIXTURE), "--gen", "extractive", "--judges",
                            "idk_lexical", "--out", str(reference)], monkeypatch, capsys)
    assert code == 0, err
    code, _, err = export([str(reference), "--to", "mtrageval-c", "--out", str(tmp_path / "c.jsonl")], monkeypatch,
                          capsys)
    assert code == 2 and "generated from the reference passages" in err and err.count("\n") == 1, err
    assert not (tmp_path / "c.jsonl").exists()


def test_task_a_refuses_a_generation_run(runs, tmp_path: Path, monkeypatch, capsys) -> None:
    for source in (runs["c"], runs["c"] / "results.jsonl"):  # the run folder, and its MTRAG records
        code, _, err = export([str(source), "--to", "mtrageval-a", "--out", str(tmp_path / "a.jsonl")], monkeypatch,
                              capsys)
        assert code == 2 and "not a retrieval run" in err and err.count("\n") == 1, err
        assert not (tmp_path / "a.jsonl").exists()


def test_a_submission_must_answer_every_task(runs, tmp_path: Path, monkeypatch, capsys) -> None:
    tasks = tmp_path / "tasks.jsonl"
    extra = {**lines(FIXTURE)[0], "task_id": "zz<::>1", "conversation_id": "zz"}
    tasks.write_text(FIXTURE.read_text() + json.dumps(extra) + "\n")
    code, _, err = export([str(runs["b"]), "--to", "mtrageval-b", "--out", str(tmp_path / "b.jsonl"), "--tasks",
                           str(tasks)], monkeypatch, capsys)
    assert code == 2 and "1 task(s) of the task file" in err and "'zz<::>1'" in err, err


def test_task_a_needs_a_collection(tmp_path: Path, monkeypatch, capsys) -> None:
    run = tmp_path / "run.trec"
    run.write_text("q<::>1 Q0 d 1 1.0 x\n")
    code, _, err = export([str(run), "--to", "mtrageval-a", "--out", str(tmp_path / "a.jsonl")], monkeypatch, capsys)
    assert code == 2 and "has no Collection: pass --tasks" in err

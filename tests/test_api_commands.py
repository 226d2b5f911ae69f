"""Every command on the API (issue 42, item 4): `retrieve`, `evaluate_retrieval` (retrieval-eval), `correlate`,
`export`, `dialsim_convert` and `dialsim_score` are public functions of `ragjudge` that return what the command
prints (the command only parses its flags and renders), and whose errors name the Python parameter, not the
flag."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import MINI, run_cli
from dialsim_helpers import MINI_DIR
from test_dialsim_scoring import mc_log

import ragjudge
from ragjudge.errors import UsageError
from ragjudge.formats.jsonl import to_jsonable

HUMANS = Path(__file__).parent / "fixtures" / "inspectorraget" / "human_eval.json"


def test_every_command_is_a_public_function() -> None:
    for name in ("retrieve", "evaluate_retrieval", "correlate", "export", "dialsim_convert", "dialsim_score"):
        assert name in ragjudge.__all__ and callable(getattr(ragjudge, name))


def beir_queries(tmp_path: Path) -> Path:
    tasks = [json.loads(line) for line in (MINI / "tasks.jsonl").read_text(encoding="utf-8").splitlines()]
    queries = tmp_path / "queries.jsonl"
    queries.write_text("".join(json.dumps({"_id": t["task_id"], "text": t["input"][-1]["text"]}) + "\n"
                               for t in tasks), encoding="utf-8")
    return queries


def test_retrieve_returns_what_the_command_prints(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    queries = beir_queries(tmp_path)
    common = dict(corpus=MINI / "corpus.jsonl", pipeline="bm25", index_dir=tmp_path / "idx", k=5)
    result = ragjudge.retrieve(queries, out=tmp_path / "api.jsonl", show_progress=False, **common)
    code, out, err = run_cli(["retrieve", "--queries", str(queries), "--corpus", str(common["corpus"]), "--pipeline",
                              "bm25", "--index-dir", str(tmp_path / "idx"), "--k", "5", "--out",
                              str(tmp_path / "cli.jsonl"), "--format", "json"], monkeypatch, capsys)
    assert code == 0, err
    printed = json.loads(out)
    summary = result.summary()
    assert {k: v for k, v in summary.items() if k not in ("out", "seconds", "pipeline")} == \
        {k: v for k, v in printed.items() if k not in ("out", "seconds", "pipeline")}
    assert (result.name, result.queries, result.k) == ("bm25", printed["queries"], 5) and result.queries > 0
    assert (tmp_path / "api.jsonl").read_text() == (tmp_path / "cli.jsonl").read_text()
    assert json.loads((tmp_path / "api.pipeline.json").read_text())["queries"] == result.queries
    with pytest.raises(UsageError, match=r"^rewrite_model is for pipelines whose query strategy is rewrite"):
        ragjudge.retrieve(queries, out=tmp_path / "x.jsonl", rewrite_model="openai/m", **common)


def tiny_run(tmp_path: Path) -> tuple[Path, Path]:
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\nq1::1\td1\t1\nq1::1\td2\t1\nq1::2\td4\t2\n", encoding="utf-8")
    run = tmp_path / "run.jsonl"
    run.write_text("".join(json.dumps({"task_id": tid, "Collection": "mt-rag-clapnq-elser-512-100-20240503",
                                       "contexts": [{"document_id": d, "score": s, "text": d} for d, s in docs]})
                           + "\n" for tid, docs in (("q1<::>1", [("d3", 0.9), ("d1", 0.8)]),
                                                    ("q1<::>2", [("d4", 0.5)]))), encoding="utf-8")
    return run, qrels


def test_retrieval_eval_returns_what_the_command_prints(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    run, qrels = tiny_run(tmp_path)
    report = ragjudge.evaluate_retrieval(run, qrels=qrels, by="none", per_query=tmp_path / "api.csv")
    code, out, err = run_cli(["retrieval-eval", str(run), "--qrels", str(qrels), "--by", "none", "--per-query",
                              str(tmp_path / "cli.csv"), "--format", "json"], monkeypatch, capsys)
    assert code == 0, err
    assert report.summary.to_dict() == json.loads(out)
    assert report.summary.metrics["R@1"].value == 0.5  # q1::1 misses at rank 1, q1::2 hits
    assert (tmp_path / "api.csv").read_text() == (tmp_path / "cli.csv").read_text()
    with pytest.raises(UsageError, match=r"^qrels is required for a run file"):
        ragjudge.evaluate_retrieval(run)
    with pytest.raises(UsageError, match=r"^by turnz: not a built-in breakdown .* need breakdown_file$"):
        ragjudge.evaluate_retrieval(run, qrels=[qrels], by="turnz")


def test_correlate_returns_what_the_command_prints(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    report = ragjudge.correlate(HUMANS, bootstrap=0, human_metrics="faithfulness,naturalness",
                                where={"answerability": ["ANSWERABLE", "PARTIAL"]}, csv=tmp_path / "api.csv")
    code, out, err = run_cli(["correlate", str(HUMANS), "--bootstrap", "0", "--human-metrics",
                              "faithfulness,naturalness", "--where", "answerability=ANSWERABLE,PARTIAL", "--csv",
                              str(tmp_path / "cli.csv"), "--format", "json"], monkeypatch, capsys)
    assert code == 0, err
    assert to_jsonable(report) == json.loads(out) and report["correlations"]
    assert (tmp_path / "api.csv").read_text() == (tmp_path / "cli.csv").read_text()
    run = tmp_path / "run"
    run.mkdir()
    (run / "summary.json").write_text("{}", encoding="utf-8")
    with pytest.raises(UsageError, match=r"is a run, not human ratings"):
        ragjudge.correlate(run)
    with pytest.raises(UsageError, match=r"^stat must be one of"):
        ragjudge.correlate(HUMANS, stat="pearsons")
    with pytest.raises(UsageError, match=r"^heatmap \S+h.txt: the heatmap is an image"):
        ragjudge.correlate(HUMANS, bootstrap=0, heatmap=tmp_path / "h.txt")


def mtrag_results(tmp_path: Path) -> Path:
    """Judged MTRAG results as MTRAG's own scripts write them (no sample log beside them)."""
    path = tmp_path / "official.jsonl"
    lines = [{"task_id": f"c1<::>{n}", "conversation_id": "c1", "turn": n, "Collection": "mt-rag-clapnq-elser-512-"
              "100-20240503", "input": [{"speaker": "user", "text": f"question {n}"}],
              "contexts": [{"document_id": f"d{n}", "text": f"passage {n}"}],
              "targets": [{"speaker": "agent", "text": "ref"}], "predictions": [{"text": f"answer {n}"}],
              "metrics": {"RB_alg": [0.25 * n]}} for n in (1, 2)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_export_returns_what_the_command_says(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    results = mtrag_results(tmp_path)
    done = ragjudge.export({"model-a": results}, out=tmp_path / "api.json", name="x")
    code, _, err = run_cli(["export", f"model-a={results}", "--out", str(tmp_path / "cli.json"), "--name", "x"],
                           monkeypatch, capsys)
    assert code == 0, err
    assert err == f"wrote {tmp_path / 'cli.json'}: 2 tasks, 1 model(s) (model-a), 1 metrics, 2 documents\n"
    assert (done.to, done.tasks, done.models, done.metrics, done.documents) == ("inspectorraget", 2, ["model-a"], 1, 2)
    assert json.loads((tmp_path / "api.json").read_text()) == json.loads((tmp_path / "cli.json").read_text())
    with pytest.raises(UsageError, match=r"^tasks is for to mtrageval-a\|b\|c"):
        ragjudge.export([str(results)], tasks=results)
    with pytest.raises(UsageError, match=r"^to must be one of inspectorraget, "):
        ragjudge.export([str(results)], to="csv")


def test_dialsim_convert_and_score_return_what_the_commands_print(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    converted = ragjudge.dialsim_convert(MINI_DIR, out=tmp_path / "api")
    code, out, err = run_cli(["dialsim", "convert", "--data", str(MINI_DIR), "--out", str(tmp_path / "cli"),
                              "--format", "json"], monkeypatch, capsys)
    assert code == 0, err
    assert [{**r, "to": None} for r in converted.shows] == [{**r, "to": None} for r in json.loads(out)]
    assert converted.shows and converted.shows[0]["sessions"] > 0
    written = [(tmp_path / side / "mini_dialsim.jsonl").read_text() for side in ("api", "cli")]
    assert written[0] == written[1]
    with pytest.raises(UsageError, match=r"^shows: nope not in "):
        ragjudge.dialsim_convert(MINI_DIR, out=tmp_path / "api", shows=["nope"])

    log = mc_log(tmp_path)
    rescored = ragjudge.dialsim_score(log, out=tmp_path / "api.jsonl")
    code, out, err = run_cli(["dialsim", "score", str(log), "--format", "json"], monkeypatch, capsys)
    assert code == 0, err
    printed = json.loads(out)
    assert rescored.summary.to_dict()["metrics"] == printed["metrics"]
    assert printed["metrics"]["accuracy"]["value"] == pytest.approx(1 / 3)
    assert len(rescored.rows) == 6 and (tmp_path / "api.jsonl").read_text().count("\n") == 6
    with pytest.raises(UsageError, match=r"^time_limits must be seconds greater than 0"):
        ragjudge.dialsim_score(log, time_limits=[0])
    with pytest.raises(UsageError, match=r"^judge llm needs judge_models MODEL"):
        ragjudge.dialsim_score(log, judge="llm")
    with pytest.raises(UsageError, match=r"^limit is not used by dialsim_score"):
        ragjudge.dialsim_score(log, limit=3)

"""`ragjudge eval --bench cdr` end to end on examples/cdr-mini: tables, outputs, index reuse, resume, the
TREC files `retrieval-eval` scores identically, --compare, other pipelines, and one-line input errors."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from conftest import REPO, run_cli
from ragjudge.bench.cdr.metrics import METRICS, weighted_mean

CDR_MINI = REPO / "examples" / "cdr-mini"


def cdr(args: list[str], tmp_path: Path, monkeypatch, capsys, *, out: str = "run") -> tuple[int, str, str]:
    return run_cli(["eval", "--bench", "cdr", "--index-dir", str(tmp_path / "indexes"), "--out", str(tmp_path / out),
                    *args], monkeypatch, capsys)


def read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def subset(folder: Path, keep: int) -> Path:
    """The first `keep` conversations of cdr-mini, with relevance lists cut to match."""
    corpus = json.loads((CDR_MINI / "corpus.json").read_text())
    kept = dict(list(corpus.items())[:keep])
    relevant = {q: [d for d in docs if d in kept] for q, docs in
                json.loads((CDR_MINI / "relevant_docs.json").read_text()).items()}
    folder.mkdir()
    (folder / "corpus.json").write_text(json.dumps(kept))
    (folder / "relevant_docs.json").write_text(json.dumps(relevant))
    (folder / "queries.json").write_text((CDR_MINI / "queries.json").read_text())
    return folder


def test_bm25_session_run_its_outputs_and_retrieval_eval_agree(tmp_path: Path, monkeypatch, capsys) -> None:
    code, out, err = cdr(["--data", str(CDR_MINI), "--pipeline", "bm25", "-T", "unit=session"], tmp_path,
                         monkeypatch, capsys)
    assert code == 0, err
    assert "cdr: 10 queries, pipeline bm25, unit session" in out and "ACC (hit rate)" in out
    assert "By task category" in out and "Table 11 (session-based)" in out and "Table 12" in out
    assert "1 queries have no relevant conversation and are left out (e.g. query_11)" in err
    run = tmp_path / "run"
    summary = json.loads((run / "summary.json").read_text())
    assert summary["n_scored"] == 10 and set(summary["metrics"]) == set(METRICS)
    assert summary["data"]["duplicate_pairs"] == 2 and summary["data"]["unique_pairs"] == 31
    assert summary["units"]["units"] == 30 and summary["timing"]["index_reused"] is False
    assert summary["timing"]["ingestion_s"] > 0 and summary["truncation"] == []  # BM25 reads every word
    results = read(run / "results.jsonl")
    for record in results:
        scores = record["scores"]["metrics"]["metrics"]
        assert scores["hit_rate@1"] == scores["precision@1"] == scores["ndcg@1"] == scores["mrr@1"]
        ranking = record["output"]["ranking"]
        assert 0 < len(ranking) <= 20 and len({r["id"] for r in ranking}) == len(ranking)  # BM25 skips no-match
    groups = summary["breakdowns"]["category"]
    assert sum(g["n"] for g in groups.values()) == 10 and "unknown" not in groups
    for metric in METRICS:
        assert weighted_mean(groups, metric) == pytest.approx(summary["metrics"][metric], abs=1e-5)
    info = json.loads((run / "run.json").read_text())
    for name in ("corpus.json", "queries.json", "relevant_docs.json", "categories.json"):
        assert info["data"]["sha256"][name] == hashlib.sha256((CDR_MINI / name).read_bytes()).hexdigest()
    assert info["unit"] == "session" and info["pipeline"]["spec"]["name"] == "bm25"

    # the TREC files score the same in `ragjudge retrieval-eval`, overall and by category
    code, out, err = run_cli(["retrieval-eval", str(run / "run.trec"), "--qrels", str(run / "qrels.trec"),
                              "--metrics", "hit_rate,precision,recall,ndcg,mrr", "--cutoffs", "1,5,10,20",
                              "--breakdown-file", str(run / "categories.tsv"), "--by", "category",
                              "--format", "json"], monkeypatch, capsys)
    assert code == 0, err
    report = json.loads(out)
    assert report["n_queries"] == 10
    assert report["metrics"] == pytest.approx(summary["metrics"], abs=1e-6)
    for category, stats in report["breakdowns"]["category"].items():
        assert stats["n_queries"] == groups[category]["n"]
        assert stats["metrics"] == pytest.approx({m: groups[category][m] for m in METRICS}, abs=1e-6)

    # rerun into the same folder: nothing is searched again; into another: the index is reused
    code, _, err = cdr(["--data", str(CDR_MINI), "-T", "unit=session"], tmp_path, monkeypatch, capsys)
    assert code == 0, err
    again = json.loads((run / "summary.json").read_text())
    assert again["timing"]["queries_searched_now"] == 0 and again["metrics"] == summary["metrics"]
    code, _, err = cdr(["--data", str(CDR_MINI), "-T", "unit=session"], tmp_path, monkeypatch, capsys, out="other")
    assert code == 0, err
    other = json.loads((tmp_path / "other" / "summary.json").read_text())
    assert other["timing"]["index_reused"] is True and other["timing"]["queries_searched_now"] == 10
    assert other["timing"]["ingestion_s"] == summary["timing"]["ingestion_s"]  # the build time, kept in the index
    assert other["metrics"] == summary["metrics"]


def test_units_get_their_own_index_and_compare_runs_with_a_paired_test(tmp_path: Path, monkeypatch, capsys) -> None:
    code, _, err = cdr(["--data", str(CDR_MINI), "-T", "unit=session"], tmp_path, monkeypatch, capsys, out="a")
    assert code == 0, err
    code, out, err = cdr(["--data", str(CDR_MINI), "-T", "unit=message", "-T", f"compare={tmp_path / 'a'}"],
                         tmp_path, monkeypatch, capsys, out="b")
    assert code == 0, err
    assert len(list((tmp_path / "indexes").glob("bm25-*"))) == 2  # session and message: two indexes
    summary = json.loads((tmp_path / "b" / "summary.json").read_text())
    assert summary["units"]["unit"] == "message" and summary["units"]["empty_messages_dropped"] == 1
    assert "Table 9 (turn-based)" in out and "paired t-test" in out
    comparison = summary["comparison"]
    assert comparison["n_queries"] == 10 and comparison["left_out"] == 0 and comparison["label"] == "bm25 (session)"
    a = json.loads((tmp_path / "a" / "summary.json").read_text())["metrics"]
    for metric, test in comparison["metrics"].items():
        assert test["a"] == pytest.approx(summary["metrics"][metric], abs=1e-6)
        assert test["b"] == pytest.approx(a[metric], abs=1e-6)
        assert test["p_value"] is None or 0.0 <= test["p_value"] <= 1.0
    # a run compared with itself: no difference anywhere
    code, _, err = cdr(["--data", str(CDR_MINI), "-T", "unit=session", "-T", f"compare={tmp_path / 'a'}"],
                       tmp_path, monkeypatch, capsys, out="a2")
    assert code == 0, err
    same = json.loads((tmp_path / "a2" / "summary.json").read_text())["comparison"]["metrics"]
    assert all(t["diff"] == 0 and t["p_value"] == 1.0 for t in same.values())


def test_dense_minilm_windows_offline_with_truncation_and_index_reuse(tmp_path: Path, monkeypatch, capsys) -> None:
    data = subset(tmp_path / "data", 12)
    code, out, err = cdr(["--data", str(data), "--pipeline", "dense", "-T", "unit=window:3"], tmp_path,
                         monkeypatch, capsys)
    assert code == 0, err
    assert "pipeline dense, unit window:3:1" in out and "Table 10 (sliding chunk, k=3)" in out
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    [trunc] = summary["truncation"]
    assert trunc["max_tokens"] == 256 and trunc["units"] == summary["units"]["units"] == 32
    assert 0 <= trunc["truncated"] <= trunc["units"] and trunc["longest"] > 100
    assert summary["timing"]["index_reused"] is False
    assert all(len(r["output"]["ranking"]) == 12 for r in read(tmp_path / "run" / "results.jsonl"))  # all ranked
    code, _, err = cdr(["--data", str(data), "--pipeline", "dense", "-T", "unit=window:3"], tmp_path, monkeypatch,
                       capsys, out="again")
    assert code == 0, err
    again = json.loads((tmp_path / "again" / "summary.json").read_text())
    assert again["timing"]["index_reused"] is True and again["metrics"] == summary["metrics"]
    # sessions are longer than MiniLM reads: the count says so (no model run needed to count)
    from ragjudge.bench.cdr.truncation import truncation
    from ragjudge.retrieval.dense import DenseRetriever

    long_text = "user: " + "word " * 300
    [report] = truncation(DenseRetriever({"model": "minilm"}), [long_text, "user: short"])
    assert (report["truncated"], report["units"]) == (1, 2)


def test_litellm_embeddings_and_hybrid_pipelines(tmp_path: Path, monkeypatch, capsys, llm_server) -> None:
    specs = tmp_path / "specs"
    specs.mkdir()
    monkeypatch.setenv("RJ_CDR_EMBED_KEY", "sk-cdr-test-key")
    (specs / "api_embed.yaml").write_text(
        "retriever:\n  name: dense\n  options:\n    encoder: litellm\n    model: openai/text-embedding-3-small\n"
        f"    api_base: {llm_server.base_url}\n    api_key_env: RJ_CDR_EMBED_KEY\n    dimensions: 64\n")
    (specs / "two_bm25.yaml").write_text(
        "retriever:\n  name: hybrid\n  options:\n    retrievers:\n      - retriever: bm25\n"
        "      - {retriever: bm25, options: {stemmer: null}}\n    depth: 40\n")
    code, _, err = cdr(["--data", str(CDR_MINI), "--pipeline", "api_embed", "--pipeline-dir", str(specs),
                        "-T", "unit=exchange"], tmp_path, monkeypatch, capsys)
    assert code == 0, err
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["truncation"][0]["max_tokens"] is None  # an API's limit is not known here
    assert any(r.path.endswith("/embeddings") for r in llm_server.requests)
    assert "sk-cdr-test-key" not in (tmp_path / "run" / "run.json").read_text()
    code, _, err = cdr(["--data", str(CDR_MINI), "--pipeline", "two_bm25", "--pipeline-dir", str(specs),
                        "-T", "unit=user"], tmp_path, monkeypatch, capsys, out="hybrid")
    assert code == 0, err
    summary = json.loads((tmp_path / "hybrid" / "summary.json").read_text())
    assert summary["units"]["unit"] == "user" and summary["n_scored"] == 10


@pytest.mark.parametrize(("files", "message"), [
    ({"corpus.json": '{\n  "corpus_1": "user: hi",\n  "corpus_2": oops\n}'}, "corpus.json:3: invalid JSON"),
    ({"corpus.json": '{\n  "corpus_1": "user: hi",\n  "corpus_2": 7\n}'},
     "corpus.json:3: field 'corpus_2': must be a string, got int"),
    ({"queries.json": '{\n  "query_1": "  "\n}'}, "queries.json:2: field 'query_1': is empty"),
    ({"relevant_docs.json": '{\n  "query_1": "corpus_1"\n}'},
     "relevant_docs.json:2: field 'query_1': must be a list of conversation ids"),
    ({"queries.json": '["query_1"]'}, "queries.json:1: expected a JSON object"),
])
def test_bad_files_are_one_line_errors(files: dict, message: str, tmp_path: Path, monkeypatch, capsys) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "corpus.json").write_text('{"corpus_1": "user: hi"}')
    (data / "queries.json").write_text('{"query_1": "hello"}')
    (data / "relevant_docs.json").write_text('{"query_1": ["corpus_1"]}')
    for name, text in files.items():
        (data / name).write_text(text)
    code, _, err = cdr(["--data", str(data)], tmp_path, monkeypatch, capsys)
    assert code == 2 and message in err and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(("args", "message"), [
    ([], "bench cdr needs its data: pass --data PATH"),
    (["--data", "no/such/folder"], "CDR data folder no/such/folder does not exist"),
    (["--data", str(REPO / "examples")], "no CDR data in"),
    (["--data", str(CDR_MINI), "-T", "unit=turn"], "-T unit: expected one of session, message"),
    (["--data", str(CDR_MINI), "-T", "depth=10"], "-T depth"),
    (["--data", str(CDR_MINI), "--pipeline", "bm25_rewrite"], "CDR queries are searched as written"),
    (["--data", str(CDR_MINI), "-T", "compare=nowhere"], "-T compare=nowhere: not a CDR run folder"),
    (["--data", str(CDR_MINI), "--corpus", "x.jsonl"], "--corpus is not used by bench cdr"),
])
def test_usage_errors(args: list[str], message: str, tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.delenv("RAGJUDGE_CDR_DATA", raising=False)
    code, _, err = cdr(args, tmp_path, monkeypatch, capsys)
    assert code == 2 and message in err and "Traceback" not in err, err


def test_data_from_the_environment_and_the_repository_layout(tmp_path: Path, monkeypatch, capsys) -> None:
    test_folder = tmp_path / "CDR-Benchmark" / "cdr_benchmark_data" / "test_dataset" / "data" / "test"
    test_folder.mkdir(parents=True)
    for name in ("corpus.json", "queries.json", "relevant_docs.json"):
        (test_folder / name).write_text((CDR_MINI / name).read_text())
    monkeypatch.setenv("RAGJUDGE_CDR_DATA", str(tmp_path / "CDR-Benchmark"))
    code, out, err = cdr(["-T", "unit=user", "--format", "json"], tmp_path, monkeypatch, capsys)
    assert code == 0, err
    summary = json.loads(out)
    assert "breakdowns" not in summary  # no category file beside the data
    assert summary["reference"][0]["title"].startswith("CDR paper, Table 3")  # no paper setting for `user`
    code, _, err = cdr(["-T", "unit=user", "-T", f"categories={CDR_MINI / 'categories.json'}", "--format", "json"],
                       tmp_path, monkeypatch, capsys, out="with-categories")
    assert code == 0, err
    summary = json.loads((tmp_path / "with-categories" / "summary.json").read_text())
    assert len(summary["breakdowns"]["category"]) == 5

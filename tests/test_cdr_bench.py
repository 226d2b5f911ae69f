"""`ragjudge eval --bench cdr` end to end on examples/cdr-mini: the summary (the result contract), tables, outputs,
index reuse, resume, the TREC files `retrieval-eval` scores identically, --compare, other pipelines, and one-line
input errors naming the file at fault."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from conftest import (
    REPO,
    folder_instead,
    non_utf8_on_line_3,
    run_cli,
    truncated_in_line_4,
)

from ragjudge.bench.cdr.metrics import METRICS

CDR_MINI = REPO / "examples" / "cdr-mini"


def cdr(args: list[str], tmp_path: Path, monkeypatch, capsys, *, out: str = "run") -> tuple[int, str, str]:
    return run_cli(["eval", "--bench", "cdr", "--index-dir", str(tmp_path / "indexes"), "--out", str(tmp_path / out),
                    *args], monkeypatch, capsys)


def read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def values(metrics: dict) -> dict:
    """name -> value of a summary's (or a breakdown group's) metrics."""
    return {name: m["value"] for name, m in metrics.items()}


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
    assert "cdr: 10 queries, pipeline bm25, unit session" in out
    assert re.search(r"^ hit +↑ +0\.500 +0\.700 +1\.000 +1\.000 *$", out, re.M) and "nDCG@10 0.466" in out
    assert "By task category" in out and "Table 11 (session-based)" in out and "Table 12" in out
    assert "1 queries have no relevant conversation and are left out (e.g. query_11)" in err
    run = tmp_path / "run"
    summary = json.loads((run / "summary.json").read_text())
    assert summary["schema"] == "ragjudge.summary/1" and summary["bench"] == "cdr" and summary["unit"] == "queries"
    assert (summary["n_samples"], summary["n_errors"]) == (10, 0)
    metrics = summary["metrics"]
    # every retrieval metric, then the paper's times and the units: no metric named after the scorer
    assert set(metrics) == {*METRICS, "ingestion_s", "inference_s", "units"}  # BM25 truncates nothing
    for name in METRICS:
        m = metrics[name]
        assert (m["n"], m["errors"], m["kind"], m["higher_is_better"]) == (10, 0, "score", True), name
        assert 0.0 <= m["value"] <= 1.0
    assert (metrics["ingestion_s"]["kind"], metrics["ingestion_s"]["higher_is_better"]) == ("seconds", False)
    assert metrics["ingestion_s"]["value"] > 0 and metrics["ingestion_s"]["details"]["index_reused"] is False
    assert (metrics["inference_s"]["kind"], metrics["inference_s"]["n"]) == ("seconds", 10)
    assert (metrics["units"]["kind"], metrics["units"]["value"], metrics["units"]["higher_is_better"]) == \
        ("count", 30, None)
    headline = summary["headline"]
    assert headline["metric"] == "nDCG@10" and headline["value"] == metrics["nDCG@10"]["value"]
    assert headline["text"] == ", ".join(f"{m} {metrics[m]['value']:.3f}" for m in ("nDCG@10", "R@10", "P@10")) + \
        " over 10 queries"  # figures over the same queries share their 'over N'
    assert out.rstrip().splitlines()[-1] == headline["text"]  # the headline, one line, printed last
    assert f"    {headline['text']}\n" in (CDR_MINI / "README.md").read_text()  # as the example documents it
    details = summary["details"]
    assert details["data"]["duplicate_pairs"] == 2 and details["data"]["unique_pairs"] == 31
    assert details["units"]["units"] == 30 and details["timing"]["index_reused"] is False
    assert details["timing"]["ingestion_s"] == metrics["ingestion_s"]["value"] and details["truncation"] == []
    assert [r["source"].split("2025), ")[1] for r in summary["reference"]] == ["Table 11", "Table 12"]
    assert all(len(r["rows"]) == 16 and r["unit"] == "fraction" for r in summary["reference"])
    assert summary["reference"][0]["comparable"] and "-T unit=session" in summary["reference"][0]["comparable"]
    assert details["paper"]["Table 11"]["rows"][0][:2] == ["Voyage-3-large", 0.6639]  # every published column
    for sample in read(run / "samples.jsonl"):
        scores = {name: score["value"] for name, score in sample["scores"].items()}
        assert scores["hit@1"] == scores["P@1"] == scores["nDCG@1"] == scores["MRR@1"]
        ranking = sample["contexts"]
        assert 0 < len(ranking) <= 20 and len({r["id"] for r in ranking}) == len(ranking)  # BM25 skips no-match
    category = summary["breakdowns"]["category"]
    groups = category["groups"]
    assert category["label"] == "category" and category["columns"] == ["nDCG@10", "R@10", "P@10"]
    assert sum(g["n"] for g in groups.values()) == 10 and "unknown" not in groups
    for metric in METRICS:  # the query-weighted mean of the category means is the overall mean
        weighted = sum(g["n"] * g["metrics"][metric]["value"] for g in groups.values()) / 10
        assert weighted == pytest.approx(metrics[metric]["value"], abs=1e-5)
        assert all(g["metrics"][metric]["n"] == g["n"] for g in groups.values())
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
    assert report["n_samples"] == 10 and set(report["metrics"]) == set(METRICS)  # the same names
    assert values(report["metrics"]) == pytest.approx({m: metrics[m]["value"] for m in METRICS}, abs=1e-6)
    for name, group in report["breakdowns"]["category"]["groups"].items():
        assert group["n"] == groups[name]["n"]
        assert values(group["metrics"]) == pytest.approx(values(groups[name]["metrics"]), abs=1e-6)

    # rerun into the same folder: nothing is searched again; into another: the index is reused
    code, _, err = cdr(["--data", str(CDR_MINI), "-T", "unit=session"], tmp_path, monkeypatch, capsys)
    assert code == 0, err
    again = json.loads((run / "summary.json").read_text())
    assert again["details"]["timing"]["queries_searched_now"] == 0
    assert values(again["metrics"]) == values(metrics)
    code, _, err = cdr(["--data", str(CDR_MINI), "-T", "unit=session"], tmp_path, monkeypatch, capsys, out="other")
    assert code == 0, err
    other = json.loads((tmp_path / "other" / "summary.json").read_text())
    timing = other["details"]["timing"]
    assert timing["index_reused"] is True and timing["queries_searched_now"] == 10
    assert other["metrics"]["ingestion_s"]["details"]["index_reused"] is True
    assert other["metrics"]["ingestion_s"]["value"] == metrics["ingestion_s"]["value"]  # the build time, kept
    assert any("the index was reused" in n for n in other["notes"])
    assert {m: other["metrics"][m]["value"] for m in METRICS} == {m: metrics[m]["value"] for m in METRICS}


def test_the_caches_are_not_inputs(tmp_path: Path, monkeypatch, capsys) -> None:
    """run.json `inputs` lists the data files a run read, never its caches: with $RAGJUDGE_CACHE_DIR (and no
    --index-dir) the unit file and the BM25 index are built there and read back (the index's passages.jsonl when it
    is reused), and neither is listed."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("RAGJUDGE_CACHE_DIR", str(cache))
    for out in ("built", "reused"):
        code, _, err = run_cli(["eval", "--bench", "cdr", "--data", str(CDR_MINI), "--pipeline", "bm25", "--out",
                                str(tmp_path / out)], monkeypatch, capsys)
        assert code == 0, err
        inputs = [Path(i["path"]) for i in json.loads((tmp_path / out / "run.json").read_text())["inputs"]]
        assert sorted(inputs) == sorted(p.resolve() for p in CDR_MINI.glob("*.json")), inputs
    assert list(cache.glob("indexes/cdr-units/*.jsonl")) and list(cache.glob("indexes/bm25-*/passages.jsonl"))
    assert json.loads((tmp_path / "reused" / "summary.json").read_text())["details"]["timing"]["index_reused"]


def test_units_get_their_own_index_and_compare_runs_with_a_paired_test(tmp_path: Path, monkeypatch, capsys) -> None:
    code, _, err = cdr(["--data", str(CDR_MINI), "-T", "unit=session"], tmp_path, monkeypatch, capsys, out="a")
    assert code == 0, err
    code, out, err = cdr(["--data", str(CDR_MINI), "-T", "unit=message", "-T", f"compare={tmp_path / 'a'}"],
                         tmp_path, monkeypatch, capsys, out="b")
    assert code == 0, err
    assert len(list((tmp_path / "indexes").glob("bm25-*"))) == 2  # session and message: two indexes
    summary = json.loads((tmp_path / "b" / "summary.json").read_text())
    units = summary["details"]["units"]
    assert units["unit"] == "message" and units["empty_messages_dropped"] == 1
    assert summary["metrics"]["units"]["value"] == units["units"]
    assert "Table 9 (turn-based)" in out and "paired t-test" in out
    comparison = summary["details"]["comparison"]
    assert comparison["n_queries"] == 10 and comparison["left_out"] == 0 and comparison["label"] == "bm25 (session)"
    assert list(comparison["metrics"]) == list(METRICS)
    [table] = [t for t in summary["tables"] if "paired t-test" in t["title"]]
    assert [row[0] for row in table["rows"]] == list(METRICS)
    a = values(json.loads((tmp_path / "a" / "summary.json").read_text())["metrics"])
    for metric, test in comparison["metrics"].items():
        assert test["a"] == pytest.approx(summary["metrics"][metric]["value"], abs=1e-6)
        assert test["b"] == pytest.approx(a[metric], abs=1e-6)
        assert test["p_value"] is None or 0.0 <= test["p_value"] <= 1.0
    # a run compared with itself: no difference anywhere
    code, _, err = cdr(["--data", str(CDR_MINI), "-T", "unit=session", "-T", f"compare={tmp_path / 'a'}"],
                       tmp_path, monkeypatch, capsys, out="a2")
    assert code == 0, err
    same = json.loads((tmp_path / "a2" / "summary.json").read_text())["details"]["comparison"]["metrics"]
    assert all(t["diff"] == 0 and t["p_value"] == 1.0 for t in same.values())


def test_dense_minilm_windows_offline_with_truncation_and_index_reuse(tmp_path: Path, monkeypatch, capsys) -> None:
    data = subset(tmp_path / "data", 12)
    code, out, err = cdr(["--data", str(data), "--pipeline", "dense", "-T", "unit=window:3"], tmp_path,
                         monkeypatch, capsys)
    assert code == 0, err
    assert "pipeline dense, unit window:3:1" in out and "Table 10 (sliding chunk, k=3)" in out
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    [trunc] = summary["details"]["truncation"]
    assert trunc["max_tokens"] == 256 and trunc["units"] == summary["details"]["units"]["units"] == 32
    assert 0 <= trunc["truncated"] <= trunc["units"] and trunc["longest"] > 100
    count = summary["metrics"]["truncated_units"]
    assert (count["kind"], count["value"], count["n"]) == ("count", trunc["truncated"], 32)
    assert count["details"]["max_tokens"] == 256 and summary["metrics"]["units"]["value"] == 32
    assert summary["details"]["timing"]["index_reused"] is False
    assert summary["run"]["models"] == {"encoders": [trunc["encoder"]]}
    assert all(len(s["contexts"]) == 12 for s in read(tmp_path / "run" / "samples.jsonl"))  # all ranked
    code, _, err = cdr(["--data", str(data), "--pipeline", "dense", "-T", "unit=window:3"], tmp_path, monkeypatch,
                       capsys, out="again")
    assert code == 0, err
    again = json.loads((tmp_path / "again" / "summary.json").read_text())
    assert again["details"]["timing"]["index_reused"] is True
    assert {m: again["metrics"][m]["value"] for m in METRICS} == {m: summary["metrics"][m]["value"] for m in METRICS}
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
    assert summary["details"]["truncation"][0]["max_tokens"] is None  # an API's limit is not known here
    assert not any(m.startswith("truncated_units") for m in summary["metrics"])  # so no count is made up
    assert any(r.path.endswith("/embeddings") for r in llm_server.requests)
    assert "sk-cdr-test-key" not in (tmp_path / "run" / "run.json").read_text()
    code, _, err = cdr(["--data", str(CDR_MINI), "--pipeline", "two_bm25", "--pipeline-dir", str(specs),
                        "-T", "unit=user"], tmp_path, monkeypatch, capsys, out="hybrid")
    assert code == 0, err
    summary = json.loads((tmp_path / "hybrid" / "summary.json").read_text())
    assert summary["details"]["units"]["unit"] == "user" and summary["metrics"]["nDCG@10"]["n"] == 10


@pytest.mark.parametrize(("files", "message"), [
    ({"corpus.json": '{\n  "corpus_1": "user: hi",\n  "corpus_2": oops\n}'},
     "corpus.json:3: invalid JSON (Expecting value at column 15)"),
    ({"corpus.json": '{"corpus_1": "user: hi}'},
     "corpus.json:1: invalid JSON (Unterminated string starting at column 14)"),  # json's message ends in "at"
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
    # ranges are declared on the options (the message states them): out of range is not "not a number"
    (["--data", str(CDR_MINI), "-T", "depth=5"], "-T depth must be a whole number >= 20, got 5"),
    (["--data", str(CDR_MINI), "-T", "depth=31"], "-T depth must be between 20 and 30 (corpus.json has 30 "
                                                  "conversations), got 31"),
    (["--data", str(CDR_MINI), "-T", "batch=0"], "-T batch must be a whole number >= 1, got 0"),
    (["--data", str(CDR_MINI), "-T", "unit=window:-5"], "-T unit: window sizes are positive whole numbers, "
                                                        "window:K or window:K:STRIDE, got 'window:-5'"),
    (["--data", str(CDR_MINI), "-T", "unit=window:3:0"], "window sizes are positive whole numbers"),
    # CDR has no chunk or threshold option (the unit is its chunking): named as unknown, with the valid ones
    (["--data", str(CDR_MINI), "-T", "chunk=-5"], "unknown option -T chunk for bench cdr (valid: data, pipeline, unit"),
    (["--data", str(CDR_MINI), "-T", "threshold=2"], "unknown option -T threshold for bench cdr"),
    (["--data", str(CDR_MINI), "--pipeline", "bm25_rewrite"], "CDR queries are searched as written"),
    (["--data", str(CDR_MINI), "-T", "compare=nowhere"], "-T compare=nowhere: not a CDR run folder"),
    (["--data", str(CDR_MINI), "--corpus", "x.jsonl"], "--corpus is not used by bench cdr"),
])
def test_usage_errors(args: list[str], message: str, tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.delenv("RAGJUDGE_CDR_DATA", raising=False)
    code, _, err = cdr(args, tmp_path, monkeypatch, capsys)
    assert code == 2 and message in err and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "run" / "summary.json").exists()


def test_data_from_the_environment_and_the_repository_layout(tmp_path: Path, monkeypatch, capsys) -> None:
    test_folder = tmp_path / "CDR-Benchmark" / "cdr_benchmark_data" / "test_dataset" / "data" / "test"
    test_folder.mkdir(parents=True)
    for name in ("corpus.json", "queries.json", "relevant_docs.json"):
        (test_folder / name).write_text((CDR_MINI / name).read_text())
    monkeypatch.setenv("RAGJUDGE_CDR_DATA", str(tmp_path / "CDR-Benchmark"))
    code, out, err = cdr(["-T", "unit=user", "--format", "json"], tmp_path, monkeypatch, capsys)
    assert code == 0, err
    summary = json.loads(out)
    assert summary["breakdowns"] == {}  # no category file beside the data
    assert summary["reference"][0]["title"].startswith("CDR paper, Table 3")  # no paper setting for `user`
    assert summary["reference"][0]["comparable"] == "" and len(summary["reference"]) == 1
    code, _, err = cdr(["-T", "unit=user", "-T", f"categories={CDR_MINI / 'categories.json'}", "--format", "json"],
                       tmp_path, monkeypatch, capsys, out="with-categories")
    assert code == 0, err
    summary = json.loads((tmp_path / "with-categories" / "summary.json").read_text())
    assert len(summary["breakdowns"]["category"]["groups"]) == 5


def _first_value(name: str, value: object) -> object:
    """A mutation of a JSON object file: its first id gets `value` (the file is rewritten with indent 2, so that
    id is on line 2)."""
    def mutate(path: Path) -> None:
        obj = json.loads(path.read_text())
        obj[next(iter(obj))] = value
        path.write_text(json.dumps(obj, indent=2))
    return mutate



COMMON_CASES = [  # (case, mutate, line, field, message)
    ("empty", lambda p: p.write_text(""), 1, None, "is empty: expected a JSON object"),
    ("no-entries", lambda p: p.write_text("{}"), 1, None, "has no "),
    ("non-utf8", non_utf8_on_line_3, 3, None, "not UTF-8 text: byte 0xff"),
    ("truncated", truncated_in_line_4, 4, None, "invalid JSON"),
    ("folder", folder_instead, None, None, "is a folder, expected a"),
]
FIELD_CASES = {  # file -> [(case, mutate, field, message)]: a wrong-typed and an out-of-range value
    "corpus.json": [("wrong-type", _first_value("corpus", 7), "corpus_1", "must be a string, got int")],
    "queries.json": [("wrong-type", _first_value("q", ["text"]), "query_1", "must be a string, got list"),
                     ("out-of-range", _first_value("q", "  "), "query_1", "is empty")],
    "relevant_docs.json": [
        ("wrong-type", _first_value("r", "corpus_1"), "query_1", "must be a list of conversation ids, got str"),
        ("wrong-item", _first_value("r", ["corpus_1", 3]), "query_1", "[1] is int"),
        ("out-of-range", _first_value("r", ["corpus_1", ""]), "query_1", "conversation id [1] is empty")],
    "categories.json": [("wrong-type", _first_value("c", 3), "query_1", "must be a category name"),
                        ("out-of-range", _first_value("c", ""), "query_1", "must be a category name")],
}
CDR_FILES = ("corpus.json", "queries.json", "relevant_docs.json", "categories.json")
CASES = [(name, *case) for name in CDR_FILES for case in COMMON_CASES] + \
        [(name, case, mutate, 2, field, message) for name, cases in FIELD_CASES.items()
         for case, mutate, field, message in cases]


@pytest.mark.parametrize(("name", "case", "mutate", "line", "field", "message"), CASES,
                         ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_every_data_file_of_the_example_blames_itself(name: str, case: str, mutate, line: int | None,
                                                      field: str | None, message: str, tmp_path: Path, monkeypatch,
                                                      capsys) -> None:
    """Each file of examples/cdr-mini, broken one way at a time: one line naming that file (and its line and
    field), exit 2, nothing written. `queries.json` of `{}` names queries.json, not relevant_docs.json."""
    data = tmp_path / "data"
    data.mkdir()
    for path in CDR_MINI.glob("*.json"):
        (data / path.name).write_bytes(path.read_bytes())
    mutate(data / name)
    code, out, err = cdr(["--data", str(data)], tmp_path, monkeypatch, capsys)
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    where = f"{data / name}" + (f":{line}" if line else "") + ": " + (f"field '{field}': " if field else "")
    assert where in err and message in err, err
    assert not any(f"{data / other}:" in err for other in CDR_FILES if other != name), err
    assert not (tmp_path / "run" / "summary.json").exists() and not (tmp_path / "run" / "samples.jsonl").exists()



def test_each_query_is_a_sample_with_its_ranking_relevant_conversations_and_figures(tmp_path: Path, monkeypatch,
                                                                                    capsys) -> None:
    """A CDR query in the sample log: its figures under the summary's names (not one scorer called `metrics`), the
    ranking as the passages with the relevant conversations marked, its category; `ragjudge report` reads it, and a
    mistyped figure is one line naming the file and line, with no report written."""
    from ragjudge.report.load import load_run
    from ragjudge.report.pack import read_samples

    code, _, err = cdr(["--data", str(CDR_MINI)], tmp_path, monkeypatch, capsys)
    assert code == 0, err
    run = tmp_path / "run"
    loaded = load_run(run)
    assert loaded.notes == []
    samples = read_samples(loaded)
    lines = read(run / "samples.jsonl")
    assert all(list(m) == list(METRICS) for m in samples.metrics)  # no metric (or judge) named `metrics`
    assert samples.judges == [{}] * len(lines) and samples.titles[0] == lines[0]["input"]
    summary = json.loads((run / "summary.json").read_text())
    mean = sum(m["nDCG@10"] for m in samples.metrics) / len(lines)
    assert mean == pytest.approx(summary["metrics"]["nDCG@10"]["value"], abs=1e-6)
    assert {f["category"] for f in samples.facets} == set(summary["breakdowns"]["category"]["groups"])
    ranking = next(b for b in samples.blocks[0] if b["kind"] == "passages" and not b.get("shared"))
    relevant = {p["id"] for p in lines[0]["target_contexts"]}
    assert [item["id"] for item in ranking["items"]] == [p["id"] for p in lines[0]["contexts"]]
    assert [item.get("mark") == "reference" for item in ranking["items"]] == \
        [p["id"] in relevant for p in lines[0]["contexts"]]
    code, _, err = run_cli(["report", str(run), "--out", str(tmp_path / "report.html")], monkeypatch, capsys)
    assert code == 0 and (tmp_path / "report.html").is_file(), err

    text = (run / "samples.jsonl").read_text().splitlines()
    broken = json.loads(text[2])
    broken["scores"]["nDCG@10"]["value"] = "high"
    (run / "samples.jsonl").write_text("\n".join([*text[:2], json.dumps(broken), *text[3:]]) + "\n")
    code, _, err = run_cli(["report", str(run), "--out", str(tmp_path / "broken.html")], monkeypatch, capsys)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert f"{run / 'samples.jsonl'}:3: field 'scores.nDCG@10.value'" in err, err
    assert not (tmp_path / "broken.html").exists()
"""`ragjudge retrieval-eval`: hand-computed metrics, query-set conventions, breakdowns, paired test, MTRAG figures."""

from __future__ import annotations

import csv
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from scipy.stats import ttest_rel

from conftest import REPO
from shared_data import SHARED_DATA, requires_shared
from ragjudge.cli import main
from ragjudge.errors import UsageError
from ragjudge.formats.runs import read_qrels, read_run, write_qrels, write_trec_run
from ragjudge.retrieval_eval import parse_metrics

CLAPNQ = "mt-rag-clapnq-elser-512-100-20240503"
FIQA = "mt-rag-fiqa-beir-elser-512-100-20240501"
L2 = math.log2


def cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, str, str]:
    """Run the real entry point in-process (one numba warm-up for the whole module)."""
    capsys.readouterr()
    monkeypatch.setattr(sys, "argv", ["ragjudge", *map(str, args)])
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 0
    out = capsys.readouterr()
    return code, out.out, out.err


def as_json(capsys, monkeypatch, *args: str) -> dict:
    code, out, err = cli(capsys, monkeypatch, *args, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def values(report: dict) -> dict[str, float | None]:
    """The summary's metrics as {name: value}."""
    return {name: metric["value"] for name, metric in report["metrics"].items()}


def counts(report: dict) -> tuple[int, int, int, int]:
    """(evaluated, ignored, missing, no relevant passage) queries, from `details`."""
    d = report["details"]
    return d["n_queries"], d["n_ignored"], d["n_missing"], d["n_no_relevant"]


def groups(report: dict, dim: str) -> dict[str, dict]:
    """One breakdown as {group: {"n": queries, "metrics": {name: value}}}; every figure's n is the group's."""
    out = {}
    for group, g in report["breakdowns"][dim]["groups"].items():
        assert all(s["n"] == g["n"] and s["errors"] == 0 for s in g["metrics"].values()), (dim, group)
        out[group] = {"n": g["n"], "metrics": {name: s["value"] for name, s in g["metrics"].items()}}
    return out


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def mtrag_line(task_id: str, docs: list[tuple[str, float]], collection: str = CLAPNQ) -> str:
    return json.dumps({"task_id": task_id, "Collection": collection,
                       "contexts": [{"document_id": d, "score": s, "text": d, "title": d} for d, s in docs]})


@pytest.fixture
def tiny(tmp_path: Path) -> dict[str, Path]:
    """Qrels in `::` form, run in `<::>` form; q2::1 has no run line, q9::1 no qrels, q3::1 nothing relevant."""
    qrels = write_lines(tmp_path / "qrels.tsv", [
        "query-id\tcorpus-id\tscore",
        "q1::1\td1\t1", "q1::1\td2\t1", "q1::1\td3\t0",
        "q1::2\td4\t2", "q1::2\td10\t1",
        "q2::1\td5\t1",
        "q3::1\td9\t0",
    ])
    run = write_lines(tmp_path / "run.jsonl", [
        mtrag_line("q1<::>1", [("d3", 0.9), ("d1", 0.8), ("d7", 0.7), ("d2", 0.6)]),
        mtrag_line("q1<::>2", [("d8", 0.5), ("d4", 0.4)], collection=FIQA),
        mtrag_line("q9<::>1", [("d1", 1.0)]),
    ])
    return {"qrels": qrels, "run": run}


# Hand computation for the tiny fixture (q1::1, q1::2, q2::1 evaluated; q2::1 scores 0 everywhere).
# q1::1 ranks d3(0) d1(1) d7 d2(1): relevant at ranks 2 and 4 of 2 relevant.
# q1::2 ranks d8 d4(2): grade 2 at rank 2; ideal is d4(2), d10(1).
NDCG_Q1 = (1 / L2(3) + 1 / L2(5)) / (1 + 1 / L2(3))
NDCG_Q2 = (2 / L2(3)) / (2 + 1 / L2(3))
EXPECTED = {
    "hit@1": 0.0, "hit@3": 2 / 3, "R@20": (1 + 0.5 + 0) / 3,
    "R@1": 0.0, "R@3": (0.5 + 0.5 + 0) / 3, "R@5": (1 + 0.5 + 0) / 3,
    "P@3": (1 / 3 + 1 / 3) / 3, "P@5": (2 / 5 + 1 / 5) / 3,
    "MRR@1": 0.0, "MRR@10": (1 / 2 + 1 / 2) / 3,
    "MAP@10": ((1 / 2 + 2 / 4) / 2 + (1 / 2) / 2) / 3,
    "nDCG@10": (NDCG_Q1 + NDCG_Q2) / 3,
}


def test_hand_computed_metrics_over_judged_queries(tiny, capsys, monkeypatch) -> None:
    report = as_json(capsys, monkeypatch, "retrieval-eval", tiny["run"], "--qrels", tiny["qrels"], "--by", "none")
    assert (report["bench"], report["unit"], report["n_samples"], report["n_errors"]) == ("retrieval-eval", "queries",
                                                                                          3, 0)
    assert counts(report) == (3, 1, 1, 1) and report["details"]["n_run_queries"] == 3
    assert report["details"]["missing"] == "scored zero"
    assert len(report["metrics"]) == 30  # six families at 1, 3, 5, 10, 20
    assert list(report["metrics"])[:5] == ["R@1", "R@3", "R@5", "R@10", "R@20"]
    assert all((m["n"], m["errors"], m["higher_is_better"], m["kind"]) == (3, 0, True, "score")
               for m in report["metrics"].values())
    for metric, value in EXPECTED.items():
        assert values(report)[metric] == pytest.approx(value, abs=1e-6), metric
    assert report["headline"]["metric"] == "nDCG@10"
    assert report["headline"]["value"] == pytest.approx(EXPECTED["nDCG@10"], abs=1e-6)
    assert report["breakdowns"] == {}


def test_ignore_missing_drops_queries_without_a_run_line(tiny, capsys, monkeypatch) -> None:
    report = as_json(capsys, monkeypatch, "retrieval-eval", tiny["run"], "--qrels", tiny["qrels"], "--ignore-missing",
                     "--metrics", "recall@5,mrr@10,ndcg@10", "--by", "none")
    assert report["details"]["n_queries"] == report["n_samples"] == 2 and report["details"]["missing"] == "dropped"
    # ranx's spellings in --metrics, ragjudge's names in the summary
    assert values(report) == pytest.approx({"R@5": 0.75, "MRR@10": 0.5, "nDCG@10": (NDCG_Q1 + NDCG_Q2) / 2})
    assert all(m["n"] == 2 for m in report["metrics"].values())


def test_score_ties_keep_file_order(tmp_path, capsys, monkeypatch) -> None:
    qrels = write_lines(tmp_path / "q.tsv", ["a::1\trel\t1"])
    first = write_lines(tmp_path / "first.jsonl", [mtrag_line("a::1", [("rel", 1.0), ("other", 1.0)])])
    second = write_lines(tmp_path / "second.jsonl", [mtrag_line("a::1", [("other", 1.0), ("rel", 1.0)])])
    for run, expected in ((first, 1.0), (second, 0.5)):
        report = as_json(capsys, monkeypatch, "retrieval-eval", run, "--qrels", qrels, "--metrics", "MRR@10")
        assert values(report) == {"MRR@10": expected}
        # the headline is the first metric asked for when none of nDCG@10, R@5... was
        assert (report["headline"]["metric"], report["headline"]["value"]) == ("MRR@10", expected)


def test_breakdowns_by_turn_domain_standalone_and_custom_labels(tiny, tmp_path, capsys, monkeypatch) -> None:
    labels = write_lines(tmp_path / "rewrites.jsonl", [
        json.dumps({"_id": "q1<::>1", "text": "x", "class": "standalone", "Question Type": ["Factoid", "Keyword"]}),
        json.dumps({"_id": "q1::2", "text": "y", "class": "non-standalone", "Question Type": ["Factoid"]}),
    ])
    report = as_json(capsys, monkeypatch, "retrieval-eval", tiny["run"], "--qrels", tiny["qrels"],
                     "--breakdown-file", labels, "--metrics", "recall@5,mrr@10", "--domain", "govt")
    b = report["breakdowns"]
    assert list(b) == ["turn", "domain", "standalone"]  # standalone by default once labels carry it
    assert [(b[d]["title"], b[d]["label"]) for d in b] == [("First vs later turns", "turn"), ("By domain", "domain"),
                                                          ("Standalone vs non-standalone", "standalone")]
    assert groups(report, "turn") == {"first": {"n": 2, "metrics": {"R@5": 0.5, "MRR@10": 0.25}},
                                      "later": {"n": 1, "metrics": {"R@5": 0.5, "MRR@10": 0.5}}}
    # q2::1 has no run line, so no Collection: it falls back to --domain.
    assert {g: v["n"] for g, v in groups(report, "domain").items()} == {"clapnq": 1, "fiqa": 1, "govt": 1}
    standalone = groups(report, "standalone")
    assert standalone["standalone"]["metrics"]["R@5"] == 1.0
    assert standalone["non-standalone"]["metrics"]["R@5"] == 0.5
    assert standalone["unknown"]["n"] == 1
    custom = as_json(capsys, monkeypatch, "retrieval-eval", tiny["run"], "--qrels", tiny["qrels"],
                     "--breakdown-file", labels, "--metrics", "R@5", "--by", "question_type,turn_number")
    by_type = groups(custom, "question_type")
    assert {g: v["n"] for g, v in by_type.items()} == {"Factoid": 2, "Keyword": 1, "unknown": 1}
    assert by_type["Factoid"]["metrics"]["R@5"] == 0.75
    assert custom["breakdowns"]["question_type"]["title"] == "By question_type"
    assert list(custom["breakdowns"]["turn_number"]["groups"]) == ["1", "2"]


def test_per_query_scores_jsonl_and_csv(tiny, tmp_path, capsys, monkeypatch) -> None:
    out = tmp_path / "pq.jsonl"
    report = as_json(capsys, monkeypatch, "retrieval-eval", tiny["run"], "--qrels", tiny["qrels"],
                     "--per-query", out, "--metrics", "recall@5,ndcg@10")
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["query_id"] for r in rows] == ["q1::1", "q1::2", "q2::1"]  # ids as the qrels write them
    assert rows[0] == {"query_id": "q1::1", "in_run": True, "n_retrieved": 4, "turn": "first", "domain": "clapnq",
                       "R@5": 1.0, "nDCG@10": pytest.approx(NDCG_Q1)}
    assert rows[2]["in_run"] is False and rows[2]["R@5"] == 0.0 and rows[2]["domain"] == "unknown"
    assert sum(r["nDCG@10"] for r in rows) / 3 == pytest.approx(values(report)["nDCG@10"], abs=1e-6)
    as_json(capsys, monkeypatch, "retrieval-eval", tiny["run"], "--qrels", tiny["qrels"],
            "--per-query", tmp_path / "pq.csv", "--metrics", "recall@5")
    with (tmp_path / "pq.csv").open() as fh:
        table = list(csv.DictReader(fh))
    assert [float(r["R@5"]) for r in table] == [1.0, 0.5, 0.0]


def test_trec_run_and_qrels_give_the_same_figures(tiny, tmp_path, capsys, monkeypatch) -> None:
    write_trec_run(read_run(tiny["run"]), tmp_path / "run.trec")
    write_qrels(read_qrels(tiny["qrels"]), tmp_path / "qrels.txt", fmt="trec")
    a = as_json(capsys, monkeypatch, "retrieval-eval", tiny["run"], "--qrels", tiny["qrels"], "--by", "turn")
    b = as_json(capsys, monkeypatch, "retrieval-eval", tmp_path / "run.trec", "--qrels", tmp_path / "qrels.txt",
                "--by", "turn")
    assert a["metrics"] == b["metrics"] and a["breakdowns"] == b["breakdowns"]


def test_multiple_qrels_files_merge(tiny, tmp_path, capsys, monkeypatch) -> None:
    extra = write_lines(tmp_path / "more.tsv", ["q9<::>1\td1\t1"])
    report = as_json(capsys, monkeypatch, "retrieval-eval", tiny["run"], "--qrels", tiny["qrels"], "--qrels", extra,
                     "--metrics", "recall@1")
    assert counts(report)[:2] == (4, 0) and report["details"]["qrels"] == [str(tiny["qrels"]), str(extra)]
    assert values(report) == {"R@1": 0.25}  # q9::1 ranks its relevant passage first


def test_paired_test_is_symmetric_and_identical_runs_are_not_different(tiny, tmp_path, capsys, monkeypatch) -> None:
    other = write_lines(tmp_path / "other.jsonl", [
        mtrag_line("q1::1", [("d1", 3.0), ("d2", 2.0)]),
        mtrag_line("q1::2", [("d10", 1.0), ("d8", 0.5), ("d4", 0.1)]),
        mtrag_line("q2::1", [("d6", 1.0), ("d5", 0.5)]),
    ])
    args = ("--qrels", tiny["qrels"], "--metrics", "recall@5,ndcg@10,mrr@10")
    report = as_json(capsys, monkeypatch, "retrieval-eval", tiny["run"], "--compare", other, *args)
    ab = report["details"]["comparison"]
    ba = as_json(capsys, monkeypatch, "retrieval-eval", other, "--compare", tiny["run"], *args)["details"]["comparison"]
    assert ab["test"] == "paired t-test (two-sided)" and ab["n_queries"] == 3
    assert ab["run"] == str(other) and ab["alpha"] == 0.05
    assert list(ab["metrics"]) == ["R@5", "nDCG@10", "MRR@10"]
    for m in ("R@5", "nDCG@10", "MRR@10"):
        assert 0.0 <= ab["metrics"][m]["p_value"] <= 1.0
        assert ab["metrics"][m]["p_value"] == pytest.approx(ba["metrics"][m]["p_value"])
        assert ab["metrics"][m]["diff"] == pytest.approx(-ba["metrics"][m]["diff"])
        assert ab["metrics"][m]["a"] == pytest.approx(values(report)[m], abs=1e-6)
    # R@5 per query: A = (1, 0.5, 0), B = (1, 1, 1)
    expected_p = ttest_rel([1, 0.5, 0], [1, 1, 1]).pvalue
    assert ab["metrics"]["R@5"]["p_value"] == pytest.approx(expected_p)
    assert (ab["metrics"]["R@5"]["a"], ab["metrics"]["R@5"]["b"]) == (0.5, 1.0)
    [table] = report["tables"]  # the same comparison, as the terminal shows it
    assert "paired t-test (two-sided), 3 queries" in table["title"]
    assert table["columns"] == ["metric", "A", "B", "B - A", "p", "p < 0.05"]
    assert [row[:3] for row in table["rows"]] == [[m, c["a"], c["b"]] for m, c in ab["metrics"].items()]
    same = as_json(capsys, monkeypatch, "retrieval-eval", tiny["run"], "--compare", tiny["run"], *args)
    same = same["details"]["comparison"]
    assert all(c["p_value"] == 1.0 and c["diff"] == 0 and not c["significant"] for c in same["metrics"].values())


def test_table_output(tiny, tmp_path, capsys, monkeypatch) -> None:
    code, out, err = cli(capsys, monkeypatch, "retrieval-eval", tiny["run"], "--qrels", tiny["qrels"],
                         "--compare", tiny["run"])
    assert code == 0, err
    assert "run: 3 queries" in out and "First vs later turns" in out and "paired t-test" in out
    assert f"{EXPECTED['R@5']:.3f}" in out and f"{EXPECTED['nDCG@10']:.3f}" in out
    assert "nDCG" in out and "recall at k" in out  # the names and the legend
    # the query-set conventions are notes (stdout, before the headline), not warnings
    assert "note: 1 run queries without qrels ignored" in out
    assert "note: 1 judged queries missing from the run scored zero" in out
    assert out.rstrip().splitlines()[-1] == f"nDCG@10 {EXPECTED['nDCG@10']:.3f} over 3 queries"


def test_metric_names() -> None:
    assert parse_metrics(None)[:5] == ["recall@1", "recall@3", "recall@5", "recall@10", "recall@20"]
    assert parse_metrics(None)[-1] == "hit_rate@20"
    assert parse_metrics("acc@1,hit_rate@20,accuracy@5") == ["hit_rate@1", "hit_rate@20", "hit_rate@5"]
    assert parse_metrics("R, ndcg@10, P@5, mrr", [1, 10]) == ["recall@1", "recall@10", "ndcg@10", "precision@5",
                                                              "mrr@1", "mrr@10"]
    for bad in ("hits@5", "ndcg@0", "ndcg@x", ""):
        with pytest.raises(UsageError):
            parse_metrics(bad)


@pytest.mark.parametrize(("args", "message"), [
    (("--metrics", "bleu@4"), "unknown metric 'bleu@4'"),
    (("--by", "question_type"), "--by question_type: not a built-in breakdown"),
    (("--by", "standalone"), "--by standalone: no evaluated query has a standalone"),
    (("--format", "xml"), "--format must be table or json"),
    (("--cutoffs", "5,ten"), "--cutoffs must be comma-separated integers"),
])
def test_usage_errors_exit_2_with_one_line(tiny, capsys, monkeypatch, args, message) -> None:
    code, out, err = cli(capsys, monkeypatch, "retrieval-eval", tiny["run"], "--qrels", tiny["qrels"], *args)
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [f"error: {err.strip().removeprefix('error: ')}"]
    assert message in err


def test_input_errors_name_file_and_line(tiny, tmp_path, capsys, monkeypatch) -> None:
    bad_run = write_lines(tmp_path / "bad.trec", ["q1::1 Q0 d1 1 0.9 t", "q1::1 Q0 d2 2 x t"])
    code, _, err = cli(capsys, monkeypatch, "retrieval-eval", bad_run, "--qrels", tiny["qrels"])
    assert code == 2 and err.strip() == f"error: {bad_run}:2: field 'score': must be a finite number, got 'x'"
    bad_qrels = write_lines(tmp_path / "bad.tsv", ["query-id\tcorpus-id\tscore", "q1::1\td1\trelevant"])
    code, _, err = cli(capsys, monkeypatch, "retrieval-eval", tiny["run"], "--qrels", bad_qrels)
    assert code == 2 and f"{bad_qrels}:2: field 'score'" in err
    unrelated = write_lines(tmp_path / "other.tsv", ["x::1\td1\t1"])
    code, _, err = cli(capsys, monkeypatch, "retrieval-eval", tiny["run"], "--qrels", unrelated)
    assert code == 2 and "none of the run's 3 queries is in the qrels" in err and "'q1<::>1'" in err
    nothing = write_lines(tmp_path / "zero.tsv", ["q1::1\td1\t0"])
    code, _, err = cli(capsys, monkeypatch, "retrieval-eval", tiny["run"], "--qrels", nothing)
    assert code == 2 and "no query in the qrels has a relevant passage" in err
    empty = write_lines(tmp_path / "empty.jsonl", [])
    code, _, err = cli(capsys, monkeypatch, "retrieval-eval", empty, "--qrels", tiny["qrels"])
    assert code == 2 and err.strip() == f"error: {empty}: the run file is empty"
    code, _, err = cli(capsys, monkeypatch, "retrieval-eval", tiny["run"], "--qrels", tmp_path / "missing.tsv")
    assert code == 2 and "missing.tsv: file not found" in err
    labels = write_lines(tmp_path / "labels.jsonl", [json.dumps({"text": "no id"})])
    code, _, err = cli(capsys, monkeypatch, "retrieval-eval", tiny["run"], "--qrels", tiny["qrels"],
                       "--breakdown-file", labels)
    assert code == 2 and f"{labels}:1: field 'task_id': no query id" in err


def test_console_script_exit_code_and_no_traceback(tmp_path: Path) -> None:
    run = write_lines(tmp_path / "run.jsonl", ['{"task_id": "a::1", "contexts": [{"document_id": "d"}]}'])
    qrels = write_lines(tmp_path / "q.tsv", ["a::1\td\t1"])
    proc = subprocess.run([sys.executable, "-m", "ragjudge", "retrieval-eval", str(run), "--qrels", str(qrels)],
                          check=False, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"error: {run}:1: field 'contexts[0].score': must be a finite number, got None"


# ------------------------------------------------------------------------- MTRAG runs: our own, then the real ones

FIXTURE = REPO / "tests" / "fixtures" / "mtrag"
"""Our own runs in MTRAG's retrieval prediction format (tests/fixtures/mtrag/README.md): 16 judged queries, the
last-turn run with score ties and three empty rankings."""
FIXTURE_QRELS = FIXTURE / "retrieval" / "clapnq" / "qrels.tsv"


def relevant_docs(qrels: Path) -> dict[str, set[str]]:
    relevant: dict[str, set[str]] = {}
    for line in qrels.read_text().splitlines()[1:]:
        qid, doc, grade = line.split("\t")
        if int(grade) > 0:
            relevant.setdefault(qid, set()).add(doc)
    return relevant


def by_hand(run: Path, qrels: Path, k_recall: int = 5, k_ndcg: int = 10) -> tuple[float, float]:
    """Recall@5 and nDCG@10 (binary grades) over the judged queries, ranks in file order: written out independently."""
    relevant = relevant_docs(qrels)
    ranked = {(r := json.loads(line))["task_id"]: [c["document_id"] for c in r["contexts"]]
              for line in run.read_text().splitlines()}
    recall, ndcg = [], []
    for qid, rel in relevant.items():
        docs = ranked.get(qid, [])
        recall.append(len(rel & set(docs[:k_recall])) / len(rel))
        dcg = sum(1 / L2(rank + 2) for rank, d in enumerate(docs[:k_ndcg]) if d in rel)
        ndcg.append(dcg / sum(1 / L2(rank + 2) for rank in range(min(len(rel), k_ndcg))))
    return sum(recall) / len(recall), sum(ndcg) / len(ndcg)


def test_an_mtrag_run_over_its_judged_queries(capsys, monkeypatch) -> None:
    report = as_json(capsys, monkeypatch, "retrieval-eval", FIXTURE / "runs" / "clapnq_overlap_rewrite.jsonl",
                     "--qrels", FIXTURE_QRELS)
    # Every judged query has a run line and every run line has qrels, so "only queries present in qrels"
    # (MTRAG's convention) and "missing queries score zero" (ours) average over the same 16 queries.
    assert counts(report) == (16, 0, 0, 0) and report["notes"] == []
    assert groups(report, "domain")["clapnq"]["n"] == 16
    turns = groups(report, "turn")
    assert turns["first"]["n"] == 3 and turns["first"]["n"] + turns["later"]["n"] == 16
    recall, ndcg = by_hand(FIXTURE / "runs" / "clapnq_overlap_rewrite.jsonl", FIXTURE_QRELS)
    assert values(report)["R@5"] == pytest.approx(recall, abs=1e-6) and recall == 1.0
    assert values(report)["nDCG@10"] == pytest.approx(ndcg, abs=1e-6) and 0.85 < ndcg < 0.95


def test_missing_query_conventions_on_an_mtrag_run(tmp_path, capsys, monkeypatch) -> None:
    """Drop one judged query from a run: scored zero divides by 16, --ignore-missing by 15."""
    source = FIXTURE / "runs" / "clapnq_overlap_lastturn.jsonl"
    per_query = tmp_path / "pq.jsonl"
    full = as_json(capsys, monkeypatch, "retrieval-eval", source, "--qrels", FIXTURE_QRELS, "--metrics", "recall@5",
                   "--per-query", per_query, "--by", "none")
    scores = {r["query_id"]: r["R@5"] for r in map(json.loads, per_query.read_text().splitlines())}
    lines = source.read_text().splitlines()
    dropped = next(line for line in lines if scores[json.loads(line)["task_id"]] > 0)
    write_lines(tmp_path / "partial.jsonl", [line for line in lines if line is not dropped])
    lost = scores[json.loads(dropped)["task_id"]]
    total = values(full)["R@5"] * 16
    zero = as_json(capsys, monkeypatch, "retrieval-eval", tmp_path / "partial.jsonl", "--qrels", FIXTURE_QRELS,
                   "--metrics", "recall@5")
    ignored = as_json(capsys, monkeypatch, "retrieval-eval", tmp_path / "partial.jsonl", "--qrels", FIXTURE_QRELS,
                      "--metrics", "recall@5", "--ignore-missing")
    assert counts(full)[::2] == (16, 0)  # an empty ranking is a run line, not a missing one
    assert (counts(zero)[::2], counts(ignored)[0]) == ((16, 1), 15)
    assert (zero["metrics"]["R@5"]["n"], ignored["metrics"]["R@5"]["n"]) == (16, 15)
    assert values(zero)["R@5"] == pytest.approx((total - lost) / 16, abs=1e-5)
    assert values(ignored)["R@5"] == pytest.approx((total - lost) / 15, abs=1e-5)


def test_trec_conversion_of_an_mtrag_run_keeps_the_figures(tmp_path, capsys, monkeypatch) -> None:
    source = FIXTURE / "runs" / "clapnq_overlap_lastturn.jsonl"
    qrels = relevant_docs(FIXTURE_QRELS)
    records = [json.loads(line) for line in source.read_text().splitlines()]
    assert sum(not r["contexts"] for r in records) == 3  # empty rankings, which TREC cannot write
    # score ties between a relevant and an irrelevant passage in the top 10: the figures depend on the tie order
    assert any(a["score"] == b["score"] and (a["document_id"] in rel) != (b["document_id"] in rel)
               for r in records for rel in [qrels[r["task_id"]]]
               for i, a in enumerate(r["contexts"][:10]) for b in r["contexts"][i + 1:10])
    run = read_run(source)
    write_trec_run(run, tmp_path / "overlap.trec")
    jsonl = as_json(capsys, monkeypatch, "retrieval-eval", source, "--qrels", FIXTURE_QRELS, "--by", "none")
    trec = as_json(capsys, monkeypatch, "retrieval-eval", tmp_path / "overlap.trec", "--qrels", FIXTURE_QRELS,
                   "--by", "none")
    assert trec["details"]["n_run_queries"] == 13 and trec["details"]["n_missing"] == 3
    assert trec["metrics"] == jsonl["metrics"]
    recall, ndcg = by_hand(source, FIXTURE_QRELS)
    assert (values(trec)["R@5"], round(values(trec)["nDCG@10"], 6)) == (recall, round(ndcg, 6)) == (0.625, 0.59375)


def test_paired_test_on_mtrag_runs_matches_scipy(tmp_path, capsys, monkeypatch) -> None:
    a, b = FIXTURE / "runs" / "clapnq_overlap_lastturn.jsonl", FIXTURE / "runs" / "clapnq_overlap_rewrite.jsonl"
    report = as_json(capsys, monkeypatch, "retrieval-eval", a, "--compare", b, "--qrels", FIXTURE_QRELS,
                     "--metrics", "ndcg@10", "--per-query", tmp_path / "a.jsonl", "--by", "none")
    as_json(capsys, monkeypatch, "retrieval-eval", b, "--qrels", FIXTURE_QRELS, "--metrics", "ndcg@10",
            "--per-query", tmp_path / "b.jsonl", "--by", "none")
    xs, ys = ([json.loads(line)["nDCG@10"] for line in (tmp_path / f).read_text().splitlines()]
              for f in ("a.jsonl", "b.jsonl"))
    c = report["details"]["comparison"]["metrics"]["nDCG@10"]
    assert len(xs) == len(ys) == 16
    assert c["p_value"] == pytest.approx(ttest_rel(xs, ys).pvalue, rel=1e-9)
    assert c["significant"] and c["p_value"] < 0.05  # the rewrites' gain over the vague last turns
    assert c["a"] == pytest.approx(sum(xs) / 16, abs=1e-6) and c["b"] == pytest.approx(sum(ys) / 16, abs=1e-6)


README_FIGURES = {  # Recall@5, nDCG@10 stated in ../shared/data/mtrag/README.md
    "elser_rewrite": (0.552, 0.578), "elser_lastturn": (0.511, 0.527), "bge_rewrite": (0.462, 0.498),
    "bm25_rewrite": (0.270, 0.294), "bm25_lastturn": (0.223, 0.255),
}


@requires_shared("mtrag", "retrieval/clapnq/qrels.tsv",
                 *(f"runs/clapnq_{system}.jsonl" for system in [*README_FIGURES, "bge_lastturn"]))
def test_reproduces_the_mtrag_readme_figures(tmp_path, capsys, monkeypatch) -> None:
    """The figures measured on MTRAG's real clapnq runs (../shared/data/mtrag; skipped, saying so, without it):
    every system's, again after a TREC conversion, and ELSER's significant gain over BM25."""
    mtrag = SHARED_DATA / "mtrag"
    qrels = mtrag / "retrieval" / "clapnq" / "qrels.tsv"
    for system in [*README_FIGURES, "bge_lastturn"]:
        report = as_json(capsys, monkeypatch, "retrieval-eval", mtrag / "runs" / f"clapnq_{system}.jsonl",
                         "--qrels", qrels)
        # every judged query has a run line and every run line has qrels: MTRAG's convention and ours agree
        assert counts(report) == (208, 0, 0, 0), system
        assert groups(report, "domain")["clapnq"]["n"] == 208, system
        turns = groups(report, "turn")
        assert turns["first"]["n"] + turns["later"]["n"] == 208, system
        got = (round(values(report)["R@5"], 3), round(values(report)["nDCG@10"], 3))
        if system in README_FIGURES:
            assert got == README_FIGURES[system], system
        else:  # no stated figure: rewriting still helps the dense retriever
            assert got[0] < README_FIGURES["bge_rewrite"][0], system

    run = read_run(mtrag / "runs" / "clapnq_bm25_lastturn.jsonl")  # has score ties and an empty ranking
    write_trec_run(run, tmp_path / "bm25.trec")
    report = as_json(capsys, monkeypatch, "retrieval-eval", tmp_path / "bm25.trec", "--qrels", qrels,
                     "--metrics", "recall@5,ndcg@10", "--by", "none")
    details = report["details"]
    assert details["n_run_queries"] == 207 and details["n_missing"] == 1  # TREC cannot write an empty ranking
    assert (round(values(report)["R@5"], 3), round(values(report)["nDCG@10"], 3)) == (0.223, 0.255)

    a, b = mtrag / "runs" / "clapnq_bm25_rewrite.jsonl", mtrag / "runs" / "clapnq_elser_rewrite.jsonl"
    report = as_json(capsys, monkeypatch, "retrieval-eval", a, "--compare", b, "--qrels", qrels,
                     "--metrics", "ndcg@10", "--per-query", tmp_path / "a.jsonl", "--by", "none")
    as_json(capsys, monkeypatch, "retrieval-eval", b, "--qrels", qrels, "--metrics", "ndcg@10",
            "--per-query", tmp_path / "b.jsonl", "--by", "none")
    xs, ys = ([json.loads(line)["nDCG@10"] for line in (tmp_path / f).read_text().splitlines()]
              for f in ("a.jsonl", "b.jsonl"))
    c = report["details"]["comparison"]["metrics"]["nDCG@10"]
    assert c["p_value"] == pytest.approx(ttest_rel(xs, ys).pvalue, rel=1e-9)
    assert c["significant"] and c["p_value"] < 1e-6 and round(c["b"], 3) == 0.578 and round(c["a"], 3) == 0.294

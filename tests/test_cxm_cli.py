"""`ragjudge cxm score` on the documented example (every metric, hand-computed), `ragjudge eval --bench cxm-*`
(through the real CLI and the local LLM server; the one front door: `cxm score` is the same call per task),
retrieval and the embedding baseline, and the one-line errors for bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import conftest
import pytest

from ragjudge.bench.cxm.kb_refinement.scorers import DEFAULT_THRESHOLDS
from ragjudge.testing.openai_server import OpenAIServer, Request

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "cxm"


def run_cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, *args: str) -> tuple[int, str, str]:
    return conftest.run_cli(list(args), monkeypatch, capsys)


def by_task(stdout: str) -> dict[str, dict]:
    """Summaries by task (their title without "CXMArena "): `cxm score` prints a list of summaries (the result
    contract), a run its one summary."""
    data = json.loads(stdout)
    return {s["title"].removeprefix("CXMArena "): s for s in (data if isinstance(data, list) else [data])}


def values(summary: dict, taxonomy: str | None = None) -> dict:
    """A summary's metric values by name; with `taxonomy`, that taxonomy's own (the intent breakdown)."""
    if taxonomy is not None:
        return {k: v["value"] for k, v in summary["breakdowns"]["taxonomy"]["groups"][taxonomy]["metrics"].items()}
    return {k: v["value"] for k, v in summary["metrics"].items()}


def test_example_scores_offline_with_every_metric(monkeypatch, capsys) -> None:
    """The README's command, with JSON output: the numbers worked out by hand in examples/cxm/README.md."""
    code, out, _ = run_cli(monkeypatch, capsys, "cxm", "score", "--data", str(EXAMPLE), "--format", "json")
    assert code == 0
    reports = by_task(out)
    assert len(json.loads(out)) == 7  # one summary per task, the two intent taxonomies in one
    intent = reports["intent prediction (flat, 5 intents; two_level, 6 intents)"]
    flat = values(intent, "flat")
    assert flat["accuracy (exact match)"] == 0.5 and flat["accuracy (LLM-verified)"] == pytest.approx(4 / 6)
    assert flat["macro-F1"] == pytest.approx(8 / 15)
    two = values(intent, "two_level")
    assert two["accuracy (exact match)"] == pytest.approx(4 / 6) and two["level-1 accuracy"] == 1.0
    assert two["accuracy (LLM-verified)"] is None  # no verdicts recorded for this taxonomy
    pooled = values(intent)  # both taxonomies: 3 + 4 right of 12; the verdicts are flat's 6; level 1 two_level's
    assert pooled["accuracy (exact match)"] == pytest.approx(7 / 12) and pooled["cases"] == 12
    assert pooled["accuracy (LLM-verified)"] == pytest.approx(4 / 6) and pooled["level-1 accuracy"] == 1.0
    assert intent["metrics"]["level-1 accuracy"]["n"] == 6 and intent["metrics"]["accuracy (LLM-verified)"]["n"] == 6
    quality = values(reports["agent quality adherence"])
    assert quality["question accuracy"] == pytest.approx(6 / 9)
    assert quality["case accuracy (all questions right)"] == pytest.approx(1 / 3)
    assert quality["question F1 (true)"] == pytest.approx(5 / 6)
    assert quality["evidence precision"] == pytest.approx(4 / 6) and quality["evidence recall"] == pytest.approx(4 / 6)
    tools = values(reports["tool calls"])
    assert [tools[f"tool-selection accuracy @{n} tools"] for n in (4, 8, 16)] == [1.0, 0.75, 0.5]
    assert tools["tool-selection accuracy"] == 0.75 and tools["argument match"] == pytest.approx(8 / 12)
    assert tools["argument values right"] == pytest.approx(10 / 15) and tools["no tool called"] == pytest.approx(1 / 12)
    classes = values(reports["multi-turn answer classification"])
    assert [classes[f"{c} share"] for c in ("Correct", "Incorrect", "Hallucination", "Refusal")] == [0.5, 0, 0.25, 0.25]
    assert classes["judge agreement with gold labels"] == 0.75
    assert classes["retrieval recall of gold articles"] == 0.75  # r3 retrieved KB_6 instead of KB_5
    kb = reports["KB refinement"]
    m = values(kb)
    assert m["similar precision"] == 0.5 and m["similar recall"] == 1.0
    assert m["contradictory precision"] == 1.0 and m["contradictory recall"] == 0.5
    sweeps = [t for t in kb["tables"] if "by threshold (an analysis of the embedding baseline" in t["title"]]
    assert len(sweeps) == 1 and all(len(t["rows"]) == len(DEFAULT_THRESHOLDS) for t in sweeps)  # similar pairs only
    for table in sweeps:  # a higher threshold never predicts more pairs; eight distinct articles never reach 0.95
        predicted = [row[1] for row in table["rows"]]
        assert predicted == sorted(predicted, reverse=True) and predicted[-1] == 0
    search = values(reports["article search"])
    assert search["P@1"] == 0.6 and search["R@1"] == 0.5 and search["R@3"] == 0.8
    assert search["P@3"] == pytest.approx(1 / 3) and search["MRR"] == pytest.approx(0.7)


def test_every_metric_says_its_kind_direction_and_no_paper_figure_describes_a_predictions_file(monkeypatch,
                                                                                                capsys) -> None:
    """Counts are counts (never a score on a 0-1 axis), shares of a behaviour are rates with the paper's
    direction, thresholds are numbers. A predictions file names no system: no paper figure is printed beside it,
    and one note line says so (issue 23: it used to print every paper table whatever the run)."""
    code, out, err = run_cli(monkeypatch, capsys, "cxm", "score", "--data", str(EXAMPLE), "--format", "json")
    assert code == 0, err
    summaries = by_task(out)
    kinds = {name: (m["kind"], m["higher_is_better"]) for s in summaries.values() for name, m in s["metrics"].items()}
    for name in ("cases", "scored", "errors", "missing", "questions answered", "unparsable answers", "queries",
                 "ranked", "turns", "classified", "predictions", "articles truncated by the encoder"):
        assert kinds[name][0] == "count", name
    assert kinds["errors"] == ("count", False) and kinds["missing"] == ("count", False)
    assert kinds["Hallucination share"] == ("rate", False) and kinds["Correct share"] == ("rate", True)
    assert kinds["Refusal share"] == ("rate", None) and kinds["no tool called"] == ("rate", False)
    assert kinds["baseline:minilm oracle threshold (picked on all gold pairs: upper bound)"] == ("number", None)
    assert kinds["accuracy (exact match)"] == ("score", True) and kinds["hit@10"] == ("score", True)
    for summary in summaries.values():
        assert summary["schema"] == "ragjudge.summary/1" and summary["n_errors"] == 0 and summary["headline"]
        assert summary["reference"] == []
        [why] = [n for n in summary["notes"] if n.startswith("no paper figure is shown: ")]
        assert why == ("no paper figure is shown: this run scores a predictions file, which names no system (model, "
                       "retriever, prompts) to match the paper's rows")
        counts = [name for name, m in summary["metrics"].items() if m["kind"] == "count"]
        first_count = list(summary["metrics"]).index(counts[0]) if counts else len(summary["metrics"])
        assert all(m["kind"] in ("count", "number") for m in list(summary["metrics"].values())[first_count:])
    assert summaries["article search"]["headline"]["text"] == "hit@10 0.800 over 5 queries; MRR 0.700 over 5 queries"


def test_bad_predictions_are_one_line_errors(monkeypatch, capsys, tmp_path: Path) -> None:
    bad = tmp_path / "p.jsonl"
    bad.write_text('{"case_id": "c1", "taxonomy": "flat", "intent": "Roaming"}\n'
                   '{"case_id": "zz", "taxonomy": "flat"}\n')
    code, out, err = run_cli(monkeypatch, capsys, "cxm", "score", "--task", "intent", "--data", str(EXAMPLE),
                             "-T", f"predictions={bad}")
    assert code == 2 and out == ""
    assert err.strip() == f"error: {bad}:2: field 'case_id': unknown case 'zz'"
    code, _, err = run_cli(monkeypatch, capsys, "cxm", "score", "--task", "tool-call", "--data", str(tmp_path),
                           "-T", f"predictions={bad}")
    assert code == 2 and "no tool definitions found" in err and "Traceback" not in err
    code, _, err = run_cli(monkeypatch, capsys, "cxm", "score", "--task", "psychic", "--data", str(EXAMPLE))
    assert code == 2 and "unknown CXMArena task 'psychic'" in err
    code, _, err = run_cli(monkeypatch, capsys, "eval", "--bench", "cxm", "--gen", "bm25", "--data", str(EXAMPLE))
    assert code == 2 and "CXMArena tasks are separate benches: cxm-answer-classification" in err


def test_partial_predictions_exit_1(monkeypatch, capsys, tmp_path: Path) -> None:
    part = tmp_path / "p.jsonl"
    part.write_text('{"query_id": "s1", "ranking": ["KB_1"]}\n')
    code, out, _ = run_cli(monkeypatch, capsys, "cxm", "score", "--task", "search", "--data", str(EXAMPLE),
                           "-T", f"predictions={part}", "-T", "ks=1", "--format", "json")
    assert code == 1
    [summary] = json.loads(out)
    assert values(summary)["missing"] == 4 and values(summary)["P@1"] == 1.0
    assert summary["n_errors"] == 4 and summary["metrics"]["P@1"]["n"] == 1


def test_cxm_score_is_eval_with_the_same_option_names(monkeypatch, capsys, tmp_path: Path) -> None:
    """`cxm score -T ks=1,3` is `eval --bench cxm-TASK -T predictions=... -T ks=1,3`: the same summary, the same
    one-line errors; a -T option no task scored has is an error, never ignored."""
    args = ["cxm", "score", "--task", "multiturn-retrieval", "--data", str(EXAMPLE), "--format", "json"]
    code, scored, err = run_cli(monkeypatch, capsys, *args, "-T", "ks=1,3")
    assert code == 0, err
    [summary] = json.loads(scored)
    m = values(summary)  # examples/cxm/README.md, by hand
    assert m["R@1"] == 0.5 and m["R@3"] == 0.75 and m["MRR"] == 0.625 and "R@10" not in m
    code, out, err = run_cli(monkeypatch, capsys, "eval", "--bench", "cxm-multiturn-retrieval", "--data",
                             str(EXAMPLE), "-T", f"predictions={EXAMPLE / 'predictions' / 'multiturn-retrieval.jsonl'}",
                             "-T", "ks=1,3", "--out", str(tmp_path / "run"), "--format", "json")
    assert code == 0, err
    ran = json.loads(out)
    assert {k: v for k, v in ran.items() if k != "run"} == {k: v for k, v in summary.items() if k != "run"}
    assert ran["run"]["options"] == summary["run"]["options"]
    for flags, message in ((["-T", "ks=0,3"], "error: -T ks: each value must be a whole number >= 1, got '0'"),
                           (["-T", "ks=1", "-T", "ks=3"], "error: -T ks is given twice")):
        code, out, err = run_cli(monkeypatch, capsys, *args, *flags)
        assert code == 2 and out == "" and err.strip() == message
    code, out, err = run_cli(monkeypatch, capsys, "cxm", "score", "--task", "intent", "--data", str(EXAMPLE),
                             "-T", "ks=3")
    assert code == 2 and out == "" and err.strip() == "error: -T ks is not an option of --task intent"


def test_eval_dispatch_article_search_with_the_bm25_pipeline(monkeypatch, capsys, tmp_path: Path) -> None:
    code, out, _ = run_cli(monkeypatch, capsys, "eval", "--bench", "cxm-article-search", "--pipeline", "bm25",
                           "--data", str(EXAMPLE), "--out", str(tmp_path / "run"), "--format", "json")
    assert code == 0
    m = values(by_task(out)["article search"])
    # bm25 ranks: s1 KB_1 | s2 KB_3 KB_4 | s3 KB_6 KB_3 KB_5 | s4 KB_7 | s5 KB_8 (hits at ranks 1,1,3,1,1)
    assert m["P@1"] == 0.8 and m["R@1"] == pytest.approx(3.5 / 5) and m["R@3"] == 1.0
    assert m["MRR"] == pytest.approx((4 + 1 / 3) / 5)
    saved = [json.loads(x) for x in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert saved[2] == {"query_id": "s3", "ranking": saved[2]["ranking"], "retriever": "bm25"}
    assert saved[2]["ranking"][:3] == ["KB_6", "KB_3", "KB_5"]
    # the run's predictions score to the same numbers offline
    code, out, _ = run_cli(monkeypatch, capsys, "cxm", "score", "--task", "article-search", "--data", str(EXAMPLE),
                           "-T", f"predictions={tmp_path / 'run' / 'results.jsonl'}", "--format", "json")
    assert values(by_task(out)["article search"]) == m


def test_kb_refinement_run_is_the_papers_baseline_not_a_threshold_picked_on_gold(monkeypatch, capsys,
                                                                                tmp_path: Path) -> None:
    """The run predicts each article's k nearest neighbours above a fixed threshold (checked against a brute-force
    computation); the sweep and the oracle pick are analysis metrics with their own names; no contradictions
    without a pair judge."""
    import numpy as np

    from ragjudge.bench.cxm.data import load_articles
    from ragjudge.bench.cxm.kb_refinement.data import load_pairs
    from ragjudge.retrieval.encoders import SentenceTransformerEncoder

    code, out, _ = run_cli(monkeypatch, capsys, "eval", "--bench", "cxm-kb-refinement", "--data", str(EXAMPLE),
                           "-T", "threshold=0.5", "-T", "k=2", "--out", str(tmp_path / "kb"), "--format", "json")
    assert code == 0
    report = json.loads(out)
    rows = [json.loads(x) for x in (tmp_path / "kb" / "results.jsonl").read_text().splitlines()]
    assert {r["kind"] for r in rows} == {"similar"} and all(r["threshold"] == 0.5 for r in rows)
    articles = load_articles(EXAMPLE, "kb-refinement")
    ids = list(articles)
    vectors = SentenceTransformerEncoder("minilm").encode([a.full_text for a in articles.values()])
    sim = vectors @ vectors.T
    expected = set()
    for i in range(len(ids)):  # brute force: each article's 2 nearest others, either direction, >= 0.5
        others = sorted((j for j in range(len(ids)) if j != i), key=lambda j: -sim[i, j])[:2]
        expected |= {frozenset((ids[i], ids[j])) for j in others if sim[i, j] >= 0.5}
    assert {frozenset(r["pair"]) for r in rows} == expected
    gold = load_pairs(EXAMPLE)["similar"]
    tp = len(expected & gold)
    assert report["metrics"]["similar precision"]["value"] == pytest.approx(tp / len(expected))
    assert report["metrics"]["similar recall"]["value"] == pytest.approx(tp / len(gold))
    assert "contradictory F1" not in report["metrics"]
    assert "baseline:minilm oracle similar F1 (upper bound, not a result)" in report["metrics"]
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


def test_eval_bench_cxm_takes_a_models_file(monkeypatch, capsys, tmp_path: Path) -> None:
    """`eval --bench cxm-quality` routes its model as every bench does: endpoint and key variable from --models."""
    monkeypatch.setenv("LOCAL_KEY", "sk-local-secret-1234")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with OpenAIServer(quality_answers) as server:
        server.valid_key = "sk-local-secret-1234"
        models = tmp_path / "models.yaml"
        models.write_text(f"""model_list:
  - model_name: qa
    litellm_params: {{model: openai/qa-local, api_base: "{server.base_url}", api_key: os.environ/LOCAL_KEY}}
""")
        code, out, err = run_cli(monkeypatch, capsys, "eval", "--bench", "cxm-quality", "--data", str(EXAMPLE),
                                 "--gen", "qa", "--models", str(models), "--rpm", "600",
                                 "--out", str(tmp_path / "run"), "--cache-dir", str(tmp_path / "cache"),
                                 "--format", "json")
        assert {r.model for r in server.requests} == {"qa-local"} and server.chat_count() == 3
    assert code == 0, err
    assert values(by_task(out)["agent quality adherence"])["question accuracy"] == 1.0


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
    m = values(by_task(out)["agent quality adherence"])
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
    m = values(by_task(out)["tool calls"])
    assert m["tool-selection accuracy @16 tools"] == 0.25  # only t1 wants refund_charge alone
    saved = [json.loads(x) for x in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert {r["mode"] for r in saved} == {"forced"}


@pytest.mark.parametrize("bench, extra, message", [
    ("cxm-quality", ["-T", "setting=rag"], "unknown option -T setting for bench cxm-quality"),
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


@pytest.mark.parametrize("bench, args, message", [
    ("cxm-kb-refinement", ["-T", "k=-3"], "error: -T k must be a whole number >= 1, got -3"),
    ("cxm-kb-refinement", ["-T", "threshold=2"], "error: -T threshold must be a number from -1 to 1, got 2"),
    ("cxm-kb-refinement", ["-T", "seed=-1"], "error: -T seed must be a whole number >= 0, got -1"),
    ("cxm-kb-refinement", ["-T", "judge_k=0"], "error: -T judge_k must be a whole number >= 1, got 0"),
    ("cxm-article-search", ["-T", "ks=0,3"], "error: -T ks: each value must be a whole number >= 1, got '0'"),
    ("cxm-article-search", ["-T", "chunk_overlap=-1"], "error: -T chunk_overlap must be a whole number >= 0, got -1"),
    ("cxm-multiturn-retrieval", ["-T", "chunk=big"], "error: -T chunk: must be a whole number of characters >= 0 "
                                                     "(0: whole articles) or 'pipeline' (the pipeline's own "
                                                     "chunking), got 'big'"),
    ("cxm-tool-calls", ["--gen", "openai/m", "-T", "tool_counts=16,-4"],
     "error: -T tool_counts: each value must be a whole number >= 1, got '-4'"),
    ("cxm-answer-classification", ["--judge-models", "openai/j", "-T", "k=0"],
     "error: -T k must be a whole number >= 1, got 0"),
])
def test_option_values_out_of_range_say_the_range(monkeypatch, capsys, tmp_path: Path, bench, args, message) -> None:
    code, out, err = run_cli(monkeypatch, capsys, "eval", "--bench", bench, "--data", str(EXAMPLE), *args,
                             "--out", str(tmp_path / "run"))
    assert code == 2 and out == "" and err.strip() == message
    assert not (tmp_path / "run").exists()


def test_every_numeric_option_declares_its_range() -> None:
    """The generic -T message states a range only if the option declares it (pydantic ge/le): every number a CXM
    option takes, alone or in a list, refuses a value far below its range with a range error, not a type error."""
    from pydantic import ValidationError

    from ragjudge.bench.cxm.tasks import TASKS, bench_class
    from ragjudge.engine.bench_options import describe_option

    checked = []
    for cls in map(bench_class, TASKS):
        for key, info in cls.Options.model_fields.items():
            shown = describe_option(info)
            if "number" not in shown and key != "chunk":  # chunk: characters or 'pipeline', its own message
                continue
            value = [-10**6] if shown.startswith("comma-separated") else -10**6
            with pytest.raises(ValidationError) as caught:
                cls.Options.model_validate({"data": str(EXAMPLE), key: value})
            assert caught.value.errors()[0]["type"] in ("greater_than_equal", "value_error"), (cls.name, key)
            checked.append(f"{cls.name} {key}")
    assert {"cxm-kb-refinement threshold", "cxm-kb-refinement seed", "cxm-kb-refinement judge_k",
            "cxm-tool-calls tool_counts", "cxm-article-search ks", "cxm-multiturn-retrieval chunk",
            "cxm-answer-classification k", "cxm-answer-classification chunk_overlap"} <= set(checked)
    assert describe_option(bench_class("kb-refinement").Options.model_fields["threshold"]) == "a number from -1 to 1"


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
                             *(["-T", "baseline=false"] if task == "kb-refinement" else []))
    assert code == 2 and out == ""
    [message] = err.strip().splitlines()
    assert message.startswith(f"error: {data / name}:{line}: ")
    if field:
        assert f"field '{field}'" in message


@pytest.mark.parametrize("task, row, field", [
    ("quality", {"case_id": "a1", "answers": "true"}, "answers"),
    ("quality", {"case_id": "a1", "answers": [{"question_id": "greet", "answer": True, "evidence": [{"id": 1}]}]},
     "answers[0].evidence"),
    ("quality", {"case_id": "a1", "answers": [{"question_id": "greet", "answer": True},
                                              {"question_id": "no-such-question", "answer": True}]},
     "answers[1].question_id"),
    ("quality", {"case_id": "a1", "answers": [{"question_id": "greet", "answer": "maybe"}]}, "answers[0].answer"),
    ("article-search", {"query_id": "s1", "ranking": [{"id": "KB_1"}]}, "ranking"),
    ("answer-classification", {"case_id": "r1", "label": "Correct", "retrieved_ids": [None]}, "retrieved_ids"),
    ("answer-classification", {"case_id": "r1", "label": "Correct", "ranking": [{"id": "KB_1"}]}, "ranking"),
    ("multiturn-retrieval", {"case_id": "r1", "ranking": "KB_1"}, "ranking"),
])
def test_malformed_prediction_rows_are_one_line_errors(monkeypatch, capsys, tmp_path: Path, task, row, field) -> None:
    bad = tmp_path / "p.jsonl"
    bad.write_text(json.dumps(row) + "\n")
    code, out, err = run_cli(monkeypatch, capsys, "cxm", "score", "--task", task, "--data", str(EXAMPLE),
                             "-T", f"predictions={bad}")
    assert code == 2 and out == ""
    [message] = err.strip().splitlines()
    assert message.startswith(f"error: {bad}:1: field '{field}': ")


def test_ranking_names_retrieved_articles_in_every_predictions_file(monkeypatch, capsys, tmp_path: Path) -> None:
    """Answer classification reads `ranking` like search and multi-turn retrieval; its old `retrieved_ids` is still
    read, with a deprecation note naming the file and line, to the same figures."""
    rows = [json.loads(x) for x in (EXAMPLE / "predictions" / "answer-classification.jsonl").read_text().splitlines()]
    assert all("ranking" in r and "retrieved_ids" not in r for r in rows)  # the documented example
    old = tmp_path / "old.jsonl"
    old.write_text("".join(json.dumps({("retrieved_ids" if k == "ranking" else k): v for k, v in r.items()}) + "\n"
                           for r in rows))
    args = ["cxm", "score", "--task", "answer-classification", "--data", str(EXAMPLE), "--format", "json"]
    code, new_out, err = run_cli(monkeypatch, capsys, *args)
    assert code == 0 and "deprecated" not in err
    code, old_out, err = run_cli(monkeypatch, capsys, *args, "-T", f"predictions={old}")
    assert code == 0
    assert err.strip() == (f"warning: {old}:1: 'retrieved_ids' is deprecated: use 'ranking' (the retrieved article "
                           "ids, best first; 4 row(s))")
    [new_summary], [old_summary] = json.loads(new_out), json.loads(old_out)
    assert values(old_summary) == values(new_summary) and values(new_summary)["retrieval recall of gold articles"] == 0.75
    assert old_summary["warnings"] == [err.strip()]


def intent_answers(request: Request) -> str:
    """The model under test answers Roaming for every flat-taxonomy conversation; the judge accepts every label."""
    if "[Taxonomy: flat]" in request.prompt:
        return '{"intent": "Roaming"}'
    assert "Verdict" in request.prompt, request.prompt[:200]
    return "Same reason, other words.\nVerdict: yes"


def test_eval_bench_cxm_intent_with_a_judge(monkeypatch, capsys, tmp_path: Path) -> None:
    """`eval --bench cxm-intent --gen M --judge-models J`: the model under test, then the judge on each wrong label
    (the LLM-verified accuracy); the run names both models, and its sample log carries the judge's verdicts."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with OpenAIServer(intent_answers) as server:
        code, out, err = run_cli(monkeypatch, capsys, "eval", "--bench", "cxm-intent", "--data", str(EXAMPLE), "-T",
                                 "taxonomy=flat", "--api-base", server.base_url, "--cache-dir", str(tmp_path / "cache"),
                                 "--gen", "openai/m", "--judge-models", "openai/j", "--out", str(tmp_path / "run"),
                                 "--format", "json")
        assert {r.model for r in server.requests} == {"m", "j"}
    assert code == 0, err
    m = values(json.loads(out))
    assert m["accuracy (exact match)"] == pytest.approx(1 / 6) and m["accuracy (LLM-verified)"] == 1.0
    assert json.loads(out)["run"]["models"] == {"generator": "openai/m", "judge": "openai/j"}
    samples = [json.loads(x) for x in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]
    judged = [s["scores"]["accuracy (LLM-verified)"] for s in samples if s["target"] != "Roaming"]
    assert judged and all(v == {"value": 1.0, "model": "openai/j", "raw": "Same reason, other words.\nVerdict: yes"}
                          for v in judged)


def only_intent_predictions(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    shutil.copytree(EXAMPLE, data)
    for path in (data / "predictions").iterdir():
        if path.name != "intent.jsonl":
            path.unlink()
    return data


@pytest.mark.parametrize("args, message", [
    # `eval`: the bench's own words are what the user typed (-T KEY=VALUE, the common flags)
    (["eval", "--bench", "cxm-multiturn-retrieval", "-T", "query=llm"],
     "error: -T query=llm needs the model that writes queries: --rewrite-model MODEL"),
    (["eval", "--bench", "cxm-multiturn-retrieval", "-T", "query=last_turn", "--rewrite-model", "openai/w"],
     "error: --rewrite-model is only used with -T query=llm, not last_turn"),
    (["eval", "--bench", "cxm-answer-classification", "--judge-models", "openai/j", "-T", "query=bogus"],
     "error: -T query: unknown strategy 'bogus' (available: last_turn, all_user_turns, full_conversation, llm)"),
    (["eval", "--bench", "cxm-quality", "--gen", "openai/m", "-T", "protocol=bogus"],
     "error: -T protocol must be ragjudge or paper, got 'bogus'"),
    (["eval", "--bench", "cxm-article-search", "-T", "chunk=50"],
     "error: -T chunk_overlap (100) must be smaller than -T chunk (50)"),
    (["eval", "--bench", "cxm-article-search", "-T", "chunk=0", "-T", "chunk_overlap=10"],
     "error: -T chunk_overlap applies to chunks of characters (-T chunk=N), not -T chunk=0 (whole articles)"),
    (["eval", "--bench", "cxm-article-search", "--pipeline", "bm25", "--gen", "openai/m"],
     "error: --gen is not used by bench cxm-article-search"),
    (["eval", "--bench", "cxm-intent", "--gen", "openai/m", "--judge-models", "openai/a,openai/b"],
     "error: bench cxm-intent takes one judge model, got 2: openai/a, openai/b"),
    (["eval", "--bench", "cxm-kb-refinement", "-T", "k=0"], "error: -T k must be a whole number >= 1, got 0"),
    # `cxm score`: the same words, and an option no task scored has is an error, not ignored
    (["score", "--task", "intent", "-T", "protocol=bogus"], "error: -T protocol must be ragjudge or paper, got 'bogus'"),
    (["score", "-T", "protocol=bogus"], "error: -T protocol must be ragjudge or paper, got 'bogus'"),
    (["score", "--task", "quality", "-T", "baseline=false"], "error: -T baseline is not an option of --task quality"),
    (["score", "ONLY_INTENT", "-T", "baseline=false"],
     "error: -T baseline is not an option of any task scored here (intent)"),
    (["score", "-T", "predictions=p.jsonl"], "error: -T predictions names one task's file: give --task"),
])
def test_cxm_errors_name_what_was_typed(monkeypatch, capsys, tmp_path: Path, args, message) -> None:
    """An error names the option as the user typed it, in `eval` and in `cxm score` alike (one vocabulary: `cxm run`
    and its flags that rewrote the bench's words into their own are gone); nothing is written."""
    data = only_intent_predictions(tmp_path) if "ONLY_INTENT" in args else EXAMPLE
    args = [a for a in args if a != "ONLY_INTENT"]
    command = ["cxm", *args] if args[0] == "score" else args
    command += ["--data", str(data)] + (["--out", str(tmp_path / "never")] if args[0] != "score" else [])
    code, out, err = run_cli(monkeypatch, capsys, *command)
    assert code == 2 and out == "", err
    assert err.strip() == message
    assert not (tmp_path / "never").exists()


def test_an_option_without_a_flag_of_its_own_reaches_the_index(monkeypatch, capsys, tmp_path: Path) -> None:
    """`-T chunk_overlap` and `-T chunk` shape the index the run searches: run.json says how it was chunked."""
    code, out, err = run_cli(monkeypatch, capsys, "eval", "--bench", "cxm-multiturn-retrieval", "-T", "chunk=200",
                             "--data", str(EXAMPLE), "--pipeline", "bm25", "-T", "chunk_overlap=50", "--out",
                             str(tmp_path / "run"), "--format", "json")
    assert code == 0, err
    info = json.loads((tmp_path / "run" / "run.json").read_text())["index"]
    assert info["chunking"] == "chunks of 200 characters (overlap 50)"
    assert values(json.loads(out))["R@10"] > 0


def test_cxm_score_prints_each_tasks_headline_and_legend(monkeypatch, capsys) -> None:
    """Every task's table says which way each metric is better and ends with its headline line, as every bench
    does (only mtrag used to)."""
    monkeypatch.setenv("COLUMNS", "400")
    args = ["cxm", "score", "--data", str(EXAMPLE), "-T", "baseline=false"]
    code, out, _ = run_cli(monkeypatch, capsys, *args, "--format", "json")
    assert code == 0
    summaries = json.loads(out)
    code, table, _ = run_cli(monkeypatch, capsys, *args)
    assert code == 0
    assert table.count("↑ higher is better, ↓ lower is better") == len(summaries) == 7
    position = 0
    for summary, following in zip(summaries, [*summaries[1:], None]):
        start = table.index(summary["title"] + "\n", position)
        end = table.index(following["title"] + "\n", start) if following else len(table)
        assert summary["headline"]["text"] in table[start:end], summary["title"]
        position = end


@pytest.mark.parametrize("name, field, task", [
    ("intent.jsonl", "conversation_id", "intent"),
    ("taxonomy.jsonl", "taxonomy", "intent"),
    ("quality.jsonl", "conversation_id", "quality"),
    ("tool_calls.jsonl", "case_id", "tool-calls"),
    ("tools.jsonl", "type", "tool-calls"),
    ("multi_turn.jsonl", "case_id", "multiturn-retrieval"),
    ("search_queries.jsonl", "query_id", "article-search"),
    ("articles.jsonl", "id", "article-search"),
])
def test_a_wrong_typed_id_or_name_is_one_line_error(monkeypatch, capsys, tmp_path: Path, name, field, task) -> None:
    """An id, a taxonomy name or a tool's type that is an object used to be read as its text ("{'not': ...}") and
    scored as if nothing were wrong (exit 0): now file:line, the field, exit 2, nothing written."""
    data = tmp_path / "data"
    shutil.copytree(EXAMPLE, data)
    lines = (data / name).read_text().splitlines()
    row = json.loads(lines[0])
    row[field] = {"not": "a string"}
    lines[0] = json.dumps(row)
    (data / name).write_text("\n".join(lines) + "\n")
    code, out, err = run_cli(monkeypatch, capsys, "eval", "--bench", f"cxm-{task}", "--data", str(data), "-T",
                             f"predictions={data / 'predictions' / (task + '.jsonl')}", "--out", str(tmp_path / "run"))
    assert code == 2 and out == "", err
    [message] = err.strip().splitlines()
    assert message.startswith(f"error: {data / name}:1: field '{field}': ") and "{'not': 'a string'}" in message
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("change, field", [({"n_tools": -1}, "n_tools"), ({"n_tools": 4.5}, "n_tools"),
                                           ({"n_tools": True}, "n_tools"), ({"mode": "sometimes"}, "mode"),
                                           ({"tool_calls": "refund_charge"}, "tool_calls")])
def test_a_tool_call_prediction_out_of_range_or_mistyped_is_one_line(monkeypatch, capsys, tmp_path: Path, change,
                                                                     field) -> None:
    """`n_tools: -1` (or 4.5, true) used to be scored as a size of its own, and any `mode` accepted."""
    rows = [json.loads(x) for x in (EXAMPLE / "predictions" / "tool-calls.jsonl").read_text().splitlines()]
    rows[1].update(change)
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, out, err = run_cli(monkeypatch, capsys, "cxm", "score", "--task", "tool-calls", "--data", str(EXAMPLE),
                             "-T", f"predictions={path}")
    assert code == 2 and out == ""
    [message] = err.strip().splitlines()
    assert message.startswith(f"error: {path}:2: field '{field}': ")


def test_a_second_kb_score_reads_every_article_embedding_from_the_store(monkeypatch, capsys, tmp_path: Path) -> None:
    """`cxm score` of the same KB twice: the first encodes the articles (with a progress bar), the second none."""
    import shutil

    monkeypatch.setenv("RAGJUDGE_CACHE_DIR", str(tmp_path / "cache"))
    data = shutil.copytree(EXAMPLE, tmp_path / "data")
    (data / "predictions" / "kb-refinement.jsonl").unlink()  # the baseline is what is scored
    args = ["cxm", "score", "--task", "kb-refinement", "--data", str(data)]
    code, out, err = run_cli(monkeypatch, capsys, *args)
    assert code == 0, err
    first = next(line for line in out.splitlines() if "article embeddings:" in line)
    assert "embed articles" in err  # the progress bar of the first encode
    assert "0 read from the embedding store" in first
    code, out, err = run_cli(monkeypatch, capsys, *args, "--format", "json")
    assert code == 0, err
    [summary] = json.loads(out)
    [note] = [n for n in summary["notes"] if n.startswith("article embeddings:")]
    encoded = int(first.split(", ")[-1].split()[0])
    assert encoded > 0 and note == f"article embeddings: {encoded} read from the embedding store, 0 encoded"

"""`ragjudge eval`: the embedded offline default, an LLM generator through the test server, bench lookup."""

from __future__ import annotations

import http.server
import json
import threading
from pathlib import Path

import pytest

from conftest import GOLDEN, MINI, assert_json_equal, model_derived, run_cli, run_cli_once
from ragjudge.bench.mtrag.data import download_mtrag, resolve_bench
from ragjudge.errors import RagjudgeError, UsageError
from ragjudge.generation.base import IDK_SENTENCE, GenerationInput
from ragjudge.generation.extractive import ExtractiveGenerator
from ragjudge.generation.llm import INSTRUCTION
from ragjudge.models import Passage, Task, Turn
from ragjudge.testing.openai_server import OpenAIServer, Request


BERTSCORE_DERIVED = model_derived(r"Bert|RB_agg|/rb_alg/")
"""JSON paths of the mini run whose values BERTScore computed (RB_alg's label is its value printed)."""


@pytest.fixture(scope="module")
def mini_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[tuple[int, str, str], Path]:
    out = tmp_path_factory.mktemp("mini") / "run"
    args = ["eval", "--bench", str(MINI), "--gen", "extractive", "--out", str(out), "--format", "json"]
    return run_cli_once(args), out


def test_mini_offline_eval_summary(mini_run) -> None:
    (code, stdout, stderr), out = mini_run
    assert code == 0, stderr
    summary = json.loads(stdout)
    assert summary["schema"] == "ragjudge.summary/1" and summary["bench"] == "mtrag"
    assert summary["n_samples"] == 40 and summary["n_errors"] == 0 and summary["unit"] == "tasks"
    metrics = summary["metrics"]
    assert set(metrics) >= {"idk_lexical", "RB_agg", "RougeL_stemFalse", "BertscoreR", "BertKPrec", "RB_agg_idk",
                            "answerability_acc"}
    assert metrics["RB_agg"]["n"] == 40 and metrics["RB_agg_idk"]["n"] == 37  # 3 conversational turns excluded
    assert metrics["RB_agg"]["higher_is_better"] is True and metrics["idk_lexical"]["higher_is_better"] is None
    assert {n: m["kind"] for n, m in metrics.items() if m["kind"] != "score"} == {"idk_lexical": "rate"}
    assert summary["headline"]["metric"] == "RB_agg_idk" and summary["headline"]["text"].startswith(
        f"RB_agg_idk {metrics['RB_agg_idk']['value']:.3f}, answerability_acc")
    b = summary["breakdowns"]
    assert b["answerability"]["groups"]["ANSWERABLE"]["n"] == 26 and b["answerability"]["groups"]["UNANSWERABLE"][
        "n"] == 6
    assert b["turn"]["groups"]["first"]["n"] == 10 and b["turn"]["groups"]["later"]["n"] == 30
    assert set(b["domain"]["groups"]) == {"mini-astronomy", "mini-cooking", "mini-finance"}
    assert "Follow-up" in b["multi_turn"]["groups"] and "Factoid" in b["question_type"]["groups"]
    assert b["question_type"]["note"] == "a task with several question types counts under each"
    assert b["answerability"]["columns"] == ["RB_agg_idk", "answerability_acc"]  # what the paper's tables show
    # The extractive baseline declines questions nothing supports: IDK conditioning rewards that.
    assert b["answerability"]["groups"]["UNANSWERABLE"]["metrics"]["RB_agg_idk"]["value"] > 0.5


def test_mini_results_are_those_of_before_the_engine_port(mini_run) -> None:
    """The golden files were written by `ragjudge eval --bench examples/mini --gen extractive` before the
    benchmarks moved onto the one engine: results and summary must not change. Exactly, except what BERTScore
    computed (BertscoreR, BertKPrec, RB_agg and RB_alg, their conditioned means and breakdowns), which is
    compared at the model tolerance: it moves in the 7th digit between CPUs (see conftest)."""
    (_, stdout, _), out = mini_run
    rows = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert_json_equal(rows, [json.loads(x) for x in (GOLDEN / "mini_results.jsonl").read_text().splitlines()],
                      BERTSCORE_DERIVED)
    assert_json_equal(legacy_summary(json.loads(stdout)), json.loads((GOLDEN / "mini_summary.json").read_text()),
                      BERTSCORE_DERIVED)


def legacy_summary(summary: dict) -> dict:
    """The summary in the shape it had when the golden file was written (before the result contract): the same
    numbers under their old keys, so the comparison shows that no figure moved."""
    return {
        "n_tasks": summary["n_samples"],
        "metrics": {name: {"mean": m["value"], "n": m["n"], "errors": m["errors"]}
                    for name, m in summary["metrics"].items()},
        "breakdowns": {dim: {value: {"n_tasks": g["n"], **{m: s["value"] for m, s in g["metrics"].items()}}
                             for value, g in b["groups"].items()} for dim, b in summary["breakdowns"].items()},
        "judges": summary["details"]["judges"],
    }


def test_mini_outputs_and_resume(mini_run, monkeypatch, capsys) -> None:
    (_, stdout, _), out = mini_run
    results = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(results) == 40 and all(r["predictions"][0]["text"] for r in results)
    run_info = json.loads((out / "run.json").read_text())
    assert run_info["generator"] == "extractive" and "all-MiniLM-L6-v2" in run_info["judges"]["rb_alg"][0]
    journals = {p: (out / p).read_text() for p in ("predictions.jsonl", "judgements.jsonl")}
    code, again, _ = run_cli(["eval", "--bench", str(MINI), "--gen", "extractive", "--out", str(out), "--format",
                              "json"], monkeypatch, capsys)
    assert code == 0
    assert {p: (out / p).read_text() for p in journals} == journals  # nothing generated or judged twice
    assert json.loads(again)["metrics"] == json.loads(stdout)["metrics"]


def test_table_output_shows_breakdowns(tmp_path: Path, monkeypatch, capsys) -> None:
    code, out, err = run_cli(["eval", "--bench", str(MINI), "--gen", "extractive", "--out", str(tmp_path / "r"),
                              "--limit", "6", "--judges", "idk_lexical"], monkeypatch, capsys)
    assert code == 0, err
    for title in ("By answerability", "First vs later turns", "By domain", "By question type", "By multi-turn type"):
        assert title in out


def test_llm_generator_through_the_test_server(tmp_path: Path, monkeypatch, capsys) -> None:
    seen: list[Request] = []

    def respond(request: Request) -> str:
        seen.append(request)
        return "Mars has two moons, Phobos and Deimos."

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with OpenAIServer(respond) as server:
        code, _, err = run_cli(["eval", "--bench", str(MINI), "--gen", "openai/gen-a", "--api-base", server.base_url,
                                "--limit", "3", "--judges", "idk_lexical", "--out", str(tmp_path / "r"), "--format",
                                "json"], monkeypatch, capsys)
    assert code == 0, err
    assert len(seen) == 3
    later_turn = max(seen, key=lambda r: len(r.messages))  # requests run concurrently: order is not fixed
    system = later_turn.messages[0]
    assert system["role"] == "system" and system["content"].startswith(INSTRUCTION) and "PASSAGE 1\n" in system["content"]
    roles = [m["role"] for m in later_turn.messages[1:]]
    assert roles == ["user", "assistant"] * (len(roles) // 2) + ["user"] and len(roles) == 5  # turn 3
    rows = [json.loads(line) for line in (tmp_path / "r" / "results.jsonl").read_text().splitlines()]
    assert {r["predictions"][0]["text"] for r in rows} == {"Mars has two moons, Phobos and Deimos."}


def test_unknown_bench_and_setting_are_usage_errors(tmp_path: Path, monkeypatch, capsys) -> None:
    code, _, err = run_cli(["eval", "--bench", "nope", "--gen", "extractive", "--out", str(tmp_path)], monkeypatch,
                           capsys)
    assert code == 2 and err.startswith("error: unknown bench 'nope'")
    code, _, err = run_cli(["eval", "--bench", str(MINI), "--gen", "extractive", "-T", "setting=magic", "--out",
                            str(tmp_path)], monkeypatch, capsys)
    assert code == 2 and err.startswith("error: unknown setting 'magic'")


def test_mtrag_bench_offline_error_says_how_to_point_at_a_local_copy(tmp_path: Path) -> None:
    with pytest.raises(RagjudgeError) as err:
        download_mtrag(tmp_path, urls=("http://127.0.0.1:9/reference.jsonl",), timeout=2)
    assert "--data PATH" in str(err.value) and "RAGJUDGE_DATA" in str(err.value)
    assert resolve_bench("mtrag", str(MINI)) == MINI
    with pytest.raises(UsageError):
        resolve_bench("mtrag", str(tmp_path / "missing"))


def test_mtrag_bench_download_into_the_cache(tmp_path: Path) -> None:
    served = tmp_path / "srv"
    served.mkdir()
    (served / "reference.jsonl").write_text((MINI / "tasks.jsonl").read_text())
    handler = lambda *a, **k: http.server.SimpleHTTPRequestHandler(*a, directory=str(served), **k)  # noqa: E731
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}/reference.jsonl"
        path = download_mtrag(tmp_path / "cache", urls=("http://127.0.0.1:9/missing", url))
        assert path.read_text() == (MINI / "tasks.jsonl").read_text()
        assert download_mtrag(tmp_path / "cache", urls=()) == path  # second time: from the cache
    finally:
        httpd.shutdown()


def _task(question: str, passages: list[str]) -> GenerationInput:
    task = Task(task_id="c::1", conversation_id="c", turn=1, input=[Turn(speaker="user", text=question)])
    return GenerationInput(task, [Passage(id=f"p{i}", text=t) for i, t in enumerate(passages)])


def test_extractive_generator_picks_supported_sentences_or_declines() -> None:
    gen = ExtractiveGenerator()
    passages = ["Mars is the fourth planet. Mars has two small moons named Phobos and Deimos. It is red."]
    assert gen.answer(_task("How many moons does Mars have?", passages)) == \
        "Mars has two small moons named Phobos and Deimos."
    assert gen.answer(_task("What is the capital of Peru?", passages)).startswith(IDK_SENTENCE)
    assert gen.answer(_task("How many moons does Mars have?", [])).startswith(IDK_SENTENCE)

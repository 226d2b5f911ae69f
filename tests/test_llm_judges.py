"""LLM judges end to end through litellm and a local OpenAI-compatible server: panel median, IDK
conditioning, unparsable answers as errors, and a rerun served entirely from the cache."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import run_cli_once

from ragjudge.judges.conditioning import answerability_correct, condition
from ragjudge.testing.openai_server import OpenAIServer, Request

PANEL = ["openai/j1", "openai/j2", "openai/j3"]
RATINGS = {"j1": "4", "j2": "8", "j3": "6"}


def responder(request: Request) -> str:
    prompt = request.prompt
    model = (request.model or "").split("/")[-1]
    if "[The Start of Reference Answer]" in prompt:  # RB_llm
        answer = re.search(r"\[The Start of Assistant's Answer\]\n(.*?)\n\[The End", prompt, re.S).group(1)
        if "GARBLED" in answer and (model == "j3" or "ALL" in answer):
            return "I would rather not rate this."
        return f"The answer is reasonable.\nRating: [[{RATINGS[model]}]]"
    response = prompt.rsplit("[Response]\n", 1)[1]  # IDK judge: the response under judgement
    if "UNPARSABLE" in response:
        return "Hmm, hard to say."
    if "do not have" in response:
        return "yes"
    if "partly" in response:
        return "partial"
    return "no"


def task(n: int, answerability: str, prediction: str) -> dict:
    return {
        "task_id": f"conv{n}::2", "conversation_id": f"conv{n}", "turn": 2, "Collection": "mt-rag-fiqa-beir-x",
        "input": [{"speaker": "user", "text": "What is an index fund?"},
                  {"speaker": "agent", "text": "A fund that tracks an index."},
                  {"speaker": "user", "text": f"Question {n}: and its fees?"}],
        "contexts": [] if answerability in ("UNANSWERABLE", "CONVERSATIONAL") else
        [{"document_id": f"d{n}", "text": "Index funds have low fees because they are passively managed.",
          "title": "Index funds", "score": 1.0}],
        "targets": [{"speaker": "agent", "text": "Index funds usually have low fees."}],
        "answerability": [answerability], "Question Type": ["Factoid"], "Multi-Turn": ["Follow-up"],
        "predictions": [{"text": prediction}],
    }


TASKS = [
    task(1, "ANSWERABLE", "They have low fees because they are passive."),          # IDK no → metric
    task(2, "ANSWERABLE", "I do not have specific information."),                   # IDK yes → 0
    task(3, "PARTIAL", "Fees are low; I can only partly answer the rest."),         # IDK partial → metric
    task(4, "UNANSWERABLE", "I do not have specific information about that."),      # IDK yes → 1
    task(5, "UNANSWERABLE", "Fees are 2% a year."),                                 # IDK no → 0
    task(6, "CONVERSATIONAL", "You're welcome!"),                                   # excluded
    task(7, "ANSWERABLE", "GARBLED but fine answer about low fees."),               # j3 unparsable
    task(8, "ANSWERABLE", "GARBLED ALL answer about low fees."),                    # every member unparsable
    task(9, "ANSWERABLE", "UNPARSABLE idk answer about low fees."),                 # IDK unparsable
]


def run_judge(server: OpenAIServer, source: Path, out: Path, cache: Path, *extra: str) -> tuple[int, str, str]:
    """`ragjudge judge` in-process with its own cache and key (the fixture is module-scoped)."""
    return run_cli_once(["judge", str(source), "--judges", "idk,rb_llm", "--judge-models", ",".join(PANEL),
                         "--api-base", server.base_url, "--out", str(out), "--format", "json", *extra],
                        env={"RAGJUDGE_CACHE_DIR": str(cache), "OPENAI_API_KEY": "sk-test-not-a-real-key-0000"})


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("llm")
    source = tmp / "preds.jsonl"
    source.write_text("".join(json.dumps(t) + "\n" for t in TASKS))
    with OpenAIServer(responder) as server:
        first = run_judge(server, source, tmp / "out.jsonl", tmp / "cache")
        requests_first = len(server.requests)
        second = run_judge(server, source, tmp / "out2.jsonl", tmp / "cache")  # new output, same cache
        requests_second = len(server.requests)
        third = run_judge(server, source, tmp / "out3.jsonl", tmp / "cache", "--retry-errors")
        yield {"first": first, "second": second, "third": third, "requests_first": requests_first,
               "requests_second": requests_second, "requests_total": len(server.requests), "out": tmp / "out.jsonl",
               "server": server}


def rows(path: Path) -> dict[str, dict]:
    return {r["task_id"]: r for r in map(json.loads, path.read_text().splitlines())}


def test_exit_code_is_1_when_some_judgements_failed(judged) -> None:
    code, _, stderr = judged["first"]
    assert code == 1, stderr
    assert "Traceback" not in stderr


def test_panel_median_and_member_scores(judged) -> None:
    out = rows(judged["out"])
    rb = out["conv1::2"]["ragjudge"]["judges"]["rb_llm"]
    assert rb["value"] == pytest.approx(0.6)  # median of 0.4, 0.8, 0.6
    assert sorted(m["value"] for m in rb["members"]) == pytest.approx([0.4, 0.6, 0.8])
    assert {m["model"] for m in rb["members"]} == set(PANEL)
    assert all("Rating: [[" in m["raw"] for m in rb["members"])
    assert out["conv1::2"]["metrics"]["RB_llm"] == [pytest.approx(0.6)]


def test_unparsable_answers_are_errors_with_raw_text(judged) -> None:
    out = rows(judged["out"])
    seven = out["conv7::2"]["ragjudge"]["judges"]["rb_llm"]
    assert seven["value"] == pytest.approx(0.6)  # two of three answered: median of 0.4 and 0.8
    bad = next(m for m in seven["members"] if m["model"] == "openai/j3")
    assert "value" not in bad and "unparsable" in bad["error"] and bad["raw"] == "I would rather not rate this."
    eight = out["conv8::2"]
    assert "RB_llm" not in eight["metrics"] and "only 0 of 3 panel members" in eight["ragjudge"]["judges"]["rb_llm"]["error"]
    nine = out["conv9::2"]["ragjudge"]["judges"]["idk"]
    assert "value" not in nine and nine["raw"] == "Hmm, hard to say." and "unparsable" in nine["error"]
    _, stdout, _ = judged["first"]
    summary = json.loads(stdout)
    assert summary["metrics"]["RB_llm"]["errors"] == 1 and summary["metrics"]["idk_eval"]["errors"] == 1
    assert summary["metrics"]["RB_llm"]["n"] == 9 - 1  # task 8 excluded from the mean, not counted as 0
    expected_mean = 0.6  # every answered panel gave a median of 6/10
    assert summary["metrics"]["RB_llm"]["value"] == pytest.approx(expected_mean)
    assert summary["metrics"]["RB_llm"]["details"]["partial_panels"] == 1  # task 7: the median of 2 of 3, counted


def test_idk_conditioning_table_end_to_end(judged) -> None:
    out = rows(judged["out"])
    got = {tid: (r["metrics"].get("idk_eval", [None])[0], r["metrics"].get("RB_llm_idk", [None])[0],
                 r["metrics"].get("answerability_acc", [None])[0]) for tid, r in out.items()}
    assert got["conv1::2"] == (0.0, pytest.approx(0.6), 1.0)   # answerable, answered: metric
    assert got["conv2::2"] == (1.0, 0.0, 0.0)                  # answerable, declined: 0
    assert got["conv3::2"] == (0.5, pytest.approx(0.6), 1.0)   # partial IDK counts as answering
    assert got["conv4::2"] == (1.0, 1.0, 1.0)                  # unanswerable, declined: 1
    assert got["conv5::2"] == (0.0, 0.0, 0.0)                  # unanswerable, answered: 0
    assert got["conv6::2"][1:] == (None, None)                 # conversational: excluded
    assert got["conv9::2"] == (None, None, None)               # IDK failed: nothing conditioned


def test_a_rerun_pays_nothing_and_retry_errors_asks_only_the_unparsable_again(judged) -> None:
    """An unparsable answer was paid for: a plain rerun re-reads it from the cache (0 requests, the same errors);
    `--retry-errors` asks exactly those again (j3 on task 7, the three members on task 8, the IDK judge on task 9)."""
    (_, first_stdout, _), (second_code, second_stdout, _) = judged["first"], judged["second"]
    assert second_code == 1 and judged["requests_second"] == judged["requests_first"]
    assert json.loads(second_stdout)["metrics"] == json.loads(first_stdout)["metrics"]
    third_code, third_stdout, _ = judged["third"]
    again = judged["server"].requests[judged["requests_second"]:]
    assert len(again) == 5
    assert all(any(word in r.prompt for word in ("GARBLED", "UNPARSABLE")) for r in again)
    assert third_code == 1 and json.loads(third_stdout)["metrics"] == json.loads(first_stdout)["metrics"]


def test_api_key_is_not_written_anywhere(judged) -> None:
    for file in judged["out"].parent.rglob("*"):
        if file.is_file():
            assert b"sk-test-not-a-real-key-0000" not in file.read_bytes(), file


@pytest.mark.parametrize(
    ("answerability", "idk", "metric", "expected"),
    [("ANSWERABLE", 0.0, 0.7, 0.7), ("ANSWERABLE", 0.5, 0.7, 0.7), ("ANSWERABLE", 1.0, 0.7, 0.0),
     ("PARTIAL", 0.0, 0.3, 0.3), ("PARTIAL", 1.0, 0.3, 0.0), ("UNANSWERABLE", 1.0, 0.2, 1.0),
     ("UNANSWERABLE", 0.5, 0.2, 0.0), ("UNANSWERABLE", 0.0, 0.9, 0.0), ("CONVERSATIONAL", 1.0, 0.9, None),
     ("ANSWERABLE", None, 0.9, None), (None, 0.0, 0.9, None)],
)
def test_condition_table(answerability, idk, metric, expected) -> None:
    assert condition(metric, idk, answerability) == expected


def test_conversational_as_unanswerable_option() -> None:
    assert condition(0.9, 1.0, "CONVERSATIONAL", conversational_as_unanswerable=True) == 1.0
    assert condition(0.9, 0.0, "CONVERSATIONAL", conversational_as_unanswerable=True) == 0.0
    assert answerability_correct(1.0, "CONVERSATIONAL") is None
    assert answerability_correct(1.0, "CONVERSATIONAL", conversational_as_unanswerable=True) == 1.0


def test_a_mended_parser_mends_an_old_run_without_a_request(tmp_path: Path, monkeypatch) -> None:
    """The judge answered in a form its parser did not read; the parser is fixed; the rerun reads the cached answer
    again and scores it, sending nothing."""
    import ragjudge

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    specs = tmp_path / "judges"
    specs.mkdir()
    spec = ("name: rater\ndescription: A rating out of 10.\nmetric: rater\nkind: llm\nprompt:\n  user: 'Rate: "
            "{{ response }}'\nparse:\n  kind: rating\n  pattern: '{pattern}'\n  scale_max: 10\n")
    (specs / "rater.yaml").write_text(spec.replace("{pattern}", r"Rating: (\d+)"))
    rows = [{"question": "Q?", "answer": "A.", "id": "r1"}]
    with OpenAIServer(lambda request: "Score 7/10") as server:
        run = dict(judges=["rater"], judge_dir=[specs], judge_models=["openai/j"], api_base=server.base_url,
                   show_progress=False)
        first = ragjudge.evaluate(rows, out=tmp_path / "run", **run)
        assert first.samples[0].scores["rater"].error and first.samples[0].scores["rater"].raw == "Score 7/10"
        sent = len(server.requests)
        (specs / "rater.yaml").write_text(spec.replace("{pattern}", r"(\d+)/10"))
        mended = ragjudge.evaluate(rows, out=tmp_path / "run", **run)
        assert len(server.requests) == sent
    assert mended.samples[0].scores["rater"].value == pytest.approx(0.7)


def test_full_panels_warn_about_nothing(tmp_path: Path) -> None:
    """Issue 36: a run whose every panel answered in full said "0 RB_llm panel score(s) came from fewer judges"."""
    source = tmp_path / "preds.jsonl"
    source.write_text("".join(json.dumps(t) + "\n" for t in TASKS[:2]))
    with OpenAIServer(responder) as server:
        code, stdout, stderr = run_judge(server, source, tmp_path / "out.jsonl", tmp_path / "cache")
    assert code == 0, stderr
    assert "panel score" not in stderr and "partial_panels" not in json.loads(stdout)["metrics"]["RB_llm"]["details"]

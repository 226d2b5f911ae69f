"""DialSim scoring: hand-built answers with the verdicts the official rules give (strict and calibrated
multiple choice, exact match, lexical judge, IDK), the LLM judge's JSON handled safely, and official logs
we wrote ourselves rescored."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest
from conftest import run_cli

from ragjudge.bench.dialsim.judge import AnswerJudge
from ragjudge.bench.dialsim.metrics import (
    calibrate,
    committed,
    declined,
    distill,
    exact_match,
    lexical_verdict,
    says_idk,
    strict_mc,
)
from ragjudge.engine.summary import Summary
from ragjudge.llm import LLMGateway
from ragjudge.testing.openai_server import OpenAIServer, Reply, Request

OPTIONS = ["Paul", "Carol", "Susan", "Barry", "I don't know."]


@pytest.mark.parametrize(("answer", "gold", "strict", "calibrated", "choice"), [
    ("(B)", "(B)", "correct", "correct", "(B)"),
    ("(B) Carol", "(B)", "correct", "correct", "(B)"),
    ("(b)", "(B)", "wrong", "wrong", "(B)"),  # lower case alone: the token is "(B)"
    ("B", "(B)", "wrong", "wrong", "([N/A])"),  # a bare letter names no option
    ("Carol", "(B)", "wrong", "wrong", "([N/A])"),
    ("", "(B)", "wrong", "wrong", "([N/A])"),
    ("(A) or (B)", "(B)", "ambiguous", "ambiguous", "([/AMB/])"),
    ("(a) Paul? No: (B) Carol.", "(B)", "ambiguous", "ambiguous", "([/AMB/])"),  # lower-case others count
    ("It is not (A); the answer is (B).", "(B)", "ambiguous", "correct", "([/AMB/])"),
    ("The Answer Is (C), not (B).", "(B)", "ambiguous", "wrong", "([/AMB/])"),
    ("(B)\n[EXPLANATION] Carol said so; (A) is Paul.", "(B)", "ambiguous", "ambiguous", "([/AMB/])"),
    ("Carol\n[Explanation] not (A), not (B) Paul", "(B)", "ambiguous", "correct", "([/AMB/])"),
    ("None of the options (A)-(D) fit, so (E).", "(E)", "ambiguous", "correct", "([/AMB/])"),
    ("None of the options (A)-(D) fit, so (E).", "(A)", "ambiguous", "wrong", "([/AMB/])"),
    ("(E) I don't know.", "(E)", "correct", "correct", "(E)"),
    ("I don't know.", "(E)", "wrong", "wrong", "([N/A])"),  # the mc format asks for (E)
])
def test_multiple_choice_verdicts(answer: str, gold: str, strict: str, calibrated: str, choice: str) -> None:
    verdict = strict_mc(gold, answer)
    assert verdict == strict
    assert (calibrate(gold, answer, OPTIONS) if verdict == "ambiguous" else verdict) == calibrated
    assert distill(answer) == choice


@pytest.mark.parametrize(("answer", "gold", "verdict"), [
    ("Carol", "Carol", "correct"),
    ("It was carol.", "Carol", "correct"),
    ("Carol or Paul?", "Carol", "ambiguous"),
    ("Caroline", "Carol", "wrong"),
    ("I don't know if it was Carol.", "Carol", "ambiguous"),
    ("Paul", "Carol", "wrong"),
    ("I don't know.", "I don't know.", "correct"),
    ("I'm not sure, the history does not mention it.", "I don't know.", "correct"),
    ("I cannot answer that; maybe Paul?", "I don't know.", "ambiguous"),
    ("Paul", "I don't know.", "wrong"),
])
def test_lexical_judge(answer: str, gold: str, verdict: str) -> None:
    assert lexical_verdict(answer, gold, OPTIONS, gold_is_idk=gold == "I don't know.") == verdict


@pytest.mark.parametrize(("phrase", "idk"), [
    ("I don't know.", True), ("I do not know", True), ("I\u2019m not sure", True), ("No idea!", True),
    ("The dialog history does not mention it.", True), ("It is not mentioned.", True),
    ("I can't tell from the history.", True), ("There is no information about that.", True),
    ("None of the above.", True), ("Carol.", False), ("Carol knows.", False), ("Nobody told me, but Paul", False),
])
def test_idk_phrasings(phrase: str, idk: bool) -> None:
    assert says_idk(phrase) is idk


def test_declined_and_committed() -> None:
    assert declined("mc", "(E)", OPTIONS) and not committed("mc", "(E)", OPTIONS)
    assert declined("mc", "I don't know", OPTIONS) and committed("mc", "(A) Paul", OPTIONS)
    assert not committed("mc", "(A) or (B)", OPTIONS)
    assert declined("open", "I do not know.", OPTIONS) and committed("open", "Somebody else", OPTIONS)
    assert committed("mc-nl", "Paul.", OPTIONS) and not committed("mc-nl", "Paul or Carol", OPTIONS)
    assert exact_match("Carol", "Carol.") and not exact_match("Carol", "carol")


def judge_server_reply(request: Request) -> str | Reply:
    prediction = request.last_user.split("<prediction>\n", 1)[1]
    if "garbled" in prediction:
        return "I think it is right."
    if "both" in prediction:
        return '{"correct": true, "wrong": true}'
    return json.dumps({"correct": "Carol" in prediction, "wrong": "Carol" not in prediction})


def test_llm_judge_prompt_and_unparsable_replies_are_errors() -> None:
    """The official judge does json.loads(reply)["correct"] unguarded: a reply that is not JSON crashes it."""
    with OpenAIServer(judge_server_reply) as server:
        gateway = LLMGateway(api_base=server.base_url, api_key="sk-test", max_retries=0)
        judge = AnswerJudge.load("openai/judge", gateway)
        loop = asyncio.new_event_loop()
        ok = loop.run_until_complete(judge.judge("Monica: Who? Paul? or Carol? or ...", "Carol", "it is Carol"))
        wrong = loop.run_until_complete(judge.judge("q", "Carol", "Paul"))
        garbled = loop.run_until_complete(judge.judge("q", "Carol", "garbled"))
        both = loop.run_until_complete(judge.judge("q", "Carol", "both"))
        loop.close()
        request = server.requests[0]
    assert ok["verdict"] == "correct" and wrong["verdict"] == "wrong"
    assert "verdict" not in garbled and garbled["raw"] == "I think it is right." and "no JSON" in garbled["error"]
    assert "verdict" not in both and "exactly one must be true" in both["error"]
    system, user = request.messages
    assert system["content"].startswith("You have to judge the correctness of a <prediction>")
    assert user["content"] == "<question>\nMonica: Who? Paul? or Carol? or ...\n\n<true answer>\nCarol\n\n<prediction>\nit is Carol"
    assert request.body["temperature"] == 0.2 and request.body["top_p"] == 0.1
    assert request.body["response_format"] == {"type": "json_object"}


def mc_log(path: Path) -> Path:
    """An entire_log-*.json as the official simulator writes it (multiple choice)."""
    question = "Monica: Who was Ross's wife?\n\t(A) Paul\n\t(B) Carol\n\t(C) Susan\n\t(D) Barry\n\t(E) I don't know."
    answers = ["(B)", "(A) or (B)", "The answer is (B), not (A).", "I don't know.", "(E)", "<<<Timeout in answering>>>"]
    golds = ["(B)", "(B)", "(B)", "(E)", "(E)", "(B)"]
    results = ["Correct", "Ambiguous", "Ambiguous", "Wrong", "Correct", "Wrong (Timeout in answering)"]
    log = {"score": 2 / 6, "calibrated_score": 3 / 6, "result_time_mean": 1.0, "simulator_running_time": 9.0,
           "result_list": results, "result_time_list": [0.5, 2.0, 4.0, 0.7, 6.0, "<<<Timeout in answering>>>"],
           "ambiguous_idx_list": [], "ambiguous_answer_list": [], "ambiguous_gold_answer_list": [],
           "answer_list": answers, "gold_answer_list": golds,
           "ret_histories_question_answer_list": [["[Date: September 22, 1994, Session #1]\nRoss: Hi.\n", question, g,
                                                   "([N/A])"] for g in golds],
           "save_time_list": [0.1] * 6, "retrieve_search_time_list": [0.1] * 6, "ans_time_list": [0.3] * 6,
           "calibrated_result_list": ["Correct", "Ambiguous", "Correct", "Wrong", "Correct", "Wrong (Timeout)"],
           "calibrated_distilled_answer_list": ["(B)"] * 6,
           "target_level_list": [{"current_type": t} for t in ("past", "cur_past", "ans_w_time", "fu", "fu_past",
                                                                 "past")]}
    target = path / "entire_log-friends-model_gpt-4o-mini-debug_True-quantization_4bit-time_limit_6.0-history_type_session-entire-bm25_original-version_0.json"
    target.write_text(json.dumps(log, indent=2))
    return target


def test_official_mc_log_is_rescored(tmp_path: Path, monkeypatch, capsys) -> None:
    log = mc_log(tmp_path)
    out = tmp_path / "rescored.jsonl"
    code, stdout, err = run_cli(["dialsim", "score", str(log), "--format", "json", "--out", str(out)],
                                monkeypatch, capsys)
    assert code == 0, err
    summary = json.loads(stdout)
    Summary.model_validate(summary)  # the one result contract, as `ragjudge eval` writes it
    assert summary["schema"] == "ragjudge.summary/1" and summary["bench"] == "dialsim"
    assert summary["n_samples"] == 6 and summary["n_errors"] == 0
    details = summary["details"]
    assert details["format"] == "mc"
    assert details["official"] == {"score": pytest.approx(1 / 3), "calibrated_score": 0.5,
                                   "recounted_score": pytest.approx(1 / 3, abs=1e-6),
                                   "recounted_calibrated_score": 0.5}
    metrics = summary["metrics"]
    assert metrics["accuracy"]["value"] == pytest.approx(2 / 6, abs=1e-6)
    assert metrics["accuracy_calibrated"]["value"] == 0.5
    assert metrics["accuracy@1s"]["value"] == pytest.approx(1 / 5, abs=1e-6)  # the timeout has no time
    assert metrics["accuracy@1s"]["n"] == 5
    assert metrics["ambiguous"]["value"] == 2 and metrics["timed_out"]["value"] == 1
    assert metrics["invented_rate"]["higher_is_better"] is False and metrics["invented_rate"]["kind"] == "rate"
    assert metrics["latency_median"] == {**metrics["latency_median"], "value": 2.0, "kind": "seconds", "n": 5}
    assert metrics["latency_max"]["value"] == 6.0
    groups = {dim: b["groups"] for dim, b in summary["breakdowns"].items()}
    assert groups["source"]["fan"]["n"] == 1 and groups["hop"]["two-hop"]["n"] == 2
    assert groups["answerability"]["unanswerable"]["n"] == 2 and "seed" not in groups
    assert details["agreement"] == {"answers": 6, "same_verdict": 6, "different": 0}
    assert summary["headline"]["text"] == "accuracy 0.333 over 6 questions"
    assert summary["run"]["models"] == {"judges": {"dialsim": ["rule"]}}
    official = summary["tables"][0]
    assert official["title"].endswith("official vs ragjudge scores")
    assert official["rows"] == [["strict", pytest.approx(1 / 3, abs=1e-6), pytest.approx(1 / 3, abs=1e-6)],
                                ["calibrated", 0.5, 0.5]]
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["verdict"] for r in rows] == ["correct", "ambiguous", "ambiguous", "wrong", "correct", "timeout"]
    assert rows[0]["show"] == "friends"
    code, stdout, _ = run_cli(["dialsim", "score", str(log)], monkeypatch, capsys)
    assert code == 0 and "official vs ragjudge" in stdout and "By type" in stdout
    assert re.search(r"invented_rate\s+↓", stdout) and stdout.rstrip().splitlines()[-1] == \
        "accuracy 0.333 over 6 questions"


def nl_log(path: Path) -> Path:
    q = "Joey: What does Russ do for a living? Actor? or Restaurant owner? or Periodontist? or Musician? or you don't know?"
    answers = ["I don't know.", "Periodontist.", "He is a periodontist, I think", "Actor", "garbled"]
    golds = ["I don't know.", "Periodontist", "Periodontist", "Periodontist", "Periodontist"]
    log = {"score": 0.4, "calibrated_score": 0.4, "answer_list": answers, "gold_answer_list": golds,
           "result_list": ["Correct", "Correct", "Correct", "Wrong", "Wrong"],
           "ret_histories_question_answer_list": [["history", q, g, "([N/A])"] for g in golds]}
    target = path / "entire_log-bigbang-model_x.json"
    target.write_text(json.dumps(log))
    return target


def test_official_natural_language_log_rescored_offline_and_with_the_llm_judge(tmp_path: Path, monkeypatch,
                                                                               capsys) -> None:
    log = nl_log(tmp_path)
    code, stdout, err = run_cli(["dialsim", "score", str(log), "--format", "json"], monkeypatch, capsys)
    assert code == 0, err
    summary = json.loads(stdout)
    assert summary["details"]["format"] == "mc-nl" and summary["metrics"]["accuracy"]["value"] == 0.6
    assert summary["details"]["judges"] == {"dialsim": ["lexical"]}

    def reply(request: Request) -> str:
        prediction = request.last_user.split("<prediction>\n", 1)[1]
        if prediction == "garbled":
            return "not json"
        return json.dumps({"correct": "periodontist" in prediction.lower(), "wrong": "periodontist" not in
                           prediction.lower()})

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with OpenAIServer(reply) as server:
        code, stdout, err = run_cli(["dialsim", "score", str(log), "--judge-models", "openai/gpt-4o-mini",
                                     "--api-base", server.base_url, "--format", "json"], monkeypatch, capsys)
        judged = [r.last_user for r in server.requests]
    assert code == 1 and "1 answer(s) could not be judged" in err
    summary = json.loads(stdout)
    # the paper's accuracy counts the answer the judge failed on as wrong (3 of 5); ours leaves it out (3 of 4)
    accuracy, answered = summary["metrics"]["accuracy"], summary["metrics"]["accuracy_answered"]
    assert summary["n_errors"] == 1 and accuracy["value"] == 0.6 and answered["value"] == 0.75
    assert (accuracy["n"], accuracy["errors"], accuracy["details"]) == (5, 0, {"failed_counted_wrong": 1})
    assert (answered["n"], answered["errors"]) == (4, 1)
    assert summary["headline"]["text"] == ("accuracy 0.600 over 5 questions; 1 failed answer(s) counted wrong, as in "
                                           "the paper (accuracy_answered 0.750 over the 4 answered)")
    assert summary["details"]["judges"] == {"dialsim": ["openai/gpt-4o-mini"]}
    assert len(judged) == 3  # the exact matches ("I don't know.", "Periodontist.") need no judge
    assert "Russ do for a living? Actor? or" in judged[0]


def test_bad_log_is_one_line(tmp_path: Path, monkeypatch, capsys) -> None:
    bad = tmp_path / "entire_log-x.json"
    bad.write_text(json.dumps({"answer_list": ["(A)"], "gold_answer_list": ["(A)", "(B)"], "result_list": ["Correct"]}))
    code, _, err = run_cli(["dialsim", "score", str(bad)], monkeypatch, capsys)
    assert code == 2 and err.count("\n") == 1 and "field 'gold_answer_list': expected a list of 1 entries" in err
    bad.write_text("{}")
    code, _, err = run_cli(["dialsim", "score", str(bad)], monkeypatch, capsys)
    assert code == 2 and "field 'answer_list'" in err


def _non_utf8(path: Path) -> str:
    text = path.read_text()
    at = text.index('"I don\'t know."')
    path.write_bytes(text[:at].encode() + b"\xff" + text[at:].encode())
    line = text[:at].count("\n") + 1
    return f"{path}:{line}: not UTF-8 text: byte 0xff at byte offset {len(text[:at].encode())}"


def _truncated(path: Path) -> str:
    text = path.read_text()
    path.write_text(text[: text.index("result_time_list") + 30])
    return f"{path}:"


def _folder(path: Path) -> str:
    path.unlink()
    path.mkdir()
    return f"{path}: is a folder"


def _field(key: str, index: int, value: object) -> object:
    def mutate(path: Path) -> str:
        log = json.loads(path.read_text())
        log[key][index] = value
        path.write_text(json.dumps(log, indent=2))
        return f"{path}: field '{key}[{index}]'"
    return mutate


@pytest.mark.parametrize("mutate", [
    pytest.param(lambda p: p.write_text("") or f"{p}: empty file", id="empty"),
    pytest.param(_non_utf8, id="non-utf8"),
    pytest.param(_truncated, id="truncated"),
    pytest.param(_folder, id="folder"),
    pytest.param(_field("answer_list", 2, 7), id="wrong-type"),
    pytest.param(_field("result_time_list", 1, -3.5), id="out-of-range"),
])
def test_a_bad_log_is_one_line_naming_file_line_and_field(tmp_path: Path, monkeypatch, capsys, mutate) -> None:
    """A log that is not UTF-8 ended in `internal error: UnicodeDecodeError`; it is read through
    ragjudge.formats.files now, like every other input: one line, exit 2, nothing written."""
    log = mc_log(tmp_path)
    expected = mutate(log)
    out = tmp_path / "rescored.jsonl"
    code, stdout, err = run_cli(["dialsim", "score", str(log), "--out", str(out)], monkeypatch, capsys)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err and "internal error" not in err, err
    assert err.startswith(f"error: {expected}"), err
    assert stdout == "" and not out.exists()


def test_score_out_and_time_limits_are_checked_before_any_work(tmp_path: Path, monkeypatch, capsys) -> None:
    log = mc_log(tmp_path)
    code, _, err = run_cli(["dialsim", "score", str(log), "--out", str(tmp_path)], monkeypatch, capsys)
    assert code == 2 and err.count("\n") == 1 and "is a folder" in err
    code, _, err = run_cli(["dialsim", "score", str(log), "--time-limits", "1,-2"], monkeypatch, capsys)
    assert code == 2 and "--time-limits must be seconds greater than 0" in err
    code, _, err = run_cli(["dialsim", "score", str(log), "--answer-format", "mc-nl", "--format", "json"],
                           monkeypatch, capsys)
    assert code == 0, err  # a forced format is taken at its word
    log.write_text(log.read_text().replace('"(E)"', '"I don\'t know."'))
    code, _, err = run_cli(["dialsim", "score", str(log), "--answer-format", "mc"], monkeypatch, capsys)
    assert code == 2 and "field 'gold_answer_list[3]': expected an option, (A) to (E)" in err

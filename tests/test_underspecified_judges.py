"""MTRAG-UN's clarification judges (issue 22): `underspecified` (LLM, the official prompt and decision rule, through
litellm and the local server) and `underspecified_lexical` (offline), both writing `underspecified_eval`; the
official conditioning `get_idk_underspec_score` as `condition_underspecified`."""

from __future__ import annotations

import ast
import asyncio
import hashlib
import json
import re
from pathlib import Path

import jinja2
import pytest
from conftest import REPO, run_cli_once
from mtrag_un_official import official
from shared_data import SHARED_DATA, requires_shared

from ragjudge.judges.conditioning import condition_underspecified
from ragjudge.bench.mtrag.items import judged_item
from ragjudge.judges import JudgeContext, JudgedItem, JudgeRegistry
from ragjudge.judges.labelled import judge_answers, read_reference_set, score
from ragjudge.models import Prediction, Task, Turn
from ragjudge.testing.openai_server import OpenAIServer, Request

UN = SHARED_DATA / "mtrag-un"
FIXTURE = REPO / "tests" / "fixtures" / "mtrag-un" / "predictions.jsonl"
KEY = {"OPENAI_API_KEY": "sk-test-not-a-real-key-0000"}



# -- the official conditioning --------------------------------------------------------------------------------


@pytest.mark.parametrize("answerability", ["ANSWERABLE", "PARTIAL", "UNANSWERABLE", "CONVERSATIONAL",
                                           "UNDERSPECIFIED", None])
@pytest.mark.parametrize("idk", [0.0, 0.5, 1.0])
@pytest.mark.parametrize("underspec", [0.0, 1.0])
def test_condition_underspecified_is_the_official_rule(answerability, idk, underspec) -> None:
    for metric in (0.0, 0.37, 1.0):
        assert condition_underspecified(metric, idk, underspec, answerability) == \
            official(answerability, idk, underspec, metric)


def test_condition_underspecified_without_a_judgement_it_needs_is_undefined() -> None:
    assert condition_underspecified(0.7, 1.0, None, "UNDERSPECIFIED") is None  # clarification judge failed
    assert condition_underspecified(0.7, None, 1.0, "UNDERSPECIFIED") == 1.0   # IDK not needed there
    assert condition_underspecified(0.7, None, 0.0, "ANSWERABLE") is None       # IDK failed
    assert condition_underspecified(None, 0.0, 0.0, "ANSWERABLE") is None       # no metric (RL_F, no passages)
    assert condition_underspecified(None, 1.0, 0.0, "UNANSWERABLE") == 1.0      # ... not needed there


# -- underspecified_lexical ------------------------------------------------------------------------------------


def lexical(text: str) -> str:
    judge = JudgeRegistry().build("underspecified_lexical")
    task = Task(task_id="t::1", conversation_id="t", turn=1, input=[Turn(speaker="user", text="How much is it?")])
    [result] = asyncio.run(judge.judge([judged_item(task, Prediction(task_id="t::1", text=text))], JudgeContext()))
    assert result.metric == "underspecified_eval" and result.value == {"yes": 1.0, "no": 0.0}[result.label]
    return result.label


@pytest.mark.parametrize("text", [
    "There are two Kestrel ferries. Which one are you referring to?",
    "Which permit are you interested in?",
    "Are you asking about the day permit or the season permit?",
    "Do you mean the lighthouse or the harbour?",
    "Could you specify which volume you mean?",
    "Please specify the county you are asking about.",          # a directive request, no question mark
    "Kindly let me know which fund you hold.",
    "There are several parks. Which one?\n",
    "There are many kinds of permit, such as: 1) day, 2) season. Which one are you talking about? ",
    "Which one are you referring to\u200b?",                      # a zero-width space: normalised away
    "Could you please clarify which Veyra service you’re using?",  # a typographic apostrophe
])
def test_lexical_judge_finds_clarification_requests(text: str) -> None:
    assert lexical(text) == "yes"


@pytest.mark.parametrize("text", [
    "A day permit costs 6 crowns.",
    "I can't answer because I don't have your location.",         # missing information, no request (the prompt)
    "I do not have information about backup prices.",
    "If you can tell me which county, I could look it up.",        # conditional: mentions, does not ask
    "Is there anything else I can help you with?",                 # an unrelated question
    "Would you like to know more about the season permit?",        # an offer
    "Please note that permits are not refundable.",
    "Which permit is cheaper? The day permit, at 6 crowns.",       # a rhetorical question it answers
    "",
])
def test_lexical_judge_ignores_answers_declines_and_offers(text: str) -> None:
    assert lexical(text) == "no"


def test_lexical_judge_refuses_a_bad_pattern(tmp_path: Path) -> None:
    from ragjudge.errors import InputError

    spec = (REPO / "judges" / "underspecified_lexical.yaml").read_text().replace(
        '    - "\\\\banything else\\\\b"', '    - "(unclosed"')
    (tmp_path / "underspecified_lexical.yaml").write_text(spec)
    with pytest.raises(InputError, match=r"field 'options.not_clarification\[0\]': not a regular expression"):
        JudgeRegistry([tmp_path]).build("underspecified_lexical")


RULES_HALF = {"positives": 39, "negatives": 228, "true_positives": 39, "false_positives": 0}
HELD_OUT_HALF = {"positives": 39, "negatives": 201, "true_positives": 39, "false_positives": 1}


@requires_shared("mtrag-un", "generation/reference.jsonl")
def test_lexical_judge_precision_and_recall_on_the_release_are_the_readme_figures() -> None:
    """The figures the docs publish (docs/benches/mtrag-un.md): reference answers of the 78 UNDERSPECIFIED tasks
    are positives, the 429 others negatives; halves by sha256(task id) (`ragjudge.judges.labelled.half_of`), the
    rules written on `rules` only."""
    items = read_reference_set(UN / "generation" / "reference.jsonl", ["UNDERSPECIFIED"],
                               ["ANSWERABLE", "PARTIAL", "UNANSWERABLE"])
    scores = score(judge_answers("underspecified_lexical", items))
    for half, want in (("rules", RULES_HALF), ("held-out", HELD_OUT_HALF)):
        got = scores[half].as_dict()
        assert {k: got[k] for k in want} == want, half
    assert (scores["held-out"].precision, scores["held-out"].recall) == (39 / 40, 1.0)
    [alarm] = scores["held-out"].false_alarms  # an ANSWERABLE task whose reference answer does ask
    assert alarm.item.task.answerability == "ANSWERABLE" and "which novel" in alarm.item.text
    page = (REPO / "docs" / "benches" / "mtrag-un.md").read_text()  # where the figures are published
    assert "| rules (read while writing the patterns) | 39 | 228 | 39 | 0 | 1.000 | 1.000 |" in page
    assert "| held-out | 39 | 201 | 39 | 1 | 0.975 | 1.000 |" in page


# -- underspecified (LLM) --------------------------------------------------------------------------------------


def official_prompt() -> str:
    source = (UN / "official-eval" / "underspecified_eval.py").read_text()
    return next(node.value.value for node in ast.parse(source).body if isinstance(node, ast.Assign)
                and getattr(node.targets[0], "id", None) == "UNDERSPECIFIED_PROMPT")


@requires_shared("mtrag-un", "official-eval/underspecified_eval.py")
def test_llm_judge_prompt_is_the_official_one_byte_for_byte() -> None:
    judge = JudgeRegistry().build("underspecified")
    assert judge.spec.prompt.user == official_prompt()
    task = Task(task_id="t::1", conversation_id="t", turn=1, input=[Turn(speaker="user", text="Which one?")])
    response = "There are two ferries.  Which one are you asking about?\n"
    messages = judge.messages(judged_item(task, Prediction(task_id="t::1", text=response)))
    assert messages == [{"role": "user", "content": jinja2.Template(official_prompt()).render(response=response)}]


def judged_response(request: Request) -> str:
    """The response under judgement in the clarification prompt (the only input the official prompt shows)."""
    return request.last_user.split("Response: \n    ", 1)[1].rsplit("\n\n    ", 1)[0]


def fixture_responder(request: Request) -> str:
    prompt = request.last_user
    if "[The Start of Reference Answer]" in prompt:  # RB_llm
        return "Fair.\nRating: [[8]]"
    if "is asking for clarification" in prompt:
        response = judged_response(request)
        if response.startswith("Please specify"):
            return "The response asks the user to specify the fund."  # no JSON: unparsable
        decision = "Yes" if response.rstrip().endswith("?") and "Which" in response else "no"
        return f'```json\n{{\n  "decision": "{decision}",\n  "explanation": "see the response"\n}}\n```'
    response = prompt.rsplit("[Response]\n", 1)[1]  # the IDK judge
    return "yes" if ("do not have" in response or "don't know" in response) else "no"


@pytest.fixture(scope="module")
def llm_judged(tmp_path_factory: pytest.TempPathFactory) -> dict:
    tmp = tmp_path_factory.mktemp("un-llm")
    with OpenAIServer(fixture_responder) as server:
        code, stdout, stderr = run_cli_once(
            ["judge", str(FIXTURE), "--judges", "idk,underspecified,rb_llm", "--judge-models", "openai/judge",
             "--api-base", server.base_url, "--out", str(tmp / "out.jsonl"), "--format", "json"],
            env={"RAGJUDGE_CACHE_DIR": str(tmp / "cache"), **KEY})
        prompts = [r.messages for r in server.requests if "is asking for clarification" in r.last_user]
    rows = {r["task_id"][:3]: r for r in map(json.loads, (tmp / "out.jsonl").read_text().splitlines())}
    return {"code": code, "summary": json.loads(stdout) if stdout else None, "stderr": stderr, "rows": rows,
            "prompts": prompts}


def test_llm_judge_scores_each_answer_from_its_json_decision(llm_judged: dict) -> None:
    rows = llm_judged["rows"]
    assert llm_judged["code"] == 1, llm_judged["stderr"]  # one reply did not parse
    assert llm_judged["summary"]["bench"] == "mtrag-un"
    values = {t: r["metrics"].get("underspecified_eval", [None])[0] for t, r in rows.items()}
    assert values == {"a01": 0.0, "a02": 0.0, "a03": 0.0, "a04": 0.0, "a05": 0.0, "a06": 0.0, "a07": 0.0,
                      "a08": 1.0, "a09": None, "a10": 0.0}
    a08 = rows["a08"]["ragjudge"]["judges"]["underspecified"]
    assert a08["label"] == "yes" and a08["raw"].startswith("```json")  # "Yes": decisions are read in any case
    assert len(llm_judged["prompts"]) == 10 and all(len(m) == 1 and m[0]["role"] == "user"
                                                    for m in llm_judged["prompts"])


def test_llm_judge_unparsable_reply_is_an_error_with_its_raw_text_not_the_official_half(llm_judged: dict) -> None:
    """The official script would score a09 0.5, hence 0 on this UNDERSPECIFIED task; here it is an error, left
    out of every figure that needs it and counted."""
    a09 = llm_judged["rows"]["a09"]
    result = a09["ragjudge"]["judges"]["underspecified"]
    assert "value" not in result and result["raw"] == "The response asks the user to specify the fund."
    assert result["error"].startswith("unparsable judge output")
    assert "underspecified_eval" not in a09["metrics"] and "RB_llm_idk_underspecified" not in a09["metrics"]
    metrics = llm_judged["summary"]["metrics"]
    assert (metrics["underspecified_eval"]["n"], metrics["underspecified_eval"]["errors"]) == (9, 1)
    assert metrics["RB_llm_idk_underspecified"]["n"] == 9


def test_llm_judges_conditioned_the_official_way(llm_judged: dict) -> None:
    rows = llm_judged["rows"]
    for tid, row in rows.items():
        m = {k: v[0] for k, v in row["metrics"].items()}
        if "underspecified_eval" not in m:
            continue
        want = official(row["answerability"][0], m["idk_eval"], m["underspecified_eval"], m["RB_llm"])
        assert m["RB_llm_idk_underspecified"] == pytest.approx(want), tid
    got = {t: r["metrics"].get("RB_llm_idk_underspecified", [None])[0] for t, r in rows.items()}
    assert got == {"a01": 0.8, "a02": 0.8, "a03": 0.0, "a04": 0.8, "a05": 0.8, "a06": 1.0, "a07": 0.0,
                   "a08": 1.0, "a09": None, "a10": 0.0}
    summary = llm_judged["summary"]
    assert summary["headline"]["metric"] == "RB_llm_idk_underspecified"
    under = summary["breakdowns"]["answerability"]["groups"]["UNDERSPECIFIED"]["metrics"]
    assert under["RB_llm_idk_underspecified"]["value"] == pytest.approx(0.5)  # a08 1, a10 0; a09 failed
    assert under["RB_llm_idk_underspecified"]["n"] == 2


def _stand_in_decision(response: str) -> str | None:
    """A scripted stand-in for a judge model: asks iff the answer ends with a question; no JSON for about 1 in 16
    answers (by hash), as a model's unreadable replies."""
    if hashlib.sha256(response.encode()).digest()[0] < 16:
        return None
    return "yes" if response.rstrip().endswith("?") else "no"


def release_responder(request: Request) -> str:
    decision = _stand_in_decision(judged_response(request))
    if decision is None:
        return "I am not sure what to answer."
    return json.dumps({"decision": decision, "explanation": "scripted"})


@requires_shared("mtrag-un", "generation/reference.jsonl")
def test_llm_judge_measured_on_the_release_through_the_local_server(tmp_path: Path) -> None:
    """The LLM judge measured as the lexical one is (UNDERSPECIFIED reference answers positive, the rest
    negative), with a scripted model: by answerability, `underspecified_eval` is the recall on UNDERSPECIFIED
    and the false-alarm rate elsewhere, over the answers whose reply parsed; unreadable replies are errors."""
    source = tmp_path / "references.jsonl"
    records = [json.loads(line) for line in (UN / "generation" / "reference.jsonl").read_text().splitlines()]
    for r in records:
        r["predictions"] = [{"text": r["targets"][0]["text"]}]
    source.write_text("".join(json.dumps(r) + "\n" for r in records))
    with OpenAIServer(release_responder) as server:
        code, stdout, stderr = run_cli_once(
            ["judge", str(source), "--judges", "underspecified", "--judge-models", "openai/stand-in", "--api-base",
             server.base_url, "--out", str(tmp_path / "out.jsonl"), "--format", "json", "--concurrency", "16"],
            env={"RAGJUDGE_CACHE_DIR": str(tmp_path / "cache"), **KEY})
    summary = json.loads(stdout)
    decisions = [(r["answerability"][0], _stand_in_decision(r["predictions"][0]["text"])) for r in records]
    unreadable = sum(d is None for _, d in decisions)
    assert code == 1 and 0 < unreadable < 60, stderr
    assert summary["n_samples"] == 507
    metric = summary["metrics"]["underspecified_eval"]
    assert (metric["n"], metric["errors"]) == (507 - unreadable, unreadable)
    groups = summary["breakdowns"]["answerability"]["groups"]
    for label in ("ANSWERABLE", "PARTIAL", "UNANSWERABLE", "UNDERSPECIFIED"):
        read = [d == "yes" for a, d in decisions if a == label and d is not None]
        assert groups[label]["metrics"]["underspecified_eval"]["value"] == pytest.approx(sum(read) / len(read),
                                                                                          abs=1e-6)
        assert groups[label]["metrics"]["underspecified_eval"]["n"] == len(read)
    flagged = [a for a, d in decisions if d == "yes"]
    precision = flagged.count("UNDERSPECIFIED") / len(flagged)
    recall = groups["UNDERSPECIFIED"]["metrics"]["underspecified_eval"]["value"]
    assert 0.9 < precision <= 1 and 0.9 < recall <= 1  # the stand-in is nearly right: the figures are read back
    assert not re.search(r"Traceback", stderr)

"""CXMArena LLM tasks end to end: bench -> engine -> LLMGateway -> litellm -> the local OpenAI-compatible
server, which plays the model under test and the judges. Inputs are the example data in examples/cxm."""

from __future__ import annotations

import itertools
import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from ragjudge.bench.cxm.tasks import bench_class
from ragjudge.engine import EngineOptions, OutputPaths, RunOutcome, run
from ragjudge.testing.openai_server import OpenAIServer, Reply, Request

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "cxm"
MODEL, JUDGE = "openai/model-under-test", "openai/judge-a"


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")


@dataclass
class RunSettings:
    """What a test runs: one CXMArena bench through the engine, like `ragjudge eval --bench cxm-<task>`."""

    task: str
    data: Path
    out: Path
    api_base: str
    cache_dir: str
    model: str | None = None
    judge_model: str | None = None
    taxonomy: str | None = None
    tool_counts: tuple[int, ...] | None = None
    forced_tool_call: bool = False
    k: int | None = None
    limit: int | None = None
    max_retries: int = 0


def run_task(s: RunSettings) -> RunOutcome:
    options = {"data": str(s.data), "gen": s.model, "judge_models": [s.judge_model] if s.judge_model else None,
               "taxonomy": s.taxonomy, "tool_counts": list(s.tool_counts) if s.tool_counts else None,
               "force_tool_call": s.forced_tool_call or None, "k": s.k}
    cls = bench_class(s.task)
    bench = cls(cls.Options.model_validate({k: v for k, v in options.items() if v is not None}))
    engine = EngineOptions(limit=s.limit, api_base=s.api_base, cache_dir=s.cache_dir, max_retries=s.max_retries,
                           show_progress=False)
    return run(bench, engine, OutputPaths.in_folder(s.out))


def settings(server: OpenAIServer, tmp_path: Path, task: str, **kw) -> RunSettings:
    return RunSettings(task=task, data=EXAMPLE, out=tmp_path / "run", api_base=server.base_url,
                       cache_dir=str(tmp_path / "cache"), max_retries=0, **kw)


def metrics(outcome: RunOutcome) -> dict:
    """The run's metric values by name (its one summary, the result contract)."""
    return {name: m.value for name, m in outcome.summary.metrics.items()}


def rows(outcome: RunOutcome) -> list[dict]:
    assert outcome.paths is not None
    return [json.loads(line) for line in outcome.paths.results.read_text().splitlines()]


# -- intent prediction with LLM-verified match ---------------------------------------------------------

INTENT_ANSWERS = {  # conversation text -> the model's answer
    "same 30 euro charge twice": '```json\n{"reason": "double charge", "intent": "Billing dispute"}\n```',
    "flying to Japan": '{"intent": "roaming"}',  # case differs: mapped to Roaming
    "router light is red": '{"intent": "eSIM activation"}',  # wrong
    "keep my current number": '{"intent": "Number portng"}',  # typo: fuzzy-mapped to Number porting
    "QR code for my new eSIM": '{"intent": "Activating an eSIM"}',  # outside the taxonomy
    "double-charged money back": "Billing dispute, I think.",  # no JSON: unparsable, counts as wrong
}


class IntentServer:
    def __init__(self) -> None:
        self.fail = set()

    def __call__(self, request: Request) -> str | Reply:
        prompt = request.prompt
        if "[Taxonomy: flat]" in prompt:
            for needle, answer in INTENT_ANSWERS.items():
                if needle in prompt:
                    return Reply(status=500, content="boom") if needle in self.fail else answer
        if "Verdict" in prompt:
            predicted = re.search(r"\[Predicted intent\]\n(.+?)[:\n]", prompt).group(1)
            return {"eSIM activation": "Different reasons.\nVerdict: no",
                    "Activating an eSIM": "Same reason, other words.\nVerdict: yes"}[predicted]
        return Reply(status=400, content=f"unexpected prompt: {prompt[:200]}")


def test_intent_exact_and_verified_side_by_side_then_resume(tmp_path: Path) -> None:
    responder = IntentServer()
    responder.fail = {"router light is red"}  # its call fails for good on the first run
    with OpenAIServer(responder) as server:
        first = run_task(settings(server, tmp_path, "intent", model=MODEL, judge_model=JUDGE, taxonomy="flat"))
        assert first.exit_code == 1 and metrics(first)["errors"] == 1
        assert server.chat_count() == 6 + 1  # six predictions, one judge call (c5); c3 failed
        responder.fail = set()
        second = run_task(settings(server, tmp_path, "intent", model=MODEL, judge_model=JUDGE, taxonomy="flat"))
        assert server.chat_count() == 7 + 2  # resumed: only c3 is asked again, then judged
        received = {m: sum(1 for r in server.requests if r.model == m.split("/")[1]) for m in (MODEL, JUDGE)}
    assert second.exit_code == 0
    m = metrics(second)
    assert m["accuracy (exact match)"] == pytest.approx(3 / 6)  # c1, c2 (case), c4 (fuzzy)
    assert m["accuracy (LLM-verified)"] == pytest.approx(4 / 6)  # + c5, which the judge accepts
    assert m["LLM-verified cases"] == 6 and m["unparsable answers"] == 1 and m["out-of-taxonomy answers"] == 1
    # gold labels: Billing dispute x2 (F1 2/3), Roaming 1, Number porting 1, Router issue 0, eSIM activation 0
    assert m["macro-F1"] == pytest.approx((2 / 3 + 1 + 1) / 5)
    by_case = {r["case_id"]: r for r in rows(second)}
    assert by_case["c2"]["mapping"] == "normalized" and by_case["c4"]["mapping"] == "fuzzy"
    assert by_case["c5"]["in_taxonomy"] is False and by_case["c5"]["verified_by"] == JUDGE
    assert by_case["c6"]["intent"] is None and "no JSON" in by_case["c6"]["parse_error"]
    assert by_case["c1"]["verified_by"] == "rule"
    saved = json.loads((second.paths.run).read_text())
    now = saved["usage_this_invocation"]
    assert now[MODEL]["calls"] == 1 and now[JUDGE]["calls"] == 1  # the resumed invocation's new calls
    run = saved["usage"]  # the whole run, both invocations: what the provider received
    assert run[MODEL]["requests"] == received[MODEL] == 7 and run[JUDGE]["requests"] == received[JUDGE] == 2
    assert run[MODEL]["calls"] == 6 and run[MODEL]["failures"] == 1


def test_intent_prompt_lists_the_taxonomy_and_conversation(tmp_path: Path) -> None:
    with OpenAIServer(IntentServer()) as server:
        run_task(settings(server, tmp_path, "intent", model=MODEL, taxonomy="flat", limit=1))
        [request] = server.requests
    prompt = request.prompt
    assert "- Router issue: The home router does not work or needs a reset." in prompt
    assert "[1] Customer: Hi, my March bill shows the same 30 euro charge twice." in prompt
    assert request.body["temperature"] == 0 and request.body["max_tokens"] == 300


def test_unreadable_judge_verdict_is_an_error_not_a_default(tmp_path: Path) -> None:
    def responder(request: Request) -> str:
        if "Verdict" in request.prompt:
            return "They look alike to me."  # no verdict line
        return '{"intent": "Roaming"}'

    with OpenAIServer(responder) as server:
        outcome = run_task(settings(server, tmp_path, "intent", model=MODEL, judge_model=JUDGE, taxonomy="flat"))
    m = metrics(outcome)
    assert m["accuracy (exact match)"] == pytest.approx(1 / 6)
    assert m["LLM-verified cases"] == 1 and m["accuracy (LLM-verified)"] == 1.0  # only the exact match is known
    assert m["verification errors"] == 5
    assert all("unparsable judge output" in r["verify_error"] for r in rows(outcome) if r["case_id"] != "c2")


# -- agent quality adherence ----------------------------------------------------------------------------

QUALITY_ANSWERS = {
    "thanks for calling Northwind": {"answers": [
        {"question": 1, "answer": True, "message_ids": ["1"]}, {"question": 2, "answer": "true", "message_ids": [3]},
        {"question": 3, "answer": True, "message_ids": ["Message-ID: 7"]}]},
    "opening hours on Sunday": {"answers": [
        {"question": 1, "answer": "yes", "message_ids": ["1"]}, {"question": 2, "answer": "na"},
        {"question": 3, "answer": False}]},
    "My bill is wrong again": {"answers": [  # q1 wrong, q3 missing
        {"question": 1, "answer": True, "message_ids": ["1"]}, {"question": 2, "answer": True, "message_ids": ["4"]}]},
}


def test_quality_question_case_and_evidence_levels(tmp_path: Path) -> None:
    def responder(request: Request) -> str:
        for needle, answer in QUALITY_ANSWERS.items():
            if needle in request.prompt:
                return "Here you go:\n" + json.dumps(answer)
        raise AssertionError("unexpected prompt")

    with OpenAIServer(responder) as server:
        outcome = run_task(settings(server, tmp_path, "quality", model=MODEL))
        prompts = [r.prompt for r in server.requests]
    m = metrics(outcome)
    assert m["questions"] == 9 and m["question accuracy"] == pytest.approx(7 / 9)
    assert m["case accuracy (all questions right)"] == pytest.approx(2 / 3)  # a3 has two wrong
    # gold true: 6 (a1 x3, a2 q1, a3 q2 q3); predicted true: 6 (a1 x3, a2 q1, a3 q1 q2); both: 5
    assert m["question F1 (true)"] == pytest.approx(5 / 6)
    # cited ids on the 6 gold-evidence questions: 1,3,7,1,4 and none for a3 q3 -> 5 right of 5 cited, 6 gold
    assert m["evidence precision"] == 1.0 and m["evidence recall"] == pytest.approx(5 / 6)
    assert m["unreadable answers"] == 1
    assert any("[7] Agent: Done. Is there anything else I can help you with today?" in p for p in prompts)
    assert any("2. Did the agent verify the customer's identity?" in p for p in prompts)
    a3 = next(r for r in rows(outcome) if r["case_id"] == "a3")
    assert a3["parse_error"] == "no readable answer for question(s) more"


# -- tool calls -----------------------------------------------------------------------------------------

EXPECTED = {"invoice INV-1001": [("refund_charge", {"invoice_id": "INV-1001"})],
            "work in Japan": [("check_roaming_status", {"country": "Japan"}),
                              ("activate_travel_pass", {"country": "Japan"})],
            "Account A-77": [("reset_router_remote", {"account_id": "A-77"})],
            "lena@example.com": [("send_esim_qr", {"email": "lena@example.com"})]}


def tool_responder(request: Request) -> Reply:
    offered = [t["function"]["name"] for t in request.body["tools"]]
    for needle, calls in EXPECTED.items():
        if needle in request.prompt:
            assert all(name in offered for name, _ in calls)  # the gold tools are always offered
            if len(offered) == 16 and needle == "invoice INV-1001":
                return Reply(tool_calls=[{"name": "get_bill", "arguments": {"account_id": "x", "month": "2026-03"}}])
            if len(offered) == 8 and needle == "Account A-77":
                return Reply(tool_calls=[{"name": "reset_router_remote", "arguments": {"account_id": "A-78"}}])
            return Reply(tool_calls=[{"name": n, "arguments": a} for n, a in reversed(calls)])
    raise AssertionError("unexpected prompt")


def test_tool_calls_accuracy_vs_number_of_offered_tools(tmp_path: Path) -> None:
    with OpenAIServer(tool_responder) as server:
        outcome = run_task(settings(server, tmp_path, "tool-calls", model=MODEL, tool_counts=(4, 8, 16, 32)))
        requests = list(server.requests)
    assert len(requests) == 4 * 3  # 32 tools cannot be offered from a 16-tool catalog
    assert sorted(len(r.body["tools"]) for r in requests) == [4] * 4 + [8] * 4 + [16] * 4
    assert all("tool_choice" not in r.body for r in requests)
    assert requests[0].messages[0]["role"] == "system" and "[Knowledge base]" in requests[0].messages[0]["content"]
    m = metrics(outcome)
    assert m["tool-selection accuracy @4 tools"] == 1.0
    assert m["tool-selection accuracy @8 tools"] == 1.0  # the wrong argument does not change the selection
    assert m["tool-selection accuracy @16 tools"] == 0.75
    assert m["tool-selection accuracy"] == pytest.approx(11 / 12)
    assert m["argument match"] == pytest.approx(10 / 12)
    assert any("not run with 32 tools" in n for n in outcome.summary.notes)
    by_key = {(r["case_id"], r["n_tools"]): r for r in rows(outcome)}
    assert by_key[("t2", 4)]["tool_calls"][0] == {"name": "activate_travel_pass", "arguments": {"country": "Japan"}}
    assert set(by_key[("t1", 4)]["offered"]) <= set(by_key[("t1", 8)]["offered"]) <= set(by_key[("t1", 16)]["offered"])


def test_forced_tool_call_mode_sends_tool_choice(tmp_path: Path) -> None:
    with OpenAIServer(tool_responder) as server:
        outcome = run_task(settings(server, tmp_path, "tool-calls", model=MODEL, tool_counts=(4,),
                                    forced_tool_call=True))
        assert [r.body["tool_choice"] for r in server.requests] == ["required"] * 4
    assert metrics(outcome)["tool-selection accuracy @4 tools"] == 1.0
    assert {r["mode"] for r in rows(outcome)} == {"forced"}


# -- multi-turn answers and their classification ---------------------------------------------------------

REPLIES = {"roaming in Spain": "Roaming in Spain is free on your plan.",
           "Travel Pass cost in the US": "It costs 5 euros per day.",
           "INV-2040": "The refund arrives tomorrow.",
           "activate my eSIM": "I'm sorry, I can't help with that."}
CLASSES = {"free on your plan": '{"reasoning": "KB_1 says so", "category": "Correct"}',
           "5 euros per day": 'Reasoning...\n```json\n{"category": "hallucinated"}\n```',
           "arrives tomorrow": '{"category": "Wrong"}',  # not a class: an error, never a default
           "can't help with that": '{"category": "Refusal"}'}


def rag_responder(request: Request) -> str:
    if "Reply to the customer's last message" in request.messages[0]["content"]:
        return next(reply for needle, reply in REPLIES.items() if needle in request.last_user)
    reply = request.prompt.split("[Agent reply to classify]\n", 1)[1].split("\n", 1)[0]
    return next(label for needle, label in CLASSES.items() if needle in reply)


def test_generate_then_classify_answers(tmp_path: Path) -> None:
    with OpenAIServer(rag_responder) as server:
        outcome = run_task(settings(server, tmp_path, "answer-classification", model=MODEL, judge_model=JUDGE, k=2))
        judge_prompts = [r.prompt for r in server.requests if r.model == "judge-a"]
    assert len(judge_prompts) == 4
    spain = next(p for p in judge_prompts if "free on your plan" in p)
    assert "Article KB_1:\nRoaming in EU countries is included" in spain.split("[Other retrieved articles")[0]
    m = metrics(outcome)
    assert m["classified"] == 3 and m["errors"] == 1 and outcome.exit_code == 1
    assert m["Correct share"] == pytest.approx(1 / 3) and m["Hallucination share"] == pytest.approx(1 / 3)
    assert m["Refusal share"] == pytest.approx(1 / 3) and m["Incorrect share"] == 0.0
    assert m["judge agreement with gold labels"] == pytest.approx(2 / 3)  # r2 is Incorrect by the gold label
    assert m["retrieval recall of gold articles"] == 1.0  # bm25 over all customer turns finds every gold article
    bad = next(r for r in rows(outcome) if r["case_id"] == "r3")
    assert "category 'Wrong' is not one of" in bad["error"] and bad["ranking"] == ["KB_5", "KB_6"]
    assert "retrieved_ids" not in bad and outcome.summary.n_errors == 1 and not outcome.summary.warnings


def test_classify_given_responses_without_generating(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(EXAMPLE, data)
    given = {"r1": REPLIES["roaming in Spain"], "r4": REPLIES["activate my eSIM"]}
    lines = []
    for line in (data / "multi_turn.jsonl").read_text().splitlines():
        row = json.loads(line)
        if row["case_id"] in given:
            lines.append(json.dumps({**row, "response": given[row["case_id"]], "ranking": ["KB_2"]}))
    (data / "multi_turn.jsonl").write_text("\n".join(lines) + "\n")
    with OpenAIServer(rag_responder) as server:
        outcome = run_task(RunSettings(task="answer-classification", data=data, judge_model=JUDGE,
                                       out=tmp_path / "run", api_base=server.base_url, cache_dir=str(tmp_path / "c")))
        assert {r.model for r in server.requests} == {"judge-a"}
        assert all("Article KB_2:" in r.prompt.split("[Other retrieved articles")[1] for r in server.requests)
    m = metrics(outcome)
    assert m["Correct share"] == 0.5 and m["Refusal share"] == 0.5 and outcome.exit_code == 0


# -- the paper's curve: 16 / 32 / 64 / 96 / 128 offered tools; resume and cache ------------------------

def big_tool_data(folder: Path) -> Path:
    """A 128-tool catalog (three real tools among 125 distractors) and three cases."""
    real = {"refund_charge": "invoice_id", "send_esim_qr": "email", "block_sim": "number"}
    tools = [{"name": name, "description": f"{name} tool", "parameters": {
        "type": "object", "properties": {arg: {"type": "string"}}, "required": [arg]}} for name, arg in real.items()]
    tools += [{"name": f"distractor_{i:03d}", "description": "Unrelated."} for i in range(125)]
    cases = [{"case_id": "k1", "conversation": "Customer: Refund invoice INV-7, please.",
              "expected": [{"name": "refund_charge", "arguments": {"invoice_id": "INV-7"}}]},
             {"case_id": "k2", "conversation": "Customer: Email my eSIM QR code to ana@example.com.",
              "expected": [{"name": "send_esim_qr", "arguments": {"email": "ana@example.com"}}]},
             {"case_id": "k3", "conversation": "Customer: My phone was stolen, block 0612345678 now.",
              "expected": [{"name": "block_sim", "arguments": {"number": "0612345678"}}]}]
    folder.mkdir(parents=True)
    for name, rows in (("tools.jsonl", tools), ("tool_calls.jsonl", cases)):
        (folder / name).write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


def crowded_responder(request: Request) -> Reply:
    """Right with up to 32 tools; with 64 only for k1; with 96 or more it calls a distractor."""
    offered = [t["function"]["name"] for t in request.body["tools"]]
    right = {"INV-7": ("refund_charge", {"invoice_id": "INV-7"}), "eSIM QR": ("send_esim_qr", {"email": "ana@example.com"}),
             "stolen": ("block_sim", {"number": "0612345678"})}
    needle, (name, args) = next((n, call) for n, call in right.items() if n in request.prompt)
    if len(offered) <= 32 or (len(offered) == 64 and needle == "INV-7"):
        return Reply(tool_calls=[{"name": name, "arguments": args}])
    wrong = next(n for n in offered if n.startswith("distractor_"))
    return Reply(tool_calls=[{"name": wrong, "arguments": {}}])


def test_accuracy_vs_16_to_128_offered_tools_then_rerun_without_requests(tmp_path: Path) -> None:
    data = big_tool_data(tmp_path / "data")
    with OpenAIServer(crowded_responder) as server:
        run = RunSettings(task="tool-calls", data=data, model=MODEL, out=tmp_path / "run", api_base=server.base_url,
                          cache_dir=str(tmp_path / "cache"))
        outcome = run_task(run)  # default sizes: 16, 32, 64, 96, 128
        sizes = [len(r.body["tools"]) for r in server.requests]
        assert sorted(sizes) == [16] * 3 + [32] * 3 + [64] * 3 + [96] * 3 + [128] * 3
        m = metrics(outcome)
        # by hand: 16 -> 3/3, 32 -> 3/3, 64 -> 1/3 (k1), 96 -> 0/3, 128 -> 0/3; overall 7/15
        assert [m[f"tool-selection accuracy @{n} tools"] for n in (16, 32, 64, 96, 128)] == pytest.approx(
            [1.0, 1.0, 1 / 3, 0.0, 0.0])
        assert m["tool-selection accuracy"] == pytest.approx(7 / 15) and m["argument match"] == pytest.approx(7 / 15)
        [table] = outcome.summary.tables
        assert [row[1:3] for row in table.rows] == [[16, 3], [32, 3], [64, 3], [96, 3], [128, 3]]
        offered = {(r["case_id"], r["n_tools"]): set(r["offered"]) for r in rows(outcome)}
        for case in ("k1", "k2", "k3"):  # each larger offer contains the smaller one
            chain = [offered[(case, n)] for n in (16, 32, 64, 96, 128)]
            assert all(a < b for a, b in itertools.pairwise(chain))

        again = run_task(run)  # same folder: everything comes from the journal
        assert len(server.requests) == 15 and metrics(again) == m
        fresh = run_task(RunSettings(**{**run.__dict__, "out": tmp_path / "elsewhere"}))  # no journal, same cache
        assert len(server.requests) == 15 and metrics(fresh) == m
        assert fresh.gateway.usage.as_dict()[MODEL]["cached"] == 15


def test_answer_classification_rerun_reasks_only_the_unreadable_verdict(tmp_path: Path) -> None:
    with OpenAIServer(rag_responder) as server:
        first = run_task(settings(server, tmp_path, "answer-classification", model=MODEL, judge_model=JUDGE, k=2))
        assert server.chat_count() == 8  # four replies, four verdicts
        second = run_task(settings(server, tmp_path, "answer-classification", model=MODEL, judge_model=JUDGE, k=2))
        # journaled rows are reused; r3's unreadable verdict was never cached, so it alone is asked again
        assert server.chat_count() == 9 and "arrives tomorrow" in server.requests[-1].prompt
        second_rows = rows(second)
    assert second.gateway.usage.as_dict()[JUDGE]["calls"] == 1 and MODEL not in second.gateway.usage.as_dict()
    assert metrics(second) == metrics(first) and second.exit_code == 1  # still an error, never a default label
    assert next(r for r in second_rows if r["case_id"] == "r3")["judge_raw"] == '{"category": "Wrong"}'

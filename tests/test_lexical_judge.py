"""The test server's lexical judge mode (issue 41, item 3): `OpenAIServer(judge_mode="lexical")` and
`python -m ragjudge.testing.openai_server --judge-mode lexical` answer every built-in judge's prompts with well-formed
answers derived from word overlap, so a whole evaluation runs offline and a wrong answer scores lower than a right
one; a prompt it does not recognise is an error, never a made-up score."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import litellm
import pytest

import ragjudge
from ragjudge.bench.cxm.prompts import messages as cxm_messages
from ragjudge.judges.registry import JudgeRegistry
from ragjudge.testing.lexical_judge import lexical_judge, marker
from ragjudge.testing.openai_server import OpenAIServer, Reply, Request

CONTEXTS = ["Policy 42 covers water damage caused by burst or leaking pipes.",
            "Policy 42 excludes flood damage from rivers."]
QUESTION = "What does policy 42 cover?"
REFERENCE = "Policy 42 covers water damage from burst or leaking pipes."
RIGHT = "Policy 42 covers water damage from burst pipes."
WRONG = "Policy 42 covers car theft and lost luggage abroad."
DECLINE = "I do not have information about that policy."
OFFLINE = {"rb_alg", "idk_lexical", "underspecified_lexical"}
"""The built-in judges that call no model."""
HIGHER_IS_WORSE = {"idk_eval", "underspecified_eval"}
"""Metrics that do not rank a right answer above a wrong one (a decline detector, a clarification detector)."""


def llm_judges() -> list[str]:
    """Every built-in judge of plain records and MTRAG tasks that asks a judge model: each must be answered."""
    return [name for name in JudgeRegistry().names if name not in OFFLINE]


@pytest.fixture(scope="module")
def lexical() -> OpenAIServer:
    with OpenAIServer(judge_mode="lexical") as server:
        yield server


@pytest.fixture(scope="module")
def judged(lexical: OpenAIServer, tmp_path_factory: pytest.TempPathFactory) -> ragjudge.EvalResult:
    """A right, a wrong and a declining answer to one question, by every LLM judge and a criterion."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", "sk-test")
        patch.setenv("RAGJUDGE_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        rows = [{"id": kind, "question": QUESTION, "answer": answer, "contexts": CONTEXTS, "reference": REFERENCE}
                for kind, answer in (("right", RIGHT), ("wrong", WRONG), ("decline", DECLINE))]
        cites = ragjudge.criterion("Does the answer cite the policy number it relies on?", name="cites_policy")
        return ragjudge.evaluate(rows, judges=[*llm_judges(), cites], judge_models=["openai/lexical-judge"],
                                 api_base=lexical.base_url, show_progress=False)


def test_every_builtin_judge_is_answered_and_a_wrong_answer_scores_lower(judged: ragjudge.EvalResult) -> None:
    assert set(llm_judges()) >= {"faithfulness", "answer_relevancy", "context_precision", "context_recall",
                                 "answer_correctness", "context_relevance", "rb_llm", "idk", "rl_f"}
    by_id = {s.id: s.scores for s in judged.samples}
    metrics = {score.judge: metric for metric, score in by_id["right"].items()}
    assert set(metrics) == {*llm_judges(), "cites_policy"}
    for sample, scores in by_id.items():
        errors = {m: s.error for m, s in scores.items() if s.error}
        assert not errors, f"{sample}: {errors}"
    right = {m: s.value for m, s in by_id["right"].items()}
    wrong = {m: s.value for m, s in by_id["wrong"].items()}
    decline = {m: s.value for m, s in by_id["decline"].items()}
    answer_metrics = [m for m in right if m not in HIGHER_IS_WORSE and m not in ("context_precision",
                                                                                 "context_recall",
                                                                                 "context_relevance")]
    assert len(answer_metrics) == 7  # answer_correctness(_llm), answer_relevancy, faithfulness, RB_llm, RL_F, the criterion
    for metric in answer_metrics:  # the retrieval metrics judge the contexts, the same for the three answers
        if metric != "answer_relevancy":  # relevancy is to the question's topic, which the wrong answer keeps
            assert wrong[metric] < right[metric], (metric, wrong[metric], right[metric])
        assert decline[metric] < right[metric], (metric, decline[metric], right[metric])
    assert decline["idk_eval"] == 1.0 and right["idk_eval"] == wrong["idk_eval"] == 0.0
    assert right["faithfulness"] == 1.0 and wrong["faithfulness"] == 0.0  # no empty statement list, no free 1.0
    assert right["context_recall"] == wrong["context_recall"] > 0


def test_statements_are_never_an_empty_list(lexical: OpenAIServer) -> None:
    """Each statement-extraction answer holds the answer's sentences: `{"statements": []}` would give a fake score."""
    extraction = [r for r in lexical.requests if "analyze the complexity of each sentence" in Request(
        "", body=r.body).prompt]
    assert extraction
    for request in extraction:
        reply = lexical_judge()(request)
        assert isinstance(reply, str) and json.loads(reply)["statements"], reply


def test_an_unrecognised_prompt_is_an_error_not_a_score(lexical: OpenAIServer, tmp_path: Path, monkeypatch) -> None:
    with pytest.raises(litellm.BadRequestError, match="does not recognise this prompt: 'Rate this answer from"):
        litellm.completion(model="openai/lexical-judge", api_base=lexical.base_url, api_key="sk-test",
                           messages=[{"role": "user", "content": "Rate this answer from 1 to 10: Paris."}])
    judges = tmp_path / "judges"
    judges.mkdir()
    (judges / "politeness.yaml").write_text(
        "name: politeness\ndescription: Is the answer polite?\nmetric: politeness\nkind: llm\n"
        "prompt:\n  user: 'Is this answer polite? Answer yes or no. {{ response }}'\n"
        "parse:\n  kind: choice\n  pattern: '(yes|no)'\n  choices: {\"yes\": 1.0, \"no\": 0.0}\n")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("RAGJUDGE_CACHE_DIR", str(tmp_path / "cache"))
    result = ragjudge.evaluate([{"question": QUESTION, "answer": RIGHT}], judges=["politeness"],
                               judge_models=["openai/lexical-judge"], judge_dir=[judges],
                               api_base=lexical.base_url, show_progress=False)
    score = result.samples[0].scores["politeness"]
    assert score.value is None and "does not recognise this prompt" in score.error


def test_the_bench_judges_prompts_are_answered_as_their_parsers_expect() -> None:
    """DialSim's judge and CXMArena's judges, rendered from their specs: right and wrong cases, each well-formed."""
    registry, respond = JudgeRegistry(), lexical_judge()

    def ask(name: str, **variables) -> str:
        reply = respond(Request("/v1/chat/completions", body={"messages": cxm_messages(registry.specs[name],
                                                                                        variables)}))
        assert isinstance(reply, str), reply
        return reply

    question = {"question": "Ross: Where did Rachel work?"}
    assert json.loads(ask("dialsim_judge", **question, true_answer="Central Perk", prediction="At Central Perk.")) \
        == {"correct": True, "wrong": False}
    assert json.loads(ask("dialsim_judge", **question, true_answer="Central Perk", prediction="Ralph Lauren")) \
        == {"correct": False, "wrong": True}
    gold = [{"id": "kb-1", "text": "Refunds are paid within 5 days to the original card."}]
    other = [{"id": "kb-9", "text": "Gift cards never expire and can be topped up online."}]
    common = dict(conversation="Customer: When do I get my refund?", reference="", gold_articles=gold,
                  other_articles=other)
    for response, category in (("Refunds are paid within 5 days to the original card.", "Correct"),
                               ("Gift cards never expire and can be topped up online.", "Incorrect"),
                               ("Refunds arrive by cheque after three months.", "Hallucination"),
                               ("I do not have information about refunds.", "Refusal")):
        assert json.loads(ask("cxm_answer_classification", response=response, **common))["category"] == category
    intent = dict(conversation="Customer: my card was charged twice", taxonomy_name="banking",
                  predicted_description="", gold_description="")
    assert ask("cxm_intent_match", predicted="Duplicate card charge", gold="Card charged twice duplicate",
               **intent).endswith("Verdict: yes")
    assert ask("cxm_intent_match", predicted="Lost card", gold="Card charged twice duplicate",
               **intent).endswith("Verdict: no")
    a = {"id": "kb-1", "text": "The monthly fee of the premium plan is 10 dollars."}
    assert ask("cxm_contradiction", a=a, b={"id": "kb-2", "text": "The premium plan monthly fee is 12 dollars."}) \
        .endswith("Verdict: yes")
    assert ask("cxm_contradiction", a=a, b={"id": "kb-2", "text": "Passwords must have twelve characters."}) \
        .endswith("Verdict: no")


def test_scripted_replies_answer_first_then_the_lexical_judge() -> None:
    def first(request: Request) -> str | None:
        return "Rating: [[9]]" if "Special" in request.prompt else None

    with OpenAIServer(first, judge_mode="lexical") as server:
        ask = dict(model="openai/j", api_base=server.base_url, api_key="sk-test")
        assert litellm.completion(messages=[{"role": "user", "content": "Special"}], **ask) \
            .choices[0].message.content == "Rating: [[9]]"
        with pytest.raises(litellm.BadRequestError):
            litellm.completion(messages=[{"role": "user", "content": "anything else"}], **ask)
    with pytest.raises(ValueError, match="judge_mode must be one of lexical, got 'semantic'"):
        OpenAIServer(judge_mode="semantic")


def test_the_command_line_judge_mode(tmp_path: Path) -> None:
    replies = tmp_path / "replies.jsonl"
    replies.write_text(json.dumps({"match": "Special", "reply": "scripted"}) + "\n")
    proc = subprocess.Popen([sys.executable, "-m", "ragjudge.testing.openai_server", "--judge-mode", "lexical",
                             "--replies", str(replies)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("ragjudge test server: http://127.0.0.1:") and "(1 rule(s); lexical judge;" in line
        ask = dict(model="openai/j", api_base=line.split()[3], api_key="sk-test")
        assert litellm.completion(messages=[{"role": "user", "content": "Special"}], **ask) \
            .choices[0].message.content == "scripted"
        idk = "\n".join(m["content"] for m in cxm_messages(JudgeRegistry().specs["idk"], {
            "conversation_lines": "user: Can I pay monthly?", "response": DECLINE}))
        assert litellm.completion(messages=[{"role": "user", "content": idk}], **ask) \
            .choices[0].message.content == "yes"
        with pytest.raises(litellm.BadRequestError, match="does not recognise"):
            litellm.completion(messages=[{"role": "user", "content": "Hello"}], **ask)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
    done = subprocess.run([sys.executable, "-m", "ragjudge.testing.openai_server", "--judge-mode", "lexical",
                           "--default", "OK"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stderr.strip().splitlines()[-1].endswith(
        "--default is not used with --judge-mode: the judge answers what no rule matches")


def test_a_responder_error_is_a_400_never_a_retried_500() -> None:
    """A prompt the judge recognises but cannot read (cut short) is answered 400 naming the judge's instruction."""
    respond = lexical_judge()
    instruction = marker(JudgeRegistry().specs["rb_llm"].prompt.user)
    reply = respond(Request("/v1/chat/completions", body={"messages": [{"role": "user", "content": instruction}]}))
    assert isinstance(reply, Reply) and reply.status == 400 and "could not read it" in reply.content

"""A criterion in one line (issue 33, item 3; G-Eval, Liu et al. 2023), through litellm against the local server:
evaluation steps written once per criterion and cached, the probability-weighted score where the server gives
log-probabilities and the written number where it gives none, a panel's median, an unparsable reply an error with its
raw text; in `evaluate`, on the command line and in a pytest assertion; a rerun sends 0 requests."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

import ragjudge
from conftest import run_cli
from ragjudge.errors import UsageError
from ragjudge.judges.criterion import Criterion, weighted_score, written_score
from ragjudge.testing.openai_server import OpenAIServer, Reply, Request

pytest_plugins = ["pytester"]  # one test runs a pytest session: the module runs alone too

STEPS = "1. Look for a policy number in the answer.\n2. Check it is the one the passages name."
ROWS = [{"question": "What does policy 42 cover?", "answer": "Policy 42 covers water damage.",
         "contexts": ["Policy 42 covers water damage."]},
        {"question": "Is fire covered?", "answer": "Yes, it is.", "contexts": ["Policy 7 covers fire."]}]
CITES = ragjudge.criterion("Does the answer cite the policy number?", name="cites_policy")


def judge(request: Request) -> Reply:
    prompt = request.last_user
    if "Write the evaluation steps" in prompt:
        return Reply(content=STEPS)
    if STEPS not in prompt or "Evaluation criterion (1 to 5): Does the answer cite the policy number?" not in prompt:
        return Reply(status=400, content="not the criterion's prompt")
    if request.model == "plain":  # a provider without log-probabilities
        return Reply(content="2" if "Yes, it is." in prompt else "5")
    if "Yes, it is." in prompt:
        return Reply(content="1", top_logprobs=[{"1": math.log(0.8), "2": math.log(0.2)}])
    return Reply(content="5", top_logprobs=[{"5": math.log(0.5), "4": math.log(0.5), "x": math.log(0.01)}])


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with OpenAIServer(judge) as srv:
        yield srv


def test_steps_once_a_weighted_score_per_sample_and_a_free_rerun(server: OpenAIServer) -> None:
    run = dict(metrics=[CITES], judge_models=["openai/judge"], api_base=server.base_url, show_progress=False)
    result = ragjudge.evaluate(ROWS, **run)
    assert len(server.requests) == 3  # the steps once, then one score per sample
    cited, uncited = (s.scores["cites_policy"] for s in result.samples)
    assert cited.details["score"] == pytest.approx(4.5) and cited.value == pytest.approx(0.875)  # (4.5 - 1) / 4
    assert uncited.details["score"] == pytest.approx(1.2) and uncited.value == pytest.approx(0.05)
    assert cited.details["steps"] == STEPS and "probability-weighted" in cited.members[0].rationale
    assert result.summary.metrics["cites_policy"].value == pytest.approx((0.875 + 0.05) / 2)
    scores = [r.body for r in server.requests[1:]]
    assert all(b["logprobs"] is True and b["top_logprobs"] == 20 for b in scores)
    ragjudge.evaluate(ROWS, **run)
    assert len(server.requests) == 3  # steps and scores come from the response cache


def test_a_panel_takes_the_median_and_a_plain_provider_the_written_number(server: OpenAIServer) -> None:
    result = ragjudge.evaluate(ROWS[:1], metrics=[CITES], judge_models=["openai/judge", "openai/plain", "openai/plain"],
                               api_base=server.base_url, show_progress=False)
    score = result.samples[0].scores["cites_policy"]
    assert [m.details["score"] for m in score.members] == [4.5, 5.0, 5.0]
    assert score.details["score"] == 5.0 and score.members[1].rationale == "the number written"


def test_an_unparsable_reply_is_an_error_with_its_raw_text(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with OpenAIServer(lambda r: STEPS if "Write the evaluation steps" in r.last_user else "Excellent!") as server:
        result = ragjudge.evaluate(ROWS[:1], metrics=[CITES], judge_models=["openai/judge"],
                                   api_base=server.base_url, show_progress=False)
    score = result.samples[0].scores["cites_policy"]
    assert score.value is None and "no whole number from 1 to 5" in score.error
    assert score.members[0].raw == "Excellent!" and result.summary.metrics["cites_policy"].errors == 1


def test_on_the_command_line(server: OpenAIServer, tmp_path: Path, monkeypatch, capsys) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    code, out, err = run_cli(["judge", str(rows), "--judges", "cites_policy", "--criterion", "cites_policy=Does the "
                              "answer cite the policy number?", "--judge-models", "openai/judge", "--api-base",
                              server.base_url,
                              "--out", str(tmp_path / "out.jsonl"), "--format", "json"], monkeypatch, capsys)
    assert code == 0, err
    assert json.loads(out)["metrics"]["cites_policy"]["value"] == pytest.approx((0.875 + 0.05) / 2)
    code, _, err = run_cli(["judge", str(rows), "--criterion", "no equals sign", "--judge-models", "openai/judge",
                            "--out", str(tmp_path / "x.jsonl")], monkeypatch, capsys)
    assert code == 2 and "expected NAME=\"criterion in one sentence\"" in err and err.count("\n") == 1


def test_criterion_values_are_checked() -> None:
    with pytest.raises(UsageError, match="criterion name: must be a name"):
        ragjudge.criterion("Is it polite?", name="is polite")
    with pytest.raises(UsageError, match="criterion scale"):
        ragjudge.criterion("Is it polite?", name="polite", scale=(5, 1))
    assert Criterion.parse("polite = Is it polite? Really?").criterion == "Is it polite? Really?"


def test_scores_from_log_probabilities_and_from_text() -> None:
    lp = [{"Score": -0.1}, {"3": math.log(0.5), "4": math.log(0.5)}]
    assert weighted_score(lp, (1, 5))[0] == pytest.approx(3.5)  # the first position holding a scale value
    assert weighted_score([{"9": 0.0}], (1, 5)) == (None, "")
    assert written_score("Score: 4/5", (1, 5)) == 4.0 and written_score("10 out of 10", (1, 5)) is None


def test_in_a_pytest_assertion(pytester: pytest.Pytester, server: OpenAIServer) -> None:
    pytester.makepyfile(test_app='''
import ragjudge
from ragjudge.pytest_plugin import assert_criterion

CITES = ragjudge.criterion("Does the answer cite the policy number?", name="cites_policy")


def test_cites(rag_judge):
    result = rag_judge.evaluate(question="What does policy 42 cover?", answer="Policy 42 covers water damage.",
                                passages=["Policy 42 covers water damage."], judges=[CITES])
    assert_criterion(result, CITES, min=4)


def test_does_not_cite(rag_judge):
    result = rag_judge.evaluate(question="Is fire covered?", answer="Yes, it is.",
                                passages=["Policy 7 covers fire."], judges=[CITES])
    assert_criterion(result, CITES)


def test_does_not_cite_at_two(rag_judge):
    result = rag_judge.evaluate(question="Is fire covered?", answer="Yes, it is.",
                                passages=["Policy 7 covers fire."], judges=[CITES])
    assert_criterion(result, CITES, min=2)
''')
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--ragjudge-judge-models", "openai/judge",
                                          "--ragjudge-api-base", server.base_url, "--ragjudge-cache-dir",
                                          str(pytester.path / "cache"))
    result.assert_outcomes(passed=1, failed=2)
    # the score and the threshold on the criterion's 1-5 scale, as the user gave min (0.05 and 0.25 as 0-1 scores)
    result.stdout.fnmatch_lines(["*assert_criterion: cites_policy 1.2 is below 3", "*= 1.2 *needs >= 3 *FAILED*"])
    result.stdout.fnmatch_lines(["*assert_criterion: cites_policy 1.2 is below 2", "*= 1.2 *needs >= 2 *FAILED*"])

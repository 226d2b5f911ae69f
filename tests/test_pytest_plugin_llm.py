"""The pytest plugin's LLM judges (idk, rb_llm panel, rl_f) end to end: inner pytest runs (pytester) ->
plugin -> LLMGateway -> litellm -> the local OpenAI-compatible server, which plays the judge models.
Also: the response cache makes an unchanged suite re-run with zero requests, offline mode sends none."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from importlib.metadata import entry_points
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pytest  # noqa: E402

# Imported here, not first inside an inner run: pytester restores sys.modules after each in-process
# run, and heavy libraries (numpy, torch) cannot be imported twice in one process.
import bert_score  # noqa: E402,F401
import ragjudge.judges.rl_f  # noqa: E402,F401
import ragjudge.pytest_plugin.evaluator  # noqa: E402,F401
from ragjudge.llm._litellm import litellm  # noqa: E402
from ragjudge.testing.openai_server import OpenAIServer, Reply, Request  # noqa: E402

pytest_plugins = ["pytester"]
litellm()

STATEMENTS_MARK = "Break down each sentence into one or more fully understandable statements"
NLI_MARK = "Your task is to judge the faithfulness of a series of statements"
SECRET = "sk-ragjudge-test-secret-0123456789"
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "pytest_plugin"
QUIET = ["-p", "no:cacheprovider", "-o", "asyncio_default_fixture_loop_scope=function"]


def plugin_args() -> list[str]:
    """Installed with the pytest11 entry point the plugin loads itself (and `-p` would register it twice)."""
    if any(ep.value == "ragjudge.pytest_plugin" for ep in entry_points(group="pytest11")):
        return []
    return ["-p", "ragjudge.pytest_plugin"]


def _ragas_input(request: Request) -> dict:
    tail = request.last_user.rsplit("Now perform the same with the following input\ninput: ", 1)[1]
    return json.loads(tail.rsplit("\nOutput: ", 1)[0])


def judge_models(request: Request) -> str | Reply:
    """Plays every judge: ragas's two faithfulness prompts (a statement per sentence; supported iff verbatim
    in the passages), the IDK prompt (yes iff the response says "don't know"), RB_llm (judge-a rates 8,
    judge-b 6). judge-bad answers the IDK prompt with something unparsable."""
    prompt, model = request.last_user, request.model
    if STATEMENTS_MARK in prompt:
        answer = _ragas_input(request)["answer"]
        return json.dumps({"statements": [s.strip() + "." for s in answer.split(".") if s.strip()]})
    if NLI_MARK in prompt:
        data = _ragas_input(request)
        return json.dumps({"statements": [
            {"statement": s, "reason": "verbatim in the passages" if s in data["context"] else "not in the passages",
             "verdict": int(s in data["context"])} for s in data["statements"]]})
    if "Rating: [[rating]]" in prompt:
        return {"judge-a": "Covers the reference. Rating: [[8]]", "judge-b": "Mostly. Rating: [[6]]"}[model]
    if prompt.rstrip().endswith("[Output]"):
        if model == "judge-bad":
            return "Hard to say, really."
        response = prompt.rsplit("[Response]", 1)[1]
        return "yes" if "don't know" in response.lower() else "no"
    return Reply(status=400, content="unexpected prompt")


@pytest.fixture(scope="module", autouse=True)
def warm_bert() -> None:
    """RB_alg once here, on the backend `auto` picks, before any inner run scores with it (the offline suite's
    assert_matches_reference(rb_llm=...) still checks RB_alg): what it imports is then never imported twice."""
    import importlib.util

    from ragjudge.embeddings.bertscore import BertScorer, resolve_model
    from ragjudge.embeddings.cached_bertscore import CachedBertScorer

    config = resolve_model("bundled")
    BertScorer(config).score(["warm"], ["up"])
    CachedBertScorer(config, device="cpu").score(["warm"], ["up"])
    if importlib.util.find_spec("onnxruntime") is not None:
        import onnxruntime.quantization  # noqa: F401


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer(judge_models) as srv:
        yield srv


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("RAGJUDGE_API_KEY", SECRET)  # the plugin hands it to the gateway; litellm needs one


SUITE = '''
import pytest
from ragjudge.pytest_plugin import assert_grounded, assert_idk_correct, assert_matches_reference

PASSAGES = [
    {"id": "p1", "text": "The Eiffel Tower is in Paris. The Eiffel Tower was completed in 1889."},
    {"id": "p2", "text": "Paris is the capital of France."},
]
HISTORY = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello! Ask me about Paris."}]


def test_grounded(rag_judge):
    result = rag_judge.evaluate(conversation=HISTORY, question="Tell me about the Eiffel Tower.",
                                answer="The Eiffel Tower is in Paris. The Eiffel Tower was completed in 1889.",
                                passages=PASSAGES, judges=["rl_f"])
    assert_grounded(result, min=0.9)


def test_not_grounded(rag_judge):
    result = rag_judge.evaluate(conversation=HISTORY, question="Tell me about the Eiffel Tower.",
                                answer="The Eiffel Tower is in Paris. The Eiffel Tower is blue.",
                                passages=PASSAGES, judges=["rl_f"])
    assert_grounded(result)


def test_panel_matches_reference(rag_judge):
    result = rag_judge.evaluate(question="Where is the Eiffel Tower?", answer="The Eiffel Tower is in Paris.",
                                passages=PASSAGES, reference="It is in Paris, France.", judges=["rb_llm"])
    assert_matches_reference(result, rb_llm=0.65)


def test_declines_unanswerable(rag_judge):
    result = rag_judge.evaluate(question="What colour is the Eiffel Tower's lift?", answer="I don't know.",
                                passages=PASSAGES, expected_answerable=False, judges=["idk"])
    assert_idk_correct(result)


@pytest.mark.asyncio
async def test_async_api(rag_judge):
    result = await rag_judge.aevaluate(question="Where is the Eiffel Tower?", answer="The Eiffel Tower is in Paris.",
                                       passages=PASSAGES, expected_answerable=True, judges=["idk"])
    assert_idk_correct(result)
'''


def run_suite(pytester: pytest.Pytester, server: OpenAIServer, *extra: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess(
        *plugin_args(), *QUIET, "-rs",
        "--ragjudge-judge-models", "openai/judge-a,openai/judge-b", "--ragjudge-api-base", server.base_url,
        "--ragjudge-cache-dir", str(pytester.path / "cache"), "--ragjudge-report", "report.json", *extra)


def test_llm_judges_and_a_cached_rerun(pytester: pytest.Pytester, server: OpenAIServer, env: None) -> None:
    pytester.makepyfile(test_app=SUITE)
    before = server.chat_count()
    first = run_suite(pytester, server)
    first.assert_outcomes(passed=4, failed=1)
    sent = server.chat_count() - before
    # rl_f: 2 calls (statements, NLI) x 2 tests; rb_llm: one per panel member; idk: 2 tests
    assert sent == 4 + 2 + 2
    first.stdout.fnmatch_lines([
        "*AssertionError: assert_grounded: RL_F 0.500 is below 0.7",
        "*rl_f*RL_F*= 0.500*needs >= 0.7*FAILED*[[]openai/judge-a[]]",
        "*conversation: 2 earlier turn(s); last: agent: Hello! Ask me about Paris.",
        "*answer:    The Eiffel Tower is in Paris. The Eiffel Tower is blue.",
        "*rl_f rationale:",
        "*[[]1[]] The Eiffel Tower is in Paris. — verbatim in the passages",
        "*[[]0[]] The Eiffel Tower is blue. — not in the passages",
    ])
    first.stdout.fnmatch_lines(["*= ragjudge =*", "rl_f *RL_F *2 *0.750 *1/2 (50%) *>= 0.9, >= 0.7*",
                                "rb_llm *RB_llm *1 *0.700 *1/1 (100%) *>= 0.65*",
                                f"LLM judges: openai/judge-a, openai/judge-b; {sent} request(s) sent, 0 answered*"])
    report = json.loads((pytester.path / "report.json").read_text())
    assert report["llm"]["requests_sent"] == sent and report["llm"]["cached"] == 0
    judged = {e["test"].split("::")[1]: e["judges"] for e in report["evaluations"]}
    assert judged["test_grounded"]["rl_f"]["value"] == 1.0
    assert judged["test_grounded"]["rl_f"]["model"] == "openai/judge-a"
    assert judged["test_grounded"]["rl_f"]["details"]["statements"] == 2
    assert judged["test_not_grounded"]["rl_f"]["value"] == 0.5
    panel = judged["test_panel_matches_reference"]["rb_llm"]
    assert panel["value"] == 0.7 and [(m["model"], m["value"]) for m in panel["members"]] == [
        ("openai/judge-a", 0.8), ("openai/judge-b", 0.6)]
    assert judged["test_declines_unanswerable"]["idk"]["label"] == "yes"
    assert set(judged["test_declines_unanswerable"]) == {"idk"}, "no offline stand-in when the LLM judge ran"
    assert judged["test_async_api"]["idk"]["label"] == "no"

    second = run_suite(pytester, server)
    second.assert_outcomes(passed=4, failed=1)
    assert server.chat_count() - before == sent, "the unchanged suite must re-run from the response cache"
    report = json.loads((pytester.path / "report.json").read_text())
    assert report["llm"]["requests_sent"] == 0 and report["llm"]["cached"] == sent
    assert report["summary"]["rl_f"]["mean"] == 0.75
    assert report["tests"] == {"test_app.py::test_grounded": "passed", "test_app.py::test_not_grounded": "failed",
                               "test_app.py::test_panel_matches_reference": "passed",
                               "test_app.py::test_declines_unanswerable": "passed",
                               "test_app.py::test_async_api": "passed"}
    second.stdout.fnmatch_lines([f"LLM judges: *; 0 request(s) sent, {sent} answered from the response cache"])
    # the key reached the server (litellm needs one) but is in neither the report nor the cache
    for path in [pytester.path / "report.json", *(pytester.path / "cache").iterdir()]:
        assert SECRET.encode() not in path.read_bytes()


def test_offline_never_calls_an_llm(pytester: pytest.Pytester, server: OpenAIServer, env: None) -> None:
    pytester.makepyfile(test_app=SUITE)
    before = server.chat_count()
    result = run_suite(pytester, server, "--ragjudge-offline")
    assert server.chat_count() == before
    # LLM checks skip; the idk checks fall back to the offline lexical judge and pass; assert_matches_reference
    # (rb_llm=0.65) still checks RB_alg at its default threshold and says that it could not check RB_llm
    result.assert_outcomes(passed=3, skipped=2)
    result.stdout.fnmatch_lines([
        "*SkippedCheck: ragjudge: assert_matches_reference did not check rb_llm: offline mode*",
        "SKIPPED [[]1[]] test_app.py:11: ragjudge: assert_grounded did not check rl_f: offline mode "
        "(--ragjudge-offline): LLM judges are never called",
        "SKIPPED [[]1[]] test_app.py:18: ragjudge: assert_grounded did not check rl_f: offline mode*"])
    report = json.loads((pytester.path / "report.json").read_text())
    assert report["offline"] is True and report["llm"]["requests_sent"] == 0
    assert report["summary"]["idk_lexical"]["n"] == 2


def test_unparsable_judge_output_fails_with_the_raw_text(pytester: pytest.Pytester, server: OpenAIServer,
                                                         env: None) -> None:
    pytester.makepyfile(test_app='''
from ragjudge.pytest_plugin import assert_idk_correct

def test_idk(rag_judge):
    result = rag_judge.evaluate(question="Where?", answer="In Paris.", expected_answerable=True, judges=["idk"])
    assert result.errors
    assert_idk_correct(result)
''')
    # models, server and cache from the ini file this time (the cache folder relative to it)
    pytester.makeini(f"[pytest]\nragjudge_judge_models = openai/judge-bad\nragjudge_api_base = {server.base_url}\n"
                     "ragjudge_cache_dir = cache\n")
    result = pytester.runpytest_inprocess(*plugin_args(), *QUIET)
    result.assert_outcomes(failed=1)
    assert (pytester.path / "cache" / "llm-responses.sqlite").exists()
    result.stdout.fnmatch_lines([
        "*AssertionError: assert_idk_correct: the idk judge gave no verdict",
        "*idk error: unparsable judge output: no match for the expected answer format",
        "*idk raw output: Hard to say, really.",
    ])
    result.stdout.fnmatch_lines(["idk *idk_eval *0 *- *- *- *0 *1"])


def test_unknown_model_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_app="def test_nothing():\n    pass\n")
    result = pytester.runpytest_inprocess(*plugin_args(), *QUIET,
                                          "--ragjudge-judge-models", "judge-without-provider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert re.search(r"ragjudge: unknown model 'judge-without-provider'", result.stderr.str())


def test_example_suite_with_a_judge_panel(pytester: pytest.Pytester, server: OpenAIServer, env: None) -> None:
    """With judge models the example's grounding test runs instead of skipping, RB_llm joins RB_alg."""
    from ragjudge.embeddings.bertscore import BertScorer, resolve_model

    BertScorer(resolve_model("bundled"))  # transformers' model modules, imported before the inner run
    before = server.chat_count()
    result = run_suite(pytester, server, str(EXAMPLE))
    result.assert_outcomes(passed=10, xfailed=1)
    assert server.chat_count() > before
    report = json.loads((pytester.path / "report.json").read_text())
    grounded = next(e for e in report["evaluations"] if e["test"].endswith("test_answers_are_grounded_in_the_passages"))
    assert grounded["judges"]["rl_f"]["value"] == 1.0  # the app's extractive answer is verbatim from its passage
    # RB_llm on every assert_matches_reference, also those that give only rb_alg's threshold (was 3: dropped there)
    assert report["summary"]["rb_llm"]["n"] == 7
    assert report["summary"]["idk"]["n"] >= 8

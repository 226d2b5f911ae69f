"""RL_F (RAGAS faithfulness) end to end: ragas's Faithfulness metric -> our adapter -> LLMGateway ->
litellm -> the local OpenAI-compatible server, which plays the judge model by answering ragas's own
statement-extraction and NLI prompts with JSON."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pytest  # noqa: E402
from ragas.metrics._faithfulness import (  # noqa: E402
    NLIStatementInput,
    NLIStatementPrompt,
    StatementGeneratorInput,
    StatementGeneratorPrompt,
)

from ragjudge.bench.mtrag.items import judged_item  # noqa: E402
from ragjudge.judges.base import JudgeContext, JudgedItem  # noqa: E402
from ragjudge.judges.rl_f import RLFJudge  # noqa: E402
from ragjudge.judges.spec import JudgeSpec, load_spec  # noqa: E402
from ragjudge.llm import LLMGateway, ResponseCache  # noqa: E402
from ragjudge.models import Passage, Prediction, Task, Turn  # noqa: E402
from ragjudge.testing.openai_server import OpenAIServer, Reply, Request, scripted  # noqa: E402

SPEC_PATH = Path(__file__).resolve().parents[1] / "judges" / "rl_f.yaml"
MODEL = "openai/judge-a"

STATEMENTS_MARK = "Break down each sentence into one or more fully understandable statements"
NLI_MARK = "Your task is to judge the faithfulness of a series of statements"
FIX_MARK = "The output string did not satisfy the constraints given in the prompt"

PASSAGES = [
    Passage(id="p1", text="The Eiffel Tower is in Paris. The Eiffel Tower was completed in 1889."),
    Passage(id="p2", text="Paris is the capital of France."),
]
# Three sentences; the passages support the first two, not the third: faithfulness 2/3.
RESPONSE = "The Eiffel Tower is in Paris. The Eiffel Tower was completed in 1889. The Eiffel Tower is blue."


def prompt_input(request: Request) -> dict:
    """The item-specific JSON ragas puts after its few-shot examples."""
    tail = request.last_user.rsplit("Now perform the same with the following input\ninput: ", 1)[1]
    return json.loads(tail.rsplit("\nOutput: ", 1)[0])


def split_statements(request: Request) -> str:
    """Statement extraction: one statement per sentence (NOSTATEMENTS answers yield none)."""
    answer = prompt_input(request)["answer"]
    if "NOSTATEMENTS" in answer:
        return json.dumps({"statements": []})
    sentences = [s.strip() + "." for s in answer.split(".") if s.strip()]
    return json.dumps({"statements": sentences})


def nli_verdicts(request: Request) -> str:
    """NLI: a statement is supported iff it occurs verbatim in the joined context."""
    data = prompt_input(request)
    return "```json\n" + json.dumps({"statements": [
        {"statement": s, "reason": "verbatim in context" if s in data["context"] else "not in context",
         "verdict": int(s in data["context"])}
        for s in data["statements"]
    ]}) + "\n```"


def judge_model(bad_statements: str | Reply | None = None, bad_nli: str | Reply | None = None):
    """A judge that answers both ragas prompts correctly, except where a test scripts a bad answer
    (keyed on the word BADSTATEMENTS / BADNLI in the item's response)."""
    rules: list = []
    if bad_statements is not None:
        rules.append((STATEMENTS_MARK + r".*BADSTATEMENTS", bad_statements))
    if bad_nli is not None:
        rules.append((NLI_MARK + r".*BADNLI", bad_nli))
    rules += [(STATEMENTS_MARK, split_statements), (NLI_MARK, nli_verdicts)]
    return scripted(rules, default=Reply(status=400, content="unexpected prompt"))


@pytest.fixture
def spec() -> JudgeSpec:
    return load_spec(SPEC_PATH)


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer(judge_model(bad_statements="I'd rather not say.", bad_nli="verdicts: yes, yes, no")) as srv:
        yield srv


def gateway(server: OpenAIServer, cache_dir: Path) -> LLMGateway:
    return LLMGateway(cache=ResponseCache(cache_dir), api_base=server.base_url, api_key="sk-test", backoff_base=0.01)


def item(response: str, passages: list[Passage] | None = None, question: str = "Tell me about the Eiffel Tower.",
         n: int = 1) -> JudgedItem:
    task = Task(task_id=f"c{n}::2", conversation_id=f"c{n}", turn=2,
                input=[Turn(speaker="user", text="Hi"), Turn(speaker="agent", text="Hello!"),
                       Turn(speaker="user", text=question)],
                contexts=PASSAGES if passages is None else passages)
    return judged_item(task, Prediction(task_id=task.task_id, text=response))


async def run(judge: RLFJudge, items: list[JudgedItem], gw: LLMGateway) -> tuple[list, list[int]]:
    progress: list[int] = []
    ctx = JudgeContext(gateway=gw, judge_models=[MODEL, "openai/judge-b"], on_progress=progress.append)
    return await judge.judge(items, ctx), progress


def test_spec(spec: JudgeSpec) -> None:
    assert (spec.name, spec.metric, spec.kind, spec.requires) == ("rl_f", "RL_F", "python", ["passages"])
    assert spec.implementation == "ragjudge.judges.rl_f:RLFJudge"
    judge = RLFJudge(spec)
    assert judge.needs_llm and judge.format_fix_retries == 0
    assert judge.describe_models(JudgeContext(judge_models=[MODEL, "openai/judge-b"])) == [MODEL]


@pytest.mark.asyncio
async def test_scores_with_ragas_prompts_and_reruns_from_cache(spec: JudgeSpec, server: OpenAIServer,
                                                               tmp_path: Path) -> None:
    judge = RLFJudge(spec)
    [result], progress = await run(judge, [item(RESPONSE)], gateway(server, tmp_path))

    assert result.error is None, result.error
    assert result.value == 2 / 3 and result.label == "0.6667"
    assert result.model == MODEL
    assert result.details == {"cached": False, "llm_calls": 2, "statements": 3, "supported": 2,
                              "extracted_statements": 3}
    assert progress == [1]
    assert "[0] The Eiffel Tower is blue. — not in context" in (result.rationale or "")

    # Exactly two calls, and they are ragas's own prompts, word for word, at temperature 0.
    statements_req, nli_req = server.requests
    # As MTRAG's script: the whole conversation as "speaker: text" lines, not just the current question.
    question = "user: Hi\nagent: Hello!\nuser: Tell me about the Eiffel Tower."
    assert statements_req.last_user == StatementGeneratorPrompt().to_string(
        StatementGeneratorInput(question=question, answer=RESPONSE))
    sentences = [s.strip() + "." for s in RESPONSE.split(".") if s.strip()]
    assert nli_req.last_user == NLIStatementPrompt().to_string(
        NLIStatementInput(context="\n".join(p.text for p in PASSAGES), statements=sentences))
    assert all(r.body.get("temperature") == 0 and r.model == "judge-a" for r in server.requests)
    assert [m["role"] for m in statements_req.messages] == ["user"]

    # Tokens are the sum over both calls, as the server counted them.
    assert result.prompt_tokens == sum(len(r.last_user.split()) for r in server.requests)
    assert result.completion_tokens and result.completion_tokens > 0
    assert result.raw and result.raw.startswith('{"statements"')

    # A rerun with the same cache makes no request at all and gives the same score.
    before = len(server.requests)
    [again], _ = await run(RLFJudge(spec), [item(RESPONSE)], gateway(server, tmp_path))
    assert len(server.requests) == before
    assert again.value == 2 / 3 and again.details["cached"] is True
    assert (again.prompt_tokens, again.completion_tokens) == (result.prompt_tokens, result.completion_tokens)


@pytest.mark.asyncio
async def test_unparsable_answers_are_errors_with_raw_text_and_no_hidden_calls(
        spec: JudgeSpec, server: OpenAIServer, tmp_path: Path) -> None:
    items = [item("BADSTATEMENTS The Eiffel Tower is in Paris.", n=1),
             item("The Eiffel Tower is in Paris. BADNLI", n=2),
             item(RESPONSE, n=3)]
    results, progress = await run(RLFJudge(spec), items, gateway(server, tmp_path))
    bad_statements, bad_nli, good = results

    assert bad_statements.value is None and bad_statements.error
    assert bad_statements.error.startswith("statements: ragas could not use the judge's output")
    assert bad_statements.raw == "I'd rather not say."
    assert bad_statements.details == {"cached": False, "llm_calls": 1}
    assert bad_statements.prompt_tokens and bad_statements.prompt_tokens > 0

    assert bad_nli.value is None and bad_nli.error and bad_nli.error.startswith("verdicts:")
    assert bad_nli.raw == "verdicts: yes, yes, no"
    assert bad_nli.details == {"cached": False, "llm_calls": 2}

    assert good.value == 2 / 3  # one item's failure does not touch the others
    assert progress == [1, 1, 1]
    # 1 + 2 + 2 calls: ragas's "fix the output format" repair calls are off (format_fix_retries: 0).
    assert len(server.requests) == 5
    assert not any(FIX_MARK in r.prompt for r in server.requests)


@pytest.mark.asyncio
async def test_format_fix_retries_option_restores_ragas_repair_call(tmp_path: Path) -> None:
    spec = load_spec(SPEC_PATH).model_copy(update={"options": {"format_fix_retries": 1}})

    def fix(request: Request) -> str:  # ragas's repair prompt wants {"text": "<fixed output>"}
        return json.dumps({"text": json.dumps({"statements": ["The Eiffel Tower is in Paris."]})})

    responder = scripted([(FIX_MARK, fix), (STATEMENTS_MARK + r".*BADSTATEMENTS", "not json"),
                          (STATEMENTS_MARK, split_statements), (NLI_MARK, nli_verdicts)])
    with OpenAIServer(responder) as srv:
        [result], _ = await run(RLFJudge(spec), [item("BADSTATEMENTS The Eiffel Tower is in Paris.")],
                                gateway(srv, tmp_path))
        assert result.error is None and result.value == 1.0
        assert result.details["llm_calls"] == 3 and len(srv.requests) == 3  # the repair call is counted
        assert FIX_MARK in srv.requests[1].last_user


@pytest.mark.asyncio
async def test_nan_llm_failures_and_skips(spec: JudgeSpec, server: OpenAIServer, tmp_path: Path) -> None:
    items = [
        item("NOSTATEMENTS", n=1),  # ragas: no statements -> NaN -> an error, never a number
        item("BADSTATEMENTS", n=2),
        item(RESPONSE, passages=[], n=3),  # nothing to be faithful to
        item("   ", n=4),  # empty response: ragas would return NaN; skipped without a call
    ]
    failing = judge_model(bad_statements=Reply(status=400, content="bad request"))
    server.responder = failing
    results, progress = await run(RLFJudge(spec), items, gateway(server, tmp_path))
    nan, failed, no_passages, empty = results

    assert nan.value is None and nan.error and "NaN" in nan.error
    assert nan.raw == '{"statements": []}' and nan.details["llm_calls"] == 1

    assert failed.value is None and failed.error and failed.error.startswith("statements: ")
    assert "HTTP 400" in failed.error and failed.raw is None
    assert failed.details == {"cached": False, "llm_calls": 0}

    assert no_passages.value is None and no_passages.error is None
    assert no_passages.details == {"skipped": "no passages"}
    assert empty.value is None and empty.error is None and empty.details == {"skipped": "empty response"}

    assert progress == [1, 1, 1, 1]
    assert len(server.requests) == 2  # NaN item's one call + the failed call (400s are not retried)


@pytest.mark.asyncio
async def test_judge_requires_gateway_and_model(spec: JudgeSpec) -> None:
    with pytest.raises(RuntimeError):
        await RLFJudge(spec).judge([item(RESPONSE)], JudgeContext(gateway=None, judge_models=[MODEL]))


def test_registry_builds_it() -> None:
    from ragjudge.judges.registry import JudgeRegistry

    assert isinstance(JudgeRegistry().build("rl_f"), RLFJudge)


def test_helpers_match_ragas_layout() -> None:
    # Guard for the scripted judge above: ragas's prompts end with the item's JSON input.
    text = StatementGeneratorPrompt().to_string(StatementGeneratorInput(question="q", answer="a"))
    assert re.search(r"Now perform the same with the following input\ninput: \{.*\}\nOutput: $", text, re.DOTALL)

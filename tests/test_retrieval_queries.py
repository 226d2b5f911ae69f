"""Query strategies, and the LLM rewrite through litellm against the local OpenAI-compatible test server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import MINI, run_cli
from ragjudge.errors import InputError, UsageError
from ragjudge.formats.mtrag import read_tasks
from ragjudge.llm import LLMGateway, ResponseCache
from ragjudge.models import Task, Turn
from ragjudge.retrieval.queries import QueryBuilder, parse_rewrite, rewrite_messages, strip_speaker_tags
from ragjudge.retrieval.spec import QuerySpec
from ragjudge.testing.openai_server import OpenAIServer, Reply, scripted


def task(turns: list[tuple[str, str]], task_id: str = "c1::3") -> Task:
    return Task(task_id=task_id, conversation_id="c1", turn=len(turns),
                input=[Turn(speaker=s, text=t) for s, t in turns])


CONVERSATION = [("user", "Tell me about Mars."), ("agent", "Mars is the fourth planet."),
                ("user", "How many moons does it have?")]


async def test_simple_strategies() -> None:
    t = task(CONVERSATION)
    built = {}
    for strategy in ("last_turn", "all_user_turns", "full_conversation"):
        [query] = await QueryBuilder(QuerySpec(strategy=strategy)).build([t])
        built[strategy] = query.text
    assert built["last_turn"] == "How many moons does it have?"
    assert built["all_user_turns"] == "Tell me about Mars.\nHow many moons does it have?"
    assert built["full_conversation"] == "Tell me about Mars.\nMars is the fourth planet.\nHow many moons does it have?"
    [tagged] = await QueryBuilder(QuerySpec(strategy="full_conversation"), strip_tags=False).build([t])
    assert tagged.text.splitlines()[1] == "|agent|: Mars is the fourth planet."
    assert strip_speaker_tags("|user|: where do the cardinals play\n|user|: and in 2017?") == \
        "where do the cardinals play\nand in 2017?"


async def test_empty_last_turn_is_an_input_error() -> None:
    with pytest.raises(InputError, match="c1::2.*last user turn is empty"):
        await QueryBuilder(QuerySpec()).build([task([("user", "hi"), ("agent", "hello"), ("user", "  ")], "c1::2")])
    with pytest.raises(UsageError, match="rewrite query strategy needs a model"):
        QueryBuilder(QuerySpec(strategy="rewrite"))


def test_parse_rewrite() -> None:
    assert parse_rewrite('{"class": "non-standalone", "question": "How many moons does Mars have?"}') == \
        ("non-standalone", "How many moons does Mars have?")
    assert parse_rewrite('Sure:\n```json\n{"class": "Standalone", "question": "Is Mars red?"}\n```') == \
        ("standalone", "Is Mars red?")
    for bad in ("How many moons does Mars have?", '{"class": "maybe", "question": "x"}',
                '{"class": "standalone", "question": ""}', '{"class": "standalone"'):
        with pytest.raises(ValueError):
            parse_rewrite(bad)


def test_rewrite_prompt_carries_the_conversation() -> None:
    system, user = rewrite_messages(task(CONVERSATION))
    assert '"class"' in system["content"] and "non-standalone" in system["content"]
    assert user["content"] == ("Conversation:\n|user|: Tell me about Mars.\n|agent|: Mars is the fourth planet.\n\n"
                               "Latest question: How many moons does it have?")


REWRITER = scripted([
    (r"Latest question: How many moons", '{"class": "non-standalone", "question": "How many moons does Mars have?"}'),
    (r"Latest question: And the smaller one\?", "The smaller one is Deimos."),  # not JSON: falls back
    (r"Latest question: Is Jupiter bigger", '```json\n{"class": "standalone", "question": "Is Jupiter bigger?"}\n```'),
])


async def test_rewrite_through_gateway_with_fallback_and_cache(tmp_path: Path) -> None:
    tasks = [task(CONVERSATION, "c1::3"),
             task(CONVERSATION + [("agent", "Two: Phobos and Deimos."), ("user", "And the smaller one?")], "c1::5"),
             task([("user", "Hi"), ("agent", "Hello"), ("user", "Is Jupiter bigger than Mars?")], "c2::2"),
             task([("user", "|user|: What is a sol?")], "c3::1")]
    spec = QuerySpec(strategy="rewrite", model="openai/rewriter")
    with OpenAIServer(REWRITER) as server:
        gateway = LLMGateway(cache=ResponseCache(tmp_path), api_base=server.base_url, api_key="sk-test", max_retries=0)
        builder = QueryBuilder(spec, gateway=gateway)
        first = await builder.build(tasks)
        assert server.chat_count() == 3  # the first turn has nothing to resolve: no call
        assert [q.text for q in first] == ["How many moons does Mars have?", "And the smaller one?",
                                           "Is Jupiter bigger?", "What is a sol?"]
        assert [q.question_class for q in first] == ["non-standalone", None, "standalone", "standalone"]
        assert first[1].fallback.startswith("malformed answer: no JSON object")
        assert first[1].raw == "The smaller one is Deimos."
        assert builder.summary() == {"strategy": "rewrite", "model": "openai/rewriter", "rewritten": 2,
                                     "standalone": 1, "non-standalone": 1, "first_turn": 1,
                                     "fallback_malformed": 1, "fallback_error": 0}
        request = server.requests[0]
        assert request.body["temperature"] == 0 and request.messages[0]["role"] == "system"

        again = await QueryBuilder(spec, gateway=LLMGateway(cache=ResponseCache(tmp_path), api_base=server.base_url,
                                                             api_key="sk-test")).build(tasks)
        assert server.chat_count() == 3  # every rewrite came from the cache
        assert [q.text for q in again] == [q.text for q in first]

        server.fail_next(1, status=400)
        failing = QueryBuilder(QuerySpec(strategy="rewrite", model="openai/other"),
                               gateway=LLMGateway(api_base=server.base_url, api_key="sk-test", max_retries=0))
        [failed] = await failing.build([tasks[0]])
        assert failed.text == "How many moons does it have?" and failed.fallback.startswith("call failed")
        assert failing.stats["fallback_error"] == 1


def test_retrieve_cli_rewrites_mtrag_tasks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    tasks = read_tasks(MINI / "tasks.jsonl")[:6]

    def answer(request) -> str | Reply:
        question = request.last_user.rsplit("Latest question: ", 1)[1]
        return json.dumps({"class": "non-standalone", "question": f"{question} (about astronomy)"})

    tasks_file = tmp_path / "tasks.jsonl"
    tasks_file.write_text("".join(json.dumps(t.raw) + "\n" for t in tasks))
    out = tmp_path / "run.jsonl"
    with OpenAIServer(answer) as server:
        code, stdout, stderr = run_cli(["retrieve", "--corpus", str(MINI / "corpus.jsonl"), "--queries",
                                        str(tasks_file), "--pipeline", "bm25_rewrite", "--rewrite-model",
                                        "openai/rewriter", "--api-base", server.base_url, "--out", str(out),
                                        "--index-dir", str(tmp_path / "idx"), "--k", "3", "--format", "json"],
                                       monkeypatch, capsys)
        calls = server.chat_count()
    assert code == 0, stderr
    later_turns = sum(1 for t in tasks if t.turn > 1)
    assert calls == later_turns
    summary = json.loads(stdout)
    assert summary["query_strategy"]["rewritten"] == later_turns and summary["pipeline"]["spec"]["name"] == \
        "bm25_rewrite"
    assert summary["pipeline"]["spec"]["query"]["model"] == "openai/rewriter"
    run = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["task_id"] for r in run] == [t.task_id for t in tasks]
    assert all(len(r["contexts"]) == 3 and r["Collection"] for r in run)
    assert all(isinstance(c["score"], float) and isinstance(c["document_id"], str) for r in run for c in r["contexts"])
    queries = [json.loads(line) for line in (tmp_path / "run.queries.jsonl").read_text().splitlines()]
    assert queries[1]["text"].endswith("(about astronomy)") and queries[1]["class"] == "non-standalone"
    assert "sk-test" not in (tmp_path / "run.pipeline.json").read_text()

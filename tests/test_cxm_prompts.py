"""CXMArena's query-formation prompt is the official one, verbatim (issue 23: the default used to be a shortened
rewording): compared with a copy of github.com/kapilsprinklr/CXMArena's `prompts/query_formation.txt` kept as a
fixture (tests/fixtures/cxm/upstream_prompts/UPSTREAM.md names the commit), and sent as CXMArena's predictor
sends it: one user message, the conversation as the data writes it."""

from __future__ import annotations

import json
from pathlib import Path

import conftest
import pytest
from conftest import REPO

from ragjudge.bench.cxm.data import load_rag
from ragjudge.bench.cxm import prompts as P
from ragjudge.testing import cxm_synth
from ragjudge.testing.openai_server import OpenAIServer, Request

UPSTREAM = REPO / "tests" / "fixtures" / "cxm" / "upstream_prompts"
COMMIT = "755a7c46976d0446aa30c0b210846771f4391bb4"


def official() -> str:
    return (UPSTREAM / "query_formation.txt").read_text(encoding="utf-8")


def test_the_fixture_names_the_upstream_commit_it_was_copied_from() -> None:
    assert COMMIT in (UPSTREAM / "UPSTREAM.md").read_text()
    assert official().startswith("**Role:** You are an AI expert in Natural Language Understanding")
    assert official().count("{conversation}") == 1 and not official().endswith("\n")  # as upstream: no final newline


@pytest.mark.parametrize("conversation", ["Customer: my eSIM will not activate\nAgent: Which phone?",
                                          "{conversation} {{ x }} braces kept as they are"])
def test_the_bundled_spec_renders_the_official_prompt_byte_for_byte(conversation: str) -> None:
    """What CXMArena's predictor sends: `query_formation.txt`.format(conversation=...) as the only message."""
    spec = P.PromptBook().spec(P.QUERY_FORMATION)
    assert P.messages(spec, {"conversation": conversation}) == [
        {"role": "user", "content": official().replace("{conversation}", conversation)}]


def test_llm_queries_send_the_official_prompt_with_the_release_transcript(monkeypatch, capsys,
                                                                           tmp_path: Path) -> None:
    release = cxm_synth.write_multi_turn_release(tmp_path / "release", n_articles=6, n_turns=3)
    transcripts = {c.case_id: c.transcript for c in load_rag(release)}
    sent: list[list[dict]] = []

    def responder(request: Request) -> str:
        sent.append(request.messages)
        return "roaming fees"

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with OpenAIServer(responder) as server:
        code, _, err = conftest.run_cli(["eval", "--bench", "cxm-multiturn-retrieval", "--data", str(release),
                                           "--rewrite-model", "openai/writer", "--api-base", server.base_url,
                                           "--cache-dir", str(tmp_path / "cache"), "--out", str(tmp_path / "run"),
                                           "--format", "json"], monkeypatch, capsys)
    assert code == 0, err
    assert all(transcripts.values())  # the release's conversation_context, as written
    expected = [[{"role": "user", "content": official().replace("{conversation}", t)}] for t in transcripts.values()]
    assert sorted(sent, key=json.dumps) == sorted(expected, key=json.dumps)

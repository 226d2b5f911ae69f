"""DialSim's prompts are the official ones, byte for byte: compared with copies of github.com/jiho283/Simulator's
`prompt/` files kept as fixtures (tests/fixtures/dialsim/upstream_prompts/UPSTREAM.md names the commit)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import REPO

from ragjudge.bench.dialsim import prompts
from ragjudge.bench.dialsim.judge import AnswerJudge

UPSTREAM = REPO / "tests" / "fixtures" / "dialsim" / "upstream_prompts"
OURS = Path(prompts.__file__).resolve().parent / "prompts"
USED = sorted({*prompts._RETRIEVED.values(), *prompts._HISTORY.values(), prompts.SUMMARIZE})


def test_the_fixtures_name_the_upstream_commit_they_were_copied_from() -> None:
    assert prompts.UPSTREAM_COMMIT in (UPSTREAM / "UPSTREAM.md").read_text()
    assert prompts.UPSTREAM_COMMIT in (OURS / "README.md").read_text()


@pytest.mark.parametrize("name", USED)
def test_every_prompt_is_the_official_file_byte_for_byte(name: str) -> None:
    """D3: the mc-nl RAG prompt ended with an extra `\\n[Answer]` (an older upstream version); two files had the
    older upstream names. Every prompt the bench uses is now the upstream file of the same name."""
    assert (OURS / name).read_bytes() == (UPSTREAM / name).read_bytes()


def test_every_official_answer_prompt_is_shipped_and_used() -> None:
    official = {p.name for p in UPSTREAM.glob("*.txt") if not p.name.startswith("gpt_as_a_judge")}
    assert official == set(USED) == {p.name for p in OURS.glob("*.txt")}
    assert prompts.template_name("mc-nl", "session") == "RAG_qa_prompt_multi_choice_unstructured.txt"
    assert not prompts.template("RAG_qa_prompt_multi_choice_unstructured.txt").endswith("[Answer]")


def test_the_judge_spec_renders_the_official_judge_prompts() -> None:
    """judges/dialsim_judge.yaml fills the official `<<<QUESTION>>>` slots with jinja: rendered with the slot names
    as values it gives the official system and user prompts exactly."""
    judge = AnswerJudge.load("openai/judge", None)
    system, user = judge.messages("<<<QUESTION>>>", "<<<TRUEANSWER>>>", "<<<PREDICTION>>>")
    assert system["content"] == (UPSTREAM / "gpt_as_a_judge_system_prompt.txt").read_text(encoding="utf-8")
    assert user["content"] == (UPSTREAM / "gpt_as_a_judge_user_prompt.txt").read_text(encoding="utf-8")

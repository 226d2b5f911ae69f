"""One normalisation for every lexical matcher: what it changes, and that IDK, DialSim and CXM match through it."""

from __future__ import annotations

import pytest

from ragjudge.bench.cxm.intent.solver import map_intent
from ragjudge.bench.dialsim.metrics import lexical_verdict, says_idk
from ragjudge.judges import JudgeRegistry
from ragjudge.normalize import normalize_for_matching


@pytest.mark.parametrize(("text", "normalised"), [
    ("I don’t have that information.", "i don't have that information."),
    ("“Quoted” ‘words’", '"quoted" \'words\''),
    ("1990–1995 — a range", "1990-1995 - a range"),
    ("  I\u00a0can\u200b not\n\thelp  ", "i cannot help"),
    ("I can Not", "i cannot"),
    ("you can not only read but also write", "you can not only read but also write"),
    ("ＦＵＬＬ width ﬁne", "full width fine"),
    ("Straße", "strasse"),
])
def test_normalize_for_matching(text: str, normalised: str) -> None:
    assert normalize_for_matching(text) == normalised
    assert normalize_for_matching(normalised) == normalised  # idempotent


def test_idk_lexical_matches_typographic_text() -> None:
    judge = JudgeRegistry().build("idk_lexical")
    for text in ("I don’t know.", "I DON'T KNOW.", "I  can\u00a0not   answer that.", "The documents don’t mention it."):
        assert judge.classify(text)[0] == "yes", text  # type: ignore[attr-defined]


def test_dialsim_lexical_judge_normalises() -> None:
    options = ["In 1990–1995", "Carol", "Susan", "Barry", "I don't know."]
    assert lexical_verdict("It was in 1990-1995.", "In 1990–1995", options, gold_is_idk=False) == "correct"
    assert lexical_verdict("“Carol”, I think", "Carol", options, gold_is_idk=False) == "correct"
    assert says_idk("I can not tell.") and says_idk("I DON’T KNOW")


def test_cxm_intent_mapping_normalises() -> None:
    labels = ["Billing - Refund", "Account: Close"]
    assert map_intent("“Billing – Refund”", labels, 0.85) == ("Billing - Refund", "normalized")
    assert map_intent("ACCOUNT > close", labels, 0.85) == ("Account: Close", "normalized")

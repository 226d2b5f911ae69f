"""CDR retrieval units: message splitting, each unit kind, and the unit -> conversation table."""

from __future__ import annotations

import pytest

from ragjudge.bench.cdr.units import (UnitSpec, build_units, conversation_units, parse_unit, split_messages,
                                      windows, write_units)
from ragjudge.errors import UsageError

MULTILINE = ("user: Can you list three fruits?\n"
             "assistant: Sure:\n- apple\n- pear\n\n- plum\n"
             "user: Thanks!")
INNER_USER = ("user: Show me a persuasive exchange.\n"
              "assistant: Here is one:\nUser: should I renew?\nBot: renewing today keeps your rate.\n"
              "user: Is that manipulative?")
EMPTY = "user: refund please\nuser:\nassistant:   \nassistant: Done, refunded.\nuser: thanks"


def test_multi_line_messages_stay_whole() -> None:
    messages, empty = split_messages(MULTILINE)
    assert [m.role for m in messages] == ["user", "assistant", "user"]
    assert messages[1].text == "assistant: Sure:\n- apple\n- pear\n\n- plum"
    assert empty == 0


def test_an_inner_capitalised_user_stays_in_its_message() -> None:
    messages, _ = split_messages(INNER_USER)
    assert [m.role for m in messages] == ["user", "assistant", "user"]
    assert "User: should I renew?\nBot: renewing today" in messages[1].text
    assert messages[2].text == "user: Is that manipulative?"


def test_empty_messages_are_dropped_and_counted() -> None:
    messages, empty = split_messages(EMPTY)
    assert [m.text for m in messages] == ["user: refund please", "assistant: Done, refunded.", "user: thanks"]
    assert empty == 2
    units, dropped = conversation_units(EMPTY, UnitSpec("message"))
    assert units == ["user: refund please", "assistant: Done, refunded.", "user: thanks"] and dropped == 2


def test_text_before_the_first_marker_is_a_message_without_role() -> None:
    messages, _ = split_messages("[transcript 12]\nuser: hi\nassistant: hello")
    assert [(m.role, m.text) for m in messages] == [(None, "[transcript 12]"), ("user", "user: hi"),
                                                    ("assistant", "assistant: hello")]
    # markers are case-sensitive and must open the line
    assert len(split_messages("User: hi\n  user: indented\nuser:x")[0]) == 2


def test_session_is_the_conversation_as_written() -> None:
    assert conversation_units(MULTILINE, UnitSpec("session")) == ([MULTILINE], 0)
    assert conversation_units("user:\nassistant:", UnitSpec("session")) == ([], 2)


def test_exchanges_group_replies_with_their_user_message() -> None:
    text = "assistant: Welcome!\nuser: a\nassistant: b\nassistant: c\nuser: d\nuser: e\nassistant: f"
    units, _ = conversation_units(text, UnitSpec("exchange"))
    assert units == ["assistant: Welcome!", "user: a\nassistant: b\nassistant: c", "user: d",
                     "user: e\nassistant: f"]


def test_user_units_keep_only_user_messages() -> None:
    units, _ = conversation_units(INNER_USER, UnitSpec("user"))
    assert units == ["user: Show me a persuasive exchange.", "user: Is that manipulative?"]


def test_windows_slide_cover_the_tail_and_a_short_conversation_is_one_window() -> None:
    five = "\n".join(f"{'user' if i % 2 == 0 else 'assistant'}: m{i}" for i in range(5))
    units, _ = conversation_units(five, UnitSpec("window", 3, 1))
    assert units == ["user: m0\nassistant: m1\nuser: m2", "assistant: m1\nuser: m2\nassistant: m3",
                     "user: m2\nassistant: m3\nuser: m4"]
    units, _ = conversation_units(five, UnitSpec("window", 3, 2))
    assert [u.count("\n") + 1 for u in units] == [3, 3] and units[-1].endswith("m4")
    units, _ = conversation_units(five, UnitSpec("window", 4, 3))  # starts 0, then 1 so that m4 is covered
    assert [u.split("\n")[0] for u in units] == ["user: m0", "assistant: m1"]
    short = "user: only\nassistant: two"
    assert conversation_units(short, UnitSpec("window", 3, 1))[0] == [short]
    assert windows([], 3, 1) == []


def test_parse_unit() -> None:
    assert parse_unit("session") == UnitSpec("session")
    assert parse_unit("window") == UnitSpec("window", 3, 1)
    assert parse_unit("window:5") == UnitSpec("window", 5, 1)
    assert parse_unit("window:5:2").label == "window:5:2" and parse_unit("window:5:2").slug == "window5s2"
    for bad in ("turn", "window:0", "window:3:4", "window:a", "window:3:1:1", "message:2", ""):
        with pytest.raises(UsageError):
            parse_unit(bad)


def test_unit_table_maps_units_to_conversations_without_parsing_ids(tmp_path) -> None:
    corpus = {"a#message-0": "user: x\nassistant: y", "b": "user:\nassistant:", "c": "assistant: only a reply"}
    table = build_units(corpus, UnitSpec("message"))
    assert [u.conversation for u in table.units] == ["a#message-0", "a#message-0", "c"]
    assert table.conversation_of["a#message-0#message-1"] == "a#message-0"
    assert table.without_units == ["b"] and table.empty_messages == 2
    assert table.stats()["conversations_without_units"] == 1
    users = build_units(corpus, UnitSpec("user"))
    assert users.without_units == ["b", "c"]
    path = write_units(table, tmp_path, "f" * 64)
    assert path.read_text().count("\n") == 3
    assert write_units(table, tmp_path, "f" * 64) == path  # written once, reused
    other = write_units(build_units(corpus, UnitSpec("window")), tmp_path, "f" * 64)
    assert other != path and other.read_bytes() != path.read_bytes()

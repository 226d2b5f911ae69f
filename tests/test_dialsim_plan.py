"""The DialSim simulation plan: the official parsing, draws and weights, reproducibly from a seed; names
replaced at word boundaries, gold answers renamed with the options."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from dialsim_helpers import MINI_DIR

from ragjudge.bench.dialsim import layouts
from ragjudge.bench.dialsim.longdialqa import QA, SessionData, ShowData
from ragjudge.bench.dialsim.plan import (
    FUTURE_TYPE_CAP,
    UNANSWERABLE_FAN_CAP,
    _pad,
    draw_ask_point,
    draw_candidates,
    plan_show,
)
from ragjudge.bench.dialsim.script import (
    BUILTIN_SHOWS,
    Renamer,
    ShowInfo,
    load_show_infos,
    parse_utterances,
    session_numbers,
)
from ragjudge.bench.dialsim.timeline import Timeline


def mini(names: str = "generic") -> Timeline:
    data = layouts.read_show("mini", "json", MINI_DIR / "mini_dialsim.json")
    return Timeline.build(data, load_show_infos(MINI_DIR)["mini"], names)  # type: ignore[arg-type]


def test_utterances_are_parsed_as_the_official_simulator_does() -> None:
    script = ("Teleplay: Somebody\nRoss: Hi.\n\nMonica: Wait, listen:\nthis line goes on\nand on\n"
              "Story: Someone Else\nPhoebe, Ross, Chandler, and Joey: Push her down the stairs!\n")
    utterances = parse_utterances(script)
    assert [u.speaker for u in utterances] == ["Ross", "Monica", "Phoebe, Ross, Chandler, and Joey"]
    assert utterances[1].text == "Monica: Wait, listen:\nthis line goes on\nand on"
    assert parse_utterances("no speaker here\nRoss: Hi.")[0].text == "no speaker here"  # the official code crashes


def test_sessions_are_numbered_per_date_as_officially() -> None:
    dates = ["May 1", "May 1", "May 2", "May 1", "May 1"]
    assert session_numbers(dates) == [1, 2, 1, 1, 2]
    labels = [s.label for s in mini().sessions[:3]]
    assert labels == ["[Date: March 4, 2021, Session #1]", "[Date: March 4, 2021, Session #2]",
                      "[Date: March 6, 2021, Session #1]"]


def test_names_are_replaced_at_word_boundaries_and_all_at_once() -> None:
    bigbang = BUILTIN_SHOWS["bigbang"]
    generic = Renamer(bigbang.generic)
    # The official str.replace turns "Rajesh" into "Michaelesh" and "Amy's" is fine either way.
    assert generic("Raj met Rajesh and Amy's cat.") == "Michael met Rajesh and Patricia's cat."
    swapped = Renamer(bigbang.swapped)  # Penny <-> Raj: a one-pass swap needs no placeholders
    assert swapped("Penny called Raj.") == "Raj called Penny."
    timeline = mini()
    text = "".join(timeline.history(s) for s in timeline.sessions)
    assert "Theodora's bakery" in text and "Priyanka" in text and "David" in text and "Theo " not in text


def test_gold_answers_are_renamed_with_the_options() -> None:
    """The official simulator renames the options but compares natural-language answers with the gold
    answer under its original name; here gold, options, asker, agent and question all change together."""
    plan = plan_show(mini("generic"), seed=0) + plan_show(mini("generic"), seed=1)
    originals = {"Nora", "Theo", "Priya", "Marcus", "Lena"}
    person_answers = [q for q in plan if q.answer in {"Mary", "David", "Susan", "Richard", "Karen"}]
    assert person_answers
    for q in plan:
        assert q.answer in q.options and q.options.index(q.answer) == "ABCDE".index(q.gold[1])
        words = set(q.question.replace("'s", " ").replace("?", " ").split()) | {q.asker, q.agent, q.answer}
        assert not words & originals
    assert {q.agent for q in plan} == {"Mary"}


def test_same_seed_same_plan_other_seed_other_plan() -> None:
    a, b, c = plan_show(mini(), 0), plan_show(mini(), 0), plan_show(mini(), 1)
    assert a == b and a != c
    assert [q.id for q in a][:2] == ["mini/0/S01E01/1", "mini/0/S01E01/2"]
    assert len({q.session for q in a}) == len(a)  # at most one question per session
    assert all(q.session != 9 for q in a)  # the agent talks alone there: nobody asks


def test_questions_follow_an_agent_utterance_not_its_first_and_come_from_a_neighbour() -> None:
    timeline = mini()
    for seed in range(30):
        for q in plan_show(timeline, seed):
            utterances = timeline.sessions[q.session].utterances
            mine = [i for i, u in enumerate(utterances) if u.speaker == "Nora"]
            assert utterances[q.ask_after].speaker == "Nora"
            assert q.ask_after != mine[0] or len(mine) == 1
            near = {timeline.renamer(u.speaker) for u in utterances[max(0, q.ask_after - 3): q.ask_after + 3]}
            assert q.asker in near and q.asker != "Mary" and q.asker.lower() != "all"


def test_type_padding_caps_unanswerable_shares() -> None:
    rng = random.Random(0)
    hard = ["cur", "fu", "fu_fu", "past", "past_fu"]
    padded = _pad(rng, hard, [t for t in hard if "fu" in t], FUTURE_TYPE_CAP)
    share = sum("fu" in t for t in padded) / len(padded)
    assert share < FUTURE_TYPE_CAP and sum("fu" in t for t in padded) / (len(padded) - 1) >= FUTURE_TYPE_CAP
    easy = ["ans_w_time", "before_event_unans", "dont_know_unans"]
    padded = _pad(rng, easy, [t for t in easy if "unans" in t], UNANSWERABLE_FAN_CAP)
    assert sum("unans" in t for t in padded) / len(padded) < UNANSWERABLE_FAN_CAP
    assert _pad(rng, ["fu"], ["fu"], FUTURE_TYPE_CAP) == ["fu"]  # nothing answerable to pad with


def qa(answer: str = "x") -> QA:
    return QA(id="0", questions={"default": "Who was it on May 1, 2020?"}, options=["x", "y", "z", "w", "I don't know."],
              answer=answer)


def test_temporal_share_is_the_official_seventy_percent() -> None:
    session = SessionData(show="s", episode="e", scene="1", date="June 1, 2021", script="Ann: hi",
                          hard_q={"past": [qa()], "fu": [qa("I don't know.")]},
                          easy_q={"ans_wo_time": [qa()], "dont_know_unans": [qa("I don't know.")]})
    timeline = Timeline.build(ShowData("s", [session], "-", "json", True), ShowInfo(agent="Ann"), "original")
    rng = random.Random(7)
    draws = Counter(draw_candidates(rng, timeline.sessions[0], 0.7)[:2] for _ in range(20000))  # type: ignore[index]
    temporal = sum(n for (source, _), n in draws.items() if source == "temporal") / 20000
    assert temporal == pytest.approx(0.7, abs=0.015)
    # fu types are padded to under 21.5% of the type list: [past, fu, past, past, past] -> 1/5
    future = draws[("temporal", "fu")] / sum(n for (s, _), n in draws.items() if s == "temporal")
    assert future == pytest.approx(0.2, abs=0.02)
    unans = draws[("fan", "dont_know_unans")] / sum(n for (s, _), n in draws.items() if s == "fan")
    assert unans == pytest.approx(0.25, abs=0.03)  # [ans, unans, ans, ans] -> 1/4 < 27%


def test_temporal_candidates_naming_the_current_month_or_year_are_skipped() -> None:
    session = SessionData(show="s", episode="e", scene="1", date="June 1, 2021", script="Ann: hi\nBob: yo\nAnn: ok",
                          hard_q={"past": [QA(id="0", questions={"default": "Who was it in 2021?"},
                                              options=["x", "y", "z", "w", "I don't know."], answer="x")]})
    timeline = Timeline.build(ShowData("s", [session], "-", "json", False), ShowInfo(agent="Ann"), "original")
    _, _, candidates = draw_candidates(random.Random(0), timeline.sessions[0], 0.7)  # type: ignore[misc]
    assert candidates == []
    assert draw_ask_point(random.Random(0), timeline.sessions[0], "Ann") == (2, "Bob")
    assert plan_show(timeline, 0) == []


def _one_session(questions: dict[str, str], oracle_key: str | None = None) -> tuple[Timeline, list]:
    """A show of one session in June 2021 with one `past` question asked in these versions (in this order), its
    evidence dated in the oracle by the question's text (the official fallback) when `oracle_key` is given."""
    raw = {"e": {"1": {"date": "June 1, 2021", "script": "Ann: hi\nBob: yo\nAnn: ok",
                       "hard_q": {"past": [{"questions": questions, "options": ["x", "y", "z", "w", "I don't know."],
                                            "answer": "x"}]}, "easy_q": {}}}}
    oracle = layouts.Oracle({"e": {"1": {"past": {oracle_key: ["June 1, 2021"]}}}}, "oracle.json") \
        if oracle_key else None
    sessions, _ = layouts.nested_to_sessions("s", raw, oracle, None, "data.json")
    timeline = Timeline.build(ShowData("s", sessions, "-", "json", oracle is not None), ShowInfo(agent="Ann"),
                              "original")
    _, _, candidates = draw_candidates(random.Random(0), timeline.sessions[0], 1.0)  # type: ignore[misc]
    return timeline, candidates


def test_the_current_year_filter_reads_the_datas_first_text_as_the_official_simulator() -> None:
    """D4: the filter read the `default` version (which data.py moved first) where simulator.py reads the
    question's first key (`list(q['questions'])[0]`); the oracle fallback read the raw first key: the two
    disagreed. Both now read the data's first text."""
    _, kept = _one_session({"Bob": "Who was it in 2021?", "default": "Who was it?"})
    assert kept == []  # the first text names the current year: skipped, whatever the default says
    _, kept = _one_session({"Bob": "Who was it?", "default": "Who was it in 2021?"})
    assert [q.first_text() for q in kept] == ["Who was it?"] * 20  # officially kept
    assert list(kept[0].questions) == ["Bob", "default"]  # the data's order, not default first


def test_the_oracle_fallback_and_the_filter_read_the_same_text() -> None:
    timeline, kept = _one_session({"Bob": "Who was it?", "default": "Who was it then?"}, oracle_key="Who was it?")
    [session] = timeline.sessions
    [qa] = session.data.hard_q["past"]
    assert qa.first_text() == "Who was it?" and qa.evidence_dates == ["June 1, 2021"]  # found by that very text
    timeline, _ = _one_session({"Bob": "Who was it?", "default": "Who was it then?"}, oracle_key="Who was it then?")
    assert timeline.sessions[0].data.hard_q["past"][0].evidence_dates == []  # the default is not the key

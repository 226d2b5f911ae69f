"""The simulation's questions, planned up front from a seed and saved as `plan.jsonl`; the draws, as the official
simulator.py makes them: docs/benches/dialsim.md#the-simulation.

Answers never enter the dialogue, so where a question is asked depends on the data and the draws only: planning
first makes runs reproducible (the official simulator has no seed, and orders askers through `list(set(...))`, which
hash randomisation reshuffles between processes) and asks every agent the same questions (`-T plan=FILE`). Beyond the
docs: the type is drawn uniformly from the session's non-empty types; the asker is never "All"; a candidate whose
evidence sessions do not exist yet is passed over; a session whose draws give no question asks none.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from ragjudge.bench.dialsim.longdialqa import FAN_TYPES_WITH_DATES, IDK_OPTION_INDEX, QA
from ragjudge.bench.dialsim.script import NamesMode
from ragjudge.bench.dialsim.timeline import Session, Timeline
from ragjudge.errors import InputError
from ragjudge.formats.jsonl import dumps, read_models

TKG_RATIO = 0.7
FUTURE_TYPE_CAP = 0.215
UNANSWERABLE_FAN_CAP = 0.27
CANDIDATES = 20
NEIGHBOURHOOD = 3
OPTION_LETTERS = ("(A)", "(B)", "(C)", "(D)", "(E)")


class PlannedQuestion(BaseModel):
    """One question of the simulation: where it is asked, by whom, and what counts as right."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    show: str
    seed: int
    names: NamesMode
    episode: str
    scene: str
    session: int
    """Index of the session in the show."""
    date: str
    ask_after: int
    """Index (0-based) of the agent's utterance the question follows: memory holds the session up to it."""
    agent: str
    asker: str
    source: Literal["temporal", "fan"]
    type: str
    question_id: str
    question: str
    options: list[str]
    answer: str
    gold: str
    """The gold option, (A) to (E); (E) is "I don't know"."""
    evidence_sessions: list[int] | None = None
    """Sessions holding the evidence (what the oracle memory shows); None when the data has no oracle dates."""

    @property
    def answerable(self) -> bool:
        return self.gold != OPTION_LETTERS[IDK_OPTION_INDEX]

    @property
    def hop(self) -> str | None:
        return None if self.source == "fan" else ("two-hop" if "_" in self.type else "one-hop")

    @property
    def gold_text(self) -> str:
        """The gold answer in words: the answer, or "I don't know." (the official open-ended gold)."""
        return self.answer if self.answerable else "I don't know."


def plan_show(timeline: Timeline, seed: int, tkg_ratio: float = TKG_RATIO) -> list[PlannedQuestion]:
    rng = random.Random(f"dialsim/{timeline.show}/{seed}")
    planned = []
    for session in timeline.sessions:
        drawn = draw_candidates(rng, session, tkg_ratio)
        ask = draw_ask_point(rng, session, timeline.agent)
        if drawn is None or ask is None:
            continue
        source, qtype, candidates = drawn
        question = pick(timeline, session, seed, source, qtype, candidates, *ask)
        if question is not None:
            planned.append(question)
    return planned


def _pad(rng: random.Random, types: list[str], capped: Sequence[str], cap: float) -> list[str]:
    """The official padding: repeat uncapped types (in a shuffled cycle) until capped ones are under `cap`."""
    padded = list(types)
    n_capped = sum(t in capped for t in types)
    others = [t for t in types if t not in capped]
    rng.shuffle(others)
    while others and n_capped / len(padded) >= cap:
        for t in others:
            if n_capped / len(padded) < cap:
                break
            padded.append(t)
    return padded


def _mentions_now(text: str, date: str) -> bool:
    """The official filter: a temporal question naming the current year ("in 1994") or month ("September 1994")."""
    parts = date.replace(",", "").split()
    return len(parts) >= 3 and (f"n {parts[2]}" in text or f"{parts[0]} {parts[2]}" in text)


def draw_candidates(rng: random.Random, session: Session,
                    tkg_ratio: float) -> tuple[str, str, list[QA]] | None:
    hard = {t: qs for t, qs in session.data.hard_q.items() if qs}
    easy = {t: qs for t, qs in session.data.easy_q.items() if qs}
    if not hard and not easy:
        return None
    roll = rng.random()
    if hard and (not easy or roll < tkg_ratio):
        types = _pad(rng, list(hard), [t for t in hard if "fu" in t], FUTURE_TYPE_CAP)
        qtype = rng.choice(types)
        drawn = (rng.choice(hard[qtype]) for _ in range(CANDIDATES))
        return "temporal", qtype, [q for q in drawn if not _mentions_now(q.first_text(), session.date)]
    types = _pad(rng, list(easy), [t for t in easy if "unans" in t], UNANSWERABLE_FAN_CAP)
    qtype = rng.choice(types)
    return "fan", qtype, [rng.choice(easy[qtype]) for _ in range(CANDIDATES)]


def draw_ask_point(rng: random.Random, session: Session, agent: str) -> tuple[int, str] | None:
    """(index of the agent's utterance the question follows, asker as scripted), or None."""
    utterances = session.utterances
    mine = [i for i, u in enumerate(utterances) if u.speaker == agent]
    if not mine:
        return None
    at = rng.choice(mine[1:] if len(mine) > 1 else mine)
    near = {u.speaker for u in utterances[max(0, at - NEIGHBOURHOOD): at + NEIGHBOURHOOD]}
    askers = sorted(s for s in near if s and agent.lower() not in s.lower() and s.lower() != "all")
    if not askers:
        return None
    return at, rng.choice(askers)


def evidence_sessions(session: Session, sessions: Sequence[Session], source: str, qtype: str,
                      qa: QA) -> list[int] | None | Literal[False]:
    """Indices of the sessions an oracle shows; None if unknown; False when the official lookup fails
    (an evidence date no session has had yet), which makes the official simulator skip the candidate."""
    seen = sessions[: session.index + 1]
    if source == "fan" and qtype not in FAN_TYPES_WITH_DATES:
        return [s.index for s in seen if s.episode == session.episode]
    if qa.evidence_dates is None:
        return None
    dates = qa.evidence_dates[:1] if source == "fan" else [d for d in qa.evidence_dates if "fu" not in d]
    found: list[int] = []
    for date in dates:
        on_date = [s.index for s in seen if s.date == date]
        if not on_date:
            return False
        found += [i for i in on_date if i not in found]
    return sorted(found)


def pick(timeline: Timeline, session: Session, seed: int, source: str, qtype: str, candidates: list[QA],
         at: int, asker: str) -> PlannedQuestion | None:
    for qa in candidates:
        text = qa.questions.get(asker, qa.questions.get("default"))
        if text is None:
            continue
        evidence = evidence_sessions(session, timeline.sessions, source, qtype, qa)
        if evidence is False:
            continue
        gold = next((OPTION_LETTERS[i] for i, o in enumerate(qa.options) if o.lower() == qa.answer.lower()), None)
        if gold is None:  # the official simulator then asks nothing in this session
            return None
        rename = timeline.renamer
        return PlannedQuestion(
            id=f"{timeline.show}/{seed}/{session.episode}/{session.data.scene}", show=timeline.show, seed=seed,
            names=timeline.names, episode=session.episode, scene=session.data.scene, session=session.index,
            date=session.date, ask_after=at, agent=rename(timeline.agent), asker=rename(asker),
            source=source, type=qtype, question_id=qa.id, question=rename(text),  # type: ignore[arg-type]
            options=[rename(o) for o in qa.options], answer=rename(qa.answer), gold=gold, evidence_sessions=evidence)
    return None


# -- plan.jsonl -----------------------------------------------------------------------------------

def plan_text(questions: Sequence[PlannedQuestion]) -> str:
    return "".join(dumps(q.model_dump(mode="json")) + "\n" for q in questions)


def read_plan(path: Path) -> list[PlannedQuestion]:
    out = read_models(path, PlannedQuestion)
    if not out:
        raise InputError("the plan has no questions", file=str(path))
    return out


def check_plan(questions: Sequence[PlannedQuestion], timelines: dict[str, Timeline], path: Path) -> None:
    """A reused plan must fit the data it is run on: same shows, sessions and names."""
    for line, q in enumerate(questions, start=1):
        timeline = timelines.get(q.show)
        if timeline is None:
            raise InputError(f"show {q.show!r} is not in the data (have: {', '.join(timelines)})", file=str(path),
                             line=line, field="show")
        if q.names != timeline.names:
            raise InputError(f"the plan was made with names={q.names}, this run uses names={timeline.names}",
                             file=str(path), line=line, field="names")
        sessions = timeline.sessions
        if not 0 <= q.session < len(sessions) or sessions[q.session].episode != q.episode \
                or sessions[q.session].data.scene != q.scene:
            raise InputError(f"session {q.session} ({q.episode}/{q.scene}) is not in the data", file=str(path),
                             line=line, field="session")
        if not 0 <= q.ask_after < len(sessions[q.session].utterances):
            raise InputError(f"session {q.session} has no utterance {q.ask_after}", file=str(path), line=line,
                             field="ask_after")

"""LongDialQA as ragjudge reads it: `SessionData`, one record per session, the form every layout is read into
(`layouts.py`) and the line `ragjudge dialsim convert` writes. Question ids are the data's keys (the index in a
hard-question list, the key of an easy question), so the oracle pickles join to them.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

from ragjudge.errors import InputError
from ragjudge.formats.jsonl import json_type, read_models, write_jsonl

IDK_OPTION_INDEX = 4
"""Option (E), "I don't know": the answer to every unanswerable question."""
N_OPTIONS = 5

FAN_TYPES_WITH_DATES = ("ans_w_time", "dont_know_unans_time")
"""Fan-quiz question types whose evidence the oracle pickle dates; the others use the episode's sessions."""

DATA_HELP = (
    "LongDialQA cannot be downloaded by ragjudge. Get dialsim_v1.1.zip from the Google Drive folder linked in "
    "https://github.com/jiho283/Simulator (README) and unzip it (friends_dialsim.pickle, friends_oracle_tkg.pickle, "
    "friends_oracle_fan.pickle, ...), or clone the Hugging Face copies https://huggingface.co/datasets/jiho283/"
    "dialsim-friends (also dialsim-bigbang, dialsim-theoffice; parquet, no oracle dates), then pass --data FOLDER")


_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name} | \
    {name.lower(): i for i, name in enumerate(calendar.month_abbr) if name} | {"sept": 9}
_DATE = re.compile(r"^([A-Za-z]+)\.? (\d{1,2}), (\d{1,4})$")


def date_problem(value: str) -> str | None:
    """Why `value` cannot be a session's (or an evidence) date, or None. Dates are written as the release
    writes them, `March 4, 2021`: one in that shape must exist in the calendar (a day out of its month's range
    cannot be placed on the timeline); other shapes are taken as given (the sessions are ordered by the data,
    and a date is compared as text)."""
    if not value.strip():
        return "an empty date"
    match = _DATE.match(value.strip())
    if match is None or match.group(1).lower() not in _MONTHS:
        return None
    month, day, year = _MONTHS[match.group(1).lower()], int(match.group(2)), int(match.group(3))
    if year < 1:
        return f"{value!r} is not a date: year {year} is out of range"
    last = calendar.monthrange(year, month)[1]
    if not 1 <= day <= last:
        return f"{value!r} is not a date: day {day} is out of range for {calendar.month_name[month]} {year} (1-{last})"
    return None


class QA(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    questions: dict[str, str]
    """Asker -> the question in that character's style; `default` for anyone else. In the data's own order: the
    first entry is the text the official simulator's current-year filter and its oracle fallback read."""
    options: list[str]
    answer: str
    evidence_dates: list[str] | None = None
    """Dates of the sessions holding the evidence (from the oracle pickles); entries containing 'fu' mark
    future evidence. None when the data has no oracle dates for this question."""

    def first_text(self) -> str:
        """The question's first text as the data orders it (`list(q['questions'])[0]` in simulator.py), which is
        what the current-year filter reads and what the oracle pickle's fallback key is, whichever asker it is."""
        return next(iter(self.questions.values()), "")


class SessionData(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    show: str
    episode: str
    scene: str
    date: str
    script: str
    hard_q: dict[str, list[QA]] = {}
    """Temporal-knowledge-graph questions by type: past, cur, fu (one hop), past_fu, cur_past... (two hops)."""
    easy_q: dict[str, list[QA]] = {}
    """Fan-quiz questions by type: ans_w_time, ans_wo_time, before_event_unans, dont_know_unans, ..."""

    @field_validator("date")
    @classmethod
    def _a_date(cls, value: str) -> str:
        problem = date_problem(value)
        if problem:
            raise ValueError(problem)
        return value

    @field_validator("hard_q", "easy_q")
    @classmethod
    def _by_type_name(cls, value: dict[str, list[QA]]) -> dict[str, list[QA]]:
        """Types in name order and none empty, whatever the layout's order (the parquet copy orders its
        columns its own way): the seeded draws then pick the same questions from every layout."""
        return {t: value[t] for t in sorted(value) if value[t]}

    def record(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


@dataclass
class ShowData:
    name: str
    sessions: list[SessionData]
    source: str
    layout: str
    """jsonl, json, pickle or parquet."""
    oracle: bool
    """Whether evidence dates were read (oracle pickles, or JSONL converted from them)."""
    skipped_questions: int = 0
    """Questions dropped at load because they have fewer than five options (they cannot be asked)."""


def canonical_questions(value: Any, where: str, file: str) -> dict[str, str]:
    """{asker: text} in the data's order (the official simulator reads the first entry); missing askers (null in
    the parquet copy) dropped. The parquet copy orders askers as its column's struct fields, which need not be the
    pickle's order: with it the first text may differ from the official one."""
    if not isinstance(value, dict):
        raise InputError(f"expected an object of asker -> question, got {json_type(value)}", file=file,
                         field=f"{where}.questions")
    out = {}
    for key, text in value.items():
        if text is None:
            continue
        if not isinstance(text, str):
            raise InputError(f"expected text, got {json_type(text)}", file=file, field=f"{where}.questions.{key}")
        out[str(key)] = text
    return out


def make_qa(raw: Any, qid: str, evidence: list[str] | None, where: str, file: str) -> QA | None:
    """A question from its nested-layout dict; None when it has fewer than five options."""
    if not isinstance(raw, dict):
        raise InputError(f"expected a question object, got {json_type(raw)}", file=file, field=where)
    options = raw.get("options")
    if not isinstance(options, (list, tuple)) or not all(isinstance(o, str) for o in options):
        raise InputError("expected a list of option texts", file=file, field=f"{where}.options")
    answer = raw.get("answer")
    if not isinstance(answer, str):
        raise InputError("expected the answer text", file=file, field=f"{where}.answer")
    if len(options) < N_OPTIONS:
        return None
    questions = canonical_questions(raw.get("questions"), where, file)
    if not questions:
        raise InputError("no question text", file=file, field=f"{where}.questions")
    return QA(id=qid, questions=questions, options=list(options[:N_OPTIONS]), answer=answer, evidence_dates=evidence)


def read_jsonl_show(path: Path) -> ShowData:
    sessions = read_models(path, SessionData)
    if not sessions:
        raise InputError("no sessions", file=str(path))
    names = {s.show for s in sessions}
    if len(names) > 1:
        raise InputError(f"one show per file, found {', '.join(sorted(names))}", file=str(path), field="show")
    oracle = any(q.evidence_dates is not None for s in sessions for bank in (s.hard_q, s.easy_q)
                 for qs in bank.values() for q in qs)
    return ShowData(name=sessions[0].show, sessions=sessions, source=str(path), layout="jsonl", oracle=oracle)


def write_jsonl_show(show: ShowData, path: Path) -> None:
    write_jsonl(path, (s.record() for s in show.sessions))

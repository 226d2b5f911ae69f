"""The shows, their characters' names, and how a session's script becomes utterances.

Parsing follows the official simulator: blank lines and credit lines (`Teleplay: `, `Story: `) are
dropped, a line with a colon starts an utterance (`Speaker: text`), a line without one continues the
previous utterance. Two things are done better than the official code: a leading line without a colon
becomes its own utterance (the official code crashes on it), and names are replaced at word boundaries
(the official `str.replace` also turns "Rajesh" into "Pennyesh" when Raj becomes Penny).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from ragjudge.errors import InputError
from ragjudge.formats.files import atomic_output
from ragjudge.formats.jsonl import json_type, read_json

NamesMode = Literal["generic", "original", "swapped"]
"""generic: anonymised names (the paper's main setting, Table 3); original: as scripted; swapped: main
characters' names exchanged (the paper's adversarial test, Table 4)."""

SKIPPED_LINE_MARKERS = ("Teleplay: ", "Story: ")
SHOWS_FILE = "dialsim_shows.json"
"""Optional file in the data folder describing further shows (a synthetic show, another series)."""


Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
"""A character's name: never empty (an empty agent would match every speaker, an empty name every word)."""


class ShowInfo(BaseModel):
    """A show: whom the agent plays and how names change. The three published shows are built in."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    agent: Name
    """The character the agent plays, as the scripts name the speaker."""
    title: str = ""
    generic: dict[Name, Name] = Field(default_factory=dict)
    """Original name -> anonymised name (the official `new_name` table)."""
    swapped: dict[Name, Name] = Field(default_factory=dict)
    """Original name -> another main character's name (the official `shuffle` table)."""

    def mapping(self, mode: NamesMode) -> dict[str, str]:
        return {"generic": self.generic, "swapped": self.swapped, "original": {}}[mode]


# The official simulator's tables (utils/utils.py: name_change), and its agents (simulator.py).
BUILTIN_SHOWS: dict[str, ShowInfo] = {
    "friends": ShowInfo(
        agent="Ross", title="Friends",
        generic={"Monica": "Patricia", "Chandler": "James", "Joey": "John", "Phoebe": "Jennifer",
                 "Rachel": "Linda", "Ross": "Robert"},
        swapped={"Monica": "Joey", "Chandler": "Rachel", "Joey": "Monica", "Phoebe": "Ross",
                 "Rachel": "Chandler", "Ross": "Phoebe"}),
    "bigbang": ShowInfo(
        agent="Sheldon", title="The Big Bang Theory",
        generic={"Howard": "Robert", "Leonard": "James", "Raj": "Michael", "Penny": "Jennifer",
                 "Bernadette": "Linda", "Amy": "Patricia", "Sheldon": "John"},
        swapped={"Howard": "Amy", "Leonard": "Howard", "Raj": "Penny", "Penny": "Raj", "Bernadette": "Sheldon",
                 "Amy": "Leonard", "Sheldon": "Bernadette"}),
    "theoffice": ShowInfo(
        agent="Michael", title="The Office",
        generic={"Dwight": "John", "Jim": "Robert", "Pam": "Jennifer", "Ryan": "William", "Michael": "James"},
        swapped={"Dwight": "Ryan", "Jim": "Michael", "Pam": "Dwight", "Ryan": "Jim", "Michael": "Pam"}),
}


def load_show_infos(folder: Path | None) -> dict[str, ShowInfo]:
    """The built-in shows, plus (or overridden by) `dialsim_shows.json` in the data folder."""
    shows = dict(BUILTIN_SHOWS)
    path = folder / SHOWS_FILE if folder is not None and folder.is_dir() else None
    if path is None or not path.exists():  # a folder of that name is read, and refused, as a file
        return shows
    return {**shows, **parse_show_infos(read_json(path, f"{SHOWS_FILE} (JSON)"), path)}


def parse_show_infos(data: Any, path: Path) -> dict[str, ShowInfo]:
    if not isinstance(data, dict):
        raise InputError(f"expected an object {{show: {{agent, title, generic, swapped}}}}, got {json_type(data)}",
                         file=str(path))
    shows = {}
    for name, value in data.items():
        try:
            shows[name] = ShowInfo.model_validate(value)
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in (name, *err["loc"]) if p != "[key]")
            raise InputError(err["msg"], file=str(path), field=where) from None
    return shows


def write_show_infos(shows: dict[str, ShowInfo], path: Path) -> None:
    """`dialsim_shows.json` describing `shows` (what `ragjudge dialsim convert` writes beside its JSONL)."""
    text = json.dumps({name: info.model_dump(mode="json") for name, info in shows.items()}, indent=2,
                      ensure_ascii=False) + "\n"
    with atomic_output(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


@dataclass(frozen=True)
class Renamer:
    """Replaces whole names only, all at once (so a swap A<->B needs no placeholder pass)."""

    mapping: dict[str, str] = field(default_factory=dict)

    @cached_property
    def _pattern(self) -> re.Pattern[str] | None:
        if not self.mapping:
            return None
        names = sorted(self.mapping, key=len, reverse=True)
        return re.compile(r"\b(" + "|".join(re.escape(n) for n in names) + r")\b")

    def __call__(self, text: str) -> str:
        pattern = self._pattern
        return text if pattern is None else pattern.sub(lambda m: self.mapping[m.group(1)], text)


@dataclass(frozen=True)
class Utterance:
    speaker: str
    """Text before the first colon ('' for a line without one)."""
    text: str
    """The whole utterance as scripted, `Speaker: words`, continuation lines joined with newlines."""


def parse_utterances(script: str) -> list[Utterance]:
    lines: list[str] = []
    for raw in script.split("\n"):
        line = raw.strip()
        if not line or any(marker in raw for marker in SKIPPED_LINE_MARKERS):
            continue
        if ":" in line or not lines:
            lines.append(line)
        else:
            lines[-1] += "\n" + line
    return [Utterance(speaker=line.split(":", 1)[0].strip() if ":" in line else "", text=line) for line in lines]


def session_numbers(dates: list[str]) -> list[int]:
    """The official per-date numbering: 1 for a session whose date differs from the previous session's,
    else one more than the previous number."""
    numbers: list[int] = []
    for i, date in enumerate(dates):
        numbers.append(numbers[-1] + 1 if i and dates[i - 1] == date else 1)
    return numbers

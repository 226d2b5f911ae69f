"""The dataset of Harel et al. (SIGIR 2022): Reddit dialogues, each with 50 candidate Wikipedia sentences judged
relevant or not, and the 50 validation/test splits of the paper's protocol (files: docs/benches/sentence-retrieval.md).

Either dialogue file may be a JSON array or JSON lines, in `--data` flat or a checkout's `datasets/`. The `target`
turn (the reply actually written) is never read: no system can see it. Every problem names file, line and field.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator, model_validator

from ragjudge.errors import InputError, UsageError
from ragjudge.formats.files import read_text
from ragjudge.formats.jsonl import json_document_error, read_jsonl

REPOSITORY = "https://github.com/SIGIR-2022/A-Dataset-for-Sentence-Retrieval-for-Open-Ended-Dialogues"
DialogueType = Literal["ungrounded", "grounded"]
FILES: dict[DialogueType, str] = {"ungrounded": "dialogues", "grounded": "wikipedia_grounded_dialogues"}
"""Dialogue type -> file stem (`.json` or `.jsonl`); the paper's Table 4 names the types this way."""
TYPES: tuple[DialogueType, ...] = ("ungrounded", "grounded")
"""In the paper's order (Table 4)."""
SPLITS_FILE = "val_test_splits.json"


Text = Annotated[str, BeforeValidator(lambda value: "" if value is None else value)]
"""Text the dataset may write as null."""


class Turn(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    body: str
    author_id: Annotated[str | None, BeforeValidator(lambda value: None if value is None else str(value))] = None


class Candidate(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    id: str = Field(min_length=1)
    title: Text = ""
    body: str
    score: float | None = None
    label: int
    """1 relevant, 0 not: the dataset's definition ("label - 1 if relevant; otherwise non-relevant")."""
    other_label: str | None = Field(None, exclude=True)
    """The label as written when it was neither 0 nor 1 (read as non-relevant, and counted in the summary)."""

    @field_validator("label", mode="before")
    @classmethod
    def _a_label(cls, value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        got = "null" if value is None else type(value).__name__
        raise ValueError(f"must be a number or text (1 relevant, anything else not), got {got}")

    @model_validator(mode="before")
    @classmethod
    def _label(cls, data: Any) -> Any:
        """The dataset's README: `label - 1 if relevant; otherwise non-relevant`. 1 (a number, true, or text "1")
        is relevant; any other number or text (0, 2, -1, "yes") is not, and one that is not 0/false/"0" is kept in
        `other_label` to be counted. A label that is not a number or text (null, a list) is an error."""
        if not isinstance(data, dict) or not isinstance(data.get("label"), (bool, int, float, str)):
            return data  # `_a_label` says what is wrong, naming the field
        value = data["label"]
        text = value.strip() if isinstance(value, str) else value
        relevant = text is True or (not isinstance(text, bool) and text in (1, "1"))
        binary = relevant or text is False or (not isinstance(text, bool) and text in (0, "0"))
        return {**data, "label": int(relevant), "other_label": None if binary else repr(value)}


class Dialogue(BaseModel):
    """One dialogue: its history (`context`, oldest first), and the candidates in the initial ranker's order."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    id: str = Field(min_length=1)
    subreddit: Text = ""
    title: Text = ""
    context: list[Turn] = Field(min_length=1)
    candidates: list[Candidate]
    type: DialogueType = "ungrounded"
    source: str = Field("", exclude=True)
    line: int = Field(0, exclude=True)

    @property
    def labels(self) -> list[int]:
        return [c.label for c in self.candidates]

    @property
    def n_relevant(self) -> int:
        return sum(self.labels)

    @property
    def other_labels(self) -> list[str]:
        """Labels written as neither 0 nor 1 (read as non-relevant), as written."""
        return [c.other_label for c in self.candidates if c.other_label is not None]


class Split(BaseModel):
    """One line of the splits file: tune on `val`, report on `test`."""

    model_config = ConfigDict(frozen=True)

    val: list[str]
    test: list[str]
    line: int = 0


# ------------------------------------------------------------------------------------------------ reading

def iter_records(path: Path) -> Iterator[tuple[int, Any]]:
    """(line, value) for each element of a JSON array, or each line of a JSON lines file.

    The array is decoded one element at a time so that an error names the element's line, as for JSON lines."""
    text = read_text(path, "JSON file")
    start = len(text) - len(text.lstrip())
    if text[start:start + 1] != "[":
        yield from read_jsonl(path)
        return
    decoder = json.JSONDecoder()
    pos, line, counted = start + 1, 1, 0
    while True:
        while pos < len(text) and text[pos] in " \t\r\n":
            pos += 1
        if pos >= len(text):
            raise InputError("the JSON array is not closed", file=str(path), line=text.count("\n") + 1)
        if text[pos] == "]":
            return
        line += text.count("\n", counted, pos)
        counted = pos
        try:
            value, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise json_document_error(exc, file=str(path)) from None
        yield line, value
        while pos < len(text) and text[pos] in " \t\r\n":
            pos += 1
        if pos < len(text) and text[pos] == ",":
            pos += 1
        elif pos < len(text) and text[pos] != "]":
            raise InputError("expected ',' or ']' between array elements", file=str(path),
                             line=text.count("\n", 0, pos) + 1)


def _field_of(error: dict[str, Any]) -> str:
    parts: list[str] = []
    for p in error["loc"]:
        if isinstance(p, int):
            parts[-1:] = [f"{parts[-1]}[{p}]"] if parts else [f"[{p}]"]
        else:
            parts.append(str(p))
    return ".".join(parts)


def parse_dialogue(record: Any, dialogue_type: DialogueType, path: Path, line: int, n_candidates: int) -> Dialogue:
    where = {"file": str(path), "line": line}
    if not isinstance(record, dict):
        raise InputError(f"expected a JSON object (a dialogue), got {type(record).__name__}", **where)
    try:
        dialogue = Dialogue.model_validate({**record, "type": dialogue_type, "source": str(path), "line": line})
    except ValidationError as exc:
        err = exc.errors()[0]
        message = err["msg"].removeprefix("Value error, ")
        raise InputError(message, field=_field_of(err), **where) from None
    seen: dict[str, int] = {}
    for i, cand in enumerate(dialogue.candidates):
        if cand.id in seen:
            raise InputError(f"candidate id {cand.id!r} repeats candidates[{seen[cand.id]}]",
                             field=f"candidates[{i}].id", **where)
        seen[cand.id] = i
    if n_candidates and len(dialogue.candidates) != n_candidates:
        raise InputError(f"has {len(dialogue.candidates)} candidates, expected {n_candidates} (-T candidates=N "
                         f"changes the expected number; 0 accepts any)", field="candidates", **where)
    if not dialogue.candidates:
        raise InputError("has no candidates", field="candidates", **where)
    if dialogue.n_relevant == 0:
        raise InputError("no candidate is labelled relevant (the dataset keeps only dialogues with at least one)",
                         field="candidates", **where)
    return dialogue


def find_file(folder: Path, stem: str) -> Path | None:
    """`stem.json` or `stem.jsonl`, in the folder or in its `datasets/` (a checkout of the repository). Whatever
    is there is found, a folder too: reading it then says so, rather than 'not found'."""
    for sub in (folder, folder / "datasets"):
        for ext in (".json", ".jsonl"):
            if (sub / f"{stem}{ext}").exists():
                return sub / f"{stem}{ext}"
    return None


def load_dialogues(data: str | Path, n_candidates: int = 50) -> list[Dialogue]:
    """Both files of the dataset, ungrounded dialogues first; ids must be unique across the two."""
    folder = Path(data)
    if not folder.is_dir():
        raise UsageError(f"--data {data}: not a folder (it must hold dialogues.json and "
                         f"wikipedia_grounded_dialogues.json, from {REPOSITORY} datasets/)")
    paths: dict[DialogueType, Path] = {}
    for dialogue_type, stem in FILES.items():
        path = find_file(folder, stem)
        if path is None:
            raise UsageError(f"--data {data}: {stem}.json not found (looked in {folder} and {folder / 'datasets'}); "
                             f"ragjudge cannot download it: get datasets/dialogues.json and datasets/"
                             f"wikipedia_grounded_dialogues.json from {REPOSITORY} and pass their folder")
        paths[dialogue_type] = path
    dialogues: list[Dialogue] = []
    first_seen: dict[str, str] = {}
    for dialogue_type, path in paths.items():
        before = len(dialogues)
        for line, record in iter_records(path):
            dialogue = parse_dialogue(record, dialogue_type, path, line, n_candidates)
            if dialogue.id in first_seen:
                raise InputError(f"dialogue id {dialogue.id!r} already appears at {first_seen[dialogue.id]}",
                                 file=str(path), line=line, field="id")
            first_seen[dialogue.id] = f"{path}:{line}"
            dialogues.append(dialogue)
        if len(dialogues) == before:  # the dataset has both types: an empty file is a broken copy, said here
            raise InputError(f"has no dialogues (the dataset's {path.stem} file holds "
                             f"{'400 ungrounded' if dialogue_type == 'ungrounded' else '446 grounded'} ones)",
                             file=str(path), line=1)
    return dialogues


def find_splits(data: str | Path) -> Path | None:
    folder = Path(data)
    for path in (folder / SPLITS_FILE, folder / "evaluation" / SPLITS_FILE):
        if path.exists():  # a folder too: reading it says so
            return path
    return None


def load_splits(path: str | Path, known_ids: set[str]) -> list[Split]:
    """The splits file: one `{"val": [ids], "test": [ids]}` per line (an older version says `dev`).

    Every id must be a loaded dialogue and the two halves of a split must not share one."""
    path = Path(path)
    splits: list[Split] = []
    for line, record in iter_records(path):
        where = {"file": str(path), "line": line}
        if not isinstance(record, dict):
            raise InputError(f"expected a JSON object with 'val' and 'test', got {type(record).__name__}", **where)
        if "val" in record and "dev" in record:
            raise InputError("has both 'val' and 'dev': which one is the validation half?", field="val", **where)
        key = "val" if "val" in record else "dev"
        halves = {}
        for name in (key, "test"):
            ids = record.get(name)
            if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
                raise InputError("must be a non-empty list of dialogue ids", field=name, **where)
            if len(set(ids)) != len(ids):
                repeated = next(i for i in ids if ids.count(i) > 1)
                raise InputError(f"dialogue {repeated!r} is listed twice", field=name, **where)
            unknown = [i for i in ids if i not in known_ids]
            if unknown:
                raise InputError(f"dialogue {unknown[0]!r} is not in the data ({len(unknown)} unknown id(s); are "
                                 f"both dataset files in --data?)", field=name, **where)
            halves[name] = ids
        shared = set(halves[key]) & set(halves["test"])
        if shared:
            raise InputError(f"dialogue {min(shared)!r} is in both halves", field="test", **where)
        splits.append(Split(val=halves[key], test=halves["test"], line=line))
    if not splits:
        raise InputError("the splits file has no splits", file=str(path), line=1)
    return splits

"""Finding and reading LongDialQA in its published layouts (docs/benches/dialsim.md#the-data-and-how-to-get-it).

The nested layout (pickle, or JSON as examples ship): `{episode: {scene: {date, script, hard_q, easy_q}}}`,
`hard_q = {type: [question]}`, `easy_q = {type: {id: question}}`, question = `{questions: {asker: text}, options,
answer}`; oracle dates: tkg `[episode][scene][type][index]` (or keyed by the question's first text), fan
`[episode][scene][type][id]`. The unpickler builds plain data only (numpy scalars included).
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragjudge.bench.dialsim.longdialqa import (DATA_HELP, FAN_TYPES_WITH_DATES, QA, SessionData, ShowData, date_problem,
                                               make_qa, read_jsonl_show)
from ragjudge.bench.dialsim.parquet_layout import parquet_to_nested
from ragjudge.errors import InputError, UsageError
from ragjudge.formats.files import open_binary
from ragjudge.formats.jsonl import json_type, read_json

LAYOUTS = ("jsonl", "json", "pickle", "parquet")
"""Precedence when a folder holds one show in several layouts."""
_SUFFIXES = {"jsonl": (".jsonl",), "json": (".json",), "pickle": (".pickle", ".pkl"), "parquet": (".parquet",)}


# -- discovery ------------------------------------------------------------------------------------

def find_shows(data: Path) -> dict[str, tuple[str, Path]]:
    """show -> (layout, path) for every show under `data` (a folder or one file)."""
    if not data.exists():
        raise UsageError(f"--data {data} does not exist. {DATA_HELP}")
    found: dict[str, dict[str, Path]] = {}
    if data.is_dir():  # a data file that is a folder is a mistake to name, not a file to pass over
        for path in sorted(p for p in data.iterdir() if p.is_dir()):
            if path.stem.endswith("_dialsim") and any(path.suffix in _SUFFIXES[k] for k in ("jsonl", "json", "pickle")):
                raise InputError("is a folder, expected a DialSim data file", file=str(path))
    files = [data] if data.is_file() else sorted(p for p in data.iterdir() if p.is_file())
    for path in files:
        for layout, suffixes in _SUFFIXES.items():
            if path.suffix in suffixes and path.stem.endswith("_dialsim"):
                found.setdefault(path.stem.removesuffix("_dialsim"), {})[layout] = path
    if data.is_file() and not found and data.suffix == ".parquet":
        named = [p.removeprefix("dialsim-") for p in reversed(data.parts[:-1]) if p.startswith("dialsim-")]
        found[named[0] if named else data.stem] = {"parquet": data}  # a file in a dialsim-{show}/ copy
    if data.is_dir():
        for folder in sorted(p for p in data.iterdir() if p.is_dir() and p.name.startswith("dialsim-")):
            if next(folder.rglob("*.parquet"), None) is not None:
                found.setdefault(folder.name.removeprefix("dialsim-"), {}).setdefault("parquet", folder)
    if not found:
        raise UsageError(f"no DialSim data in {data}: expected {{show}}_dialsim.pickle (with the oracle pickles), "
                         f"{{show}}_dialsim.json(l), or a dialsim-{{show}}/ folder of parquet files. {DATA_HELP}")
    return {show: next((layout, paths[layout]) for layout in LAYOUTS if layout in paths)
            for show, paths in sorted(found.items())}


def read_show(show: str, layout: str, path: Path) -> ShowData:
    if layout == "jsonl":
        data = read_jsonl_show(path)
        if data.name != show:
            raise InputError(f"the file is named for show {show!r} but its records say {data.name!r}",
                             file=str(path), line=1, field="show")
        return data
    folder = path.parent if path.is_file() else path
    folders = [folder, folder.parent] if layout == "parquet" else [folder]  # beside a dialsim-{show}/ copy too
    oracle_tkg, oracle_fan = (_read_oracle(folders, show, kind) for kind in ("tkg", "fan"))
    if layout == "parquet":
        nested = parquet_to_nested(path)
    else:
        nested = read_pickle(path) if layout == "pickle" else read_json(path, "DialSim data (JSON)")
    sessions, skipped = nested_to_sessions(show, nested, oracle_tkg, oracle_fan, str(path))
    if not sessions:
        raise InputError("no sessions", file=str(path))
    return ShowData(name=show, sessions=sessions, source=str(path), layout=layout,
                    oracle=oracle_tkg is not None or oracle_fan is not None, skipped_questions=skipped)


@dataclass(frozen=True)
class Oracle:
    """An oracle file's evidence dates, `{episode: {scene: {type: {question id: [date, ...]}}}}`."""

    data: Any
    path: str


def _read_oracle(folders: list[Path], show: str, kind: str) -> Oracle | None:
    for folder in folders:
        for suffix in (".pickle", ".pkl", ".json"):
            path = folder / f"{show}_oracle_{kind}{suffix}"
            if path.exists():  # a folder of that name is read, and refused, as a file
                data = read_json(path, "DialSim oracle dates (JSON)") if suffix == ".json" \
                    else read_pickle(path)
                if not isinstance(data, dict):
                    raise InputError(f"expected an object of episode -> scene -> question type -> evidence dates, "
                                     f"got {json_type(data)}", file=str(path))
                return Oracle(data, str(path))
    return None


# -- pickles --------------------------------------------------------------------------------------

_SAFE_GLOBALS = {
    ("builtins", n) for n in ("dict", "list", "tuple", "set", "frozenset", "str", "int", "float", "bool", "bytes")
} | {("collections", "OrderedDict"), ("collections", "defaultdict"), ("datetime", "date"), ("datetime", "datetime")} \
  | {(m, n) for m in ("numpy.core.multiarray", "numpy._core.multiarray") for n in ("scalar", "_reconstruct")} \
  | {("numpy", "dtype"), ("numpy", "ndarray")}


class _PlainDataUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in _SAFE_GLOBALS:
            raise pickle.UnpicklingError(f"it holds a {module}.{name} object; only plain data is loaded")
        return super().find_class(module, name)


def read_pickle(path: Path) -> Any:
    with open_binary(path, "pickle") as fh:
        try:
            if not fh.peek(1):
                raise InputError("empty file, expected a pickle", file=str(path))
            return _PlainDataUnpickler(fh).load()
        except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError, IndexError, KeyError,
                MemoryError, UnicodeDecodeError, RecursionError) as exc:
            reason = "it ends early (truncated?)" if isinstance(exc, EOFError) else str(exc) or type(exc).__name__
            raise InputError(f"cannot read this pickle: {reason}", file=str(path)) from None


def _plain(value: Any) -> Any:
    """numpy scalars and arrays to Python values (pickles and parquet rows may hold them)."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        return value.tolist()
    return value


# -- the nested layout (pickle, JSON) ---------------------------------------------------------------

def _get(mapping: Any, key: Any) -> Any:
    """mapping[key] trying the key as given, as text and as a number (JSON keys are text)."""
    if not isinstance(mapping, dict):
        return None
    for candidate in (key, str(key), int(key) if str(key).lstrip("-").isdigit() else None):
        if candidate is not None and candidate in mapping:
            return mapping[candidate]
    return None


def _buckets(value: Any, where: str, file: str) -> Iterator[tuple[str, list[tuple[str, Any]]]]:
    """(type, [(question id, raw question)]) for a hard_q/easy_q mapping; lists are keyed by index."""
    if value is None:
        return
    if not isinstance(value, dict):
        raise InputError(f"expected an object of question type -> questions, got {json_type(value)}",
                         file=file, field=where)
    for qtype, bucket in value.items():
        bucket = _plain(bucket)
        if isinstance(bucket, (list, tuple)):
            yield str(qtype), [(str(i), q) for i, q in enumerate(bucket)]
        elif isinstance(bucket, dict):
            yield str(qtype), [(str(k), q) for k, q in bucket.items()]
        elif bucket is not None:
            raise InputError(f"expected a list or object of questions, got {json_type(bucket)}", file=file,
                             field=f"{where}.{qtype}")


def nested_to_sessions(show: str, data: Any, oracle_tkg: Any, oracle_fan: Any,
                       file: str) -> tuple[list[SessionData], int]:
    if not isinstance(data, dict):
        raise InputError(f"expected an object of episode -> scene -> session, got {json_type(data)}", file=file)
    sessions: list[SessionData] = []
    skipped = 0
    for episode, scenes in data.items():
        if not isinstance(scenes, dict):
            raise InputError(f"expected an object of scene -> session, got {json_type(scenes)}", file=file,
                             field=str(episode))
        for scene, session in scenes.items():
            where = f"{episode}/{scene}"
            if not isinstance(session, dict):
                raise InputError(f"expected a session object, got {json_type(session)}", file=file, field=where)
            for key in ("date", "script"):
                if not isinstance(session.get(key), str):
                    raise InputError(f"expected text, got {json_type(session.get(key))}", file=file,
                                     field=f"{where}.{key}")
            problem = date_problem(session["date"])
            if problem:
                raise InputError(problem, file=file, field=f"{where}.date")
            banks: dict[str, dict[str, list[QA]]] = {"hard_q": {}, "easy_q": {}}
            for bank, oracle in (("hard_q", oracle_tkg), ("easy_q", oracle_fan)):
                for qtype, items in _buckets(session.get(bank), f"{where}.{bank}", file):
                    kept = []
                    for qid, raw in items:
                        evidence = _evidence(bank, oracle, episode, scene, qtype, qid, raw)
                        qa = make_qa(raw, qid, evidence, f"{where}.{bank}.{qtype}.{qid}", file)
                        if qa is None:
                            skipped += 1
                        else:
                            kept.append(qa)
                    if kept:
                        banks[bank][qtype] = kept
            sessions.append(SessionData(show=show, episode=str(episode), scene=str(scene), date=session["date"],
                                        script=session["script"], **banks))
    return sessions, skipped


def _evidence(bank: str, oracle: Oracle | None, episode: Any, scene: Any, qtype: str, qid: str,
              raw: Any) -> list[str] | None:
    if oracle is None or (bank == "easy_q" and qtype not in FAN_TYPES_WITH_DATES):
        return None
    node: Any = oracle.data
    where: list[str] = []
    for level, key in enumerate((episode, scene, qtype)):  # a level missing: no dates for this question
        node = _plain(_get(node, key))
        where.append(str(key))
        if node is None:
            return []
        if isinstance(node, (list, tuple)) and level == 2:
            node = dict(enumerate(node))  # dates by question index
        elif not isinstance(node, dict):
            raise InputError(f"expected an object, got {json_type(node)}", file=oracle.path, field="/".join(where))
    found = _get(node, qid)
    key = qid
    if found is None and bank == "hard_q" and isinstance(raw, dict) and isinstance(raw.get("questions"), dict):
        # the official fallback: keyed by the first text, the one QA.first_text() gives the current-year filter
        first = next((t for t in raw["questions"].values() if t is not None), None)
        found = node.get(first) if isinstance(first, str) else None
        key = str(first)
    return _evidence_dates(found, oracle.path, "/".join([*where, key]))


def _evidence_dates(value: Any, file: str, where: str) -> list[str]:
    """A question's evidence dates: a date, or a list (of lists) of dates; `fu` entries mark future evidence."""
    value = _plain(value)
    if value is None:
        return []
    if isinstance(value, str):
        problem = None if "fu" in value else date_problem(value)
        if problem:
            raise InputError(problem, file=file, field=where)
        return [value]
    if isinstance(value, (list, tuple)):
        return [d for i, item in enumerate(value) for d in _evidence_dates(item, file, f"{where}[{i}]")]
    raise InputError(f"expected an evidence date or a list of them, got {json_type(value)}", file=file, field=where)

"""Check 4 (`check_data_fault`): every data file the bench read, spoilt one way at a time on a copy of the data,
must be refused with one line naming it (and its line and field), nothing written."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragjudge.testing.conformance.case import FAULT_KINDS, CheckReport, FaultKind, FieldFault, NotApplicable
from ragjudge.testing.conformance.outcomes import nothing_written, one_line_error
from ragjudge.testing.conformance.runs import BenchRuns


class DataFaultCheck(BenchRuns):
    def check_data_faults(self, kinds: Sequence[FaultKind] = FAULT_KINDS) -> CheckReport:
        report = CheckReport("data faults", self.name)
        for kind in kinds:
            report.merge(self.check_data_fault(kind))
        return report

    def check_data_fault(self, kind: FaultKind) -> CheckReport:
        """Every data file the bench read, spoilt as `kind`: exit 2, one line naming it, nothing written."""
        if kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {kind!r} (one of {', '.join(FAULT_KINDS)})")
        report = CheckReport(f"data fault: {kind}", self.name)
        inputs = self.inputs()
        if not inputs:
            report.problems.append("no data file under the data folder was recorded as read (run.json `inputs`)")
        for rel, system in inputs.items():
            folder = self._fresh(f"{kind}-{rel}")
            data = shutil.copytree(self.data, folder / "data")
            target = data / rel
            override = self.case.field_faults.get(rel, {}).get(kind)
            if isinstance(override, str):
                report.skipped.append(f"{rel}: {override}")
                continue
            try:
                expected = spoil(target, kind, override)
            except NotApplicable as why:
                report.skipped.append(f"{rel}: {why}")
                continue
            out = folder / "out"
            done = self.cli(self.eval_args(system, data, out))
            problems = one_line_error(done, [target, *expected.lines], expected.names)
            report.add_refusal(f"{rel} ({expected.what})", done, problems + nothing_written(out))
        return report


@dataclass
class Expected:
    """What the refusal of a spoilt file must say."""

    what: str
    lines: list[str | re.Pattern[str]] = field(default_factory=list)
    """What the error must contain: `file:line` (text, or a pattern when the line is the reader's to say)."""
    names: tuple[str, ...] = ()
    """Fields the error must name."""


def spoil(path: Path, kind: FaultKind, override: FieldFault | None) -> Expected:
    """Spoil the data file at `path` as `kind`; NotApplicable when it cannot be."""
    if kind == "empty":
        path.write_bytes(b"")
        return Expected("empty")
    if kind == "folder":
        path.unlink()
        path.mkdir()
        return Expected("a folder")
    data = path.read_bytes()
    if kind == "not_utf8":
        return _not_utf8(path, data)
    if kind == "truncated":
        return _truncated(path, data)
    return _field_fault(path, data, kind, override)


def _not_utf8(path: Path, data: bytes) -> Expected:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        raise NotApplicable("a binary file (not UTF-8 to begin with)") from None
    quote = re.search(rb'"[A-Za-z]', data) or re.search(rb"[A-Za-z]", data)
    if quote is None:
        raise NotApplicable("no text to put a Latin-1 byte in")
    at = quote.start() + (1 if data[quote.start():quote.start() + 1] == b'"' else 0)
    path.write_bytes(data[:at] + b"\xe9" + data[at:])  # é in Latin-1
    line = data.count(b"\n", 0, at) + 1
    return Expected(f"byte 0xe9 on line {line}", [f"{path}:{line}"])


def _truncated(path: Path, data: bytes) -> Expected:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        raise NotApplicable("a binary file") from None
    lines = data.splitlines(keepends=True)
    candidates = [i for i, line in enumerate(lines) if len(line.strip()) >= 2]
    if not candidates:
        raise NotApplicable("no line long enough to cut")
    index = candidates[len(candidates) // 2]
    start = sum(len(line) for line in lines[:index])
    body = lines[index].rstrip(b"\r\n")
    path.write_bytes(data[: start + max(1, len(body) // 2)])
    if path.suffix.lower() == ".json" and _is_json(data):  # a JSON parser locates the end of the document
        return Expected(f"cut in the middle of line {index + 1}", [re.compile(re.escape(str(path)) + r":\d+")])
    return Expected(f"cut in the middle of line {index + 1}", [f"{path}:{index + 1}"])


def _field_fault(path: Path, data: bytes, kind: FaultKind, override: FieldFault | None) -> Expected:
    """wrong_type / out_of_range: a field of the first record (or the one `override` says)."""
    fmt, doc = _document(path)
    if override is not None:
        where, value, names = override.path, override.value, override.names
    else:
        first = doc[0][1] if fmt == "jsonl" else doc
        prefix: tuple[str | int, ...] = (0,) if fmt == "jsonl" else ()
        if kind == "wrong_type":
            where, old = _first_field(first, prefix)
            value = _wrong_type(old)
        else:
            found = _first_number(first, prefix)
            if found is None:
                raise NotApplicable("no number in the first record (out_of_range needs one: give a FieldFault "
                                    "for another field)")
            where, old = found
            value = -1 if isinstance(old, int) else -1.5
        names = ""
    key = names or next((str(p) for p in reversed(where) if isinstance(p, str)), "")
    if fmt == "jsonl":
        records = [r for _, r in doc]
        _set(records, where, value)
        number = doc[where[0]][0]  # type: ignore[index]
        text_lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        text_lines[number - 1] = json.dumps(records[where[0]], ensure_ascii=False) + "\n"  # type: ignore[index]
        path.write_text("".join(text_lines), encoding="utf-8")
        lines: list[str | re.Pattern[str]] = [f"{path}:{number}"]
    else:
        _set(doc, where, value)
        pretty = b"\n" in data.strip()
        path.write_text(json.dumps(doc, ensure_ascii=False, indent=2 if pretty else None), encoding="utf-8")
        lines = []
    shown = "/".join(str(p) for p in where)
    return Expected(f"{kind} at {shown}: {json.dumps(value)}", lines, (key,) if key else ())


def _document(path: Path) -> tuple[str, Any]:
    """("jsonl", records with their line numbers) or ("json", the document); NotApplicable otherwise."""
    try:
        text = path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError) as exc:
        raise NotApplicable(f"not UTF-8 text ({exc.__class__.__name__})") from None
    if path.suffix.lower() != ".jsonl":
        try:
            return "json", json.loads(text)
        except json.JSONDecodeError:
            pass
    records = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                records.append((number, json.loads(line)))
            except json.JSONDecodeError:
                raise NotApplicable("not JSON or JSON Lines: field faults apply to JSON and JSON Lines files "
                                    "only") from None
    if not records:
        raise NotApplicable("no record")
    return "jsonl", records


def _is_json(data: bytes) -> bool:
    try:
        json.loads(data)
        return True
    except (json.JSONDecodeError, UnicodeDecodeError):
        return False


def _first_field(record: Any, prefix: tuple[str | int, ...]) -> tuple[tuple[str | int, ...], Any]:
    """The first field with a value: a record's first key, a list's first item, a map of records' first record's."""
    if isinstance(record, dict):
        if not prefix and record and all(isinstance(v, dict) and v for v in record.values()):
            key = next(iter(record))  # a map of records (id → record): its first record's first field
            return _first_field(record[key], (key,))
        for key, value in record.items():
            if value is not None:
                return (*prefix, key), value
        raise NotApplicable("the first record has no field with a value")
    if isinstance(record, list):
        if not record:
            raise NotApplicable("the first record is an empty list")
        if isinstance(record[0], dict) and not prefix:
            return _first_field(record[0], (*prefix, 0))
        return (*prefix, 0), record[0]
    raise NotApplicable("the document is a single value")


def _first_number(record: Any, prefix: tuple[str | int, ...], depth: int = 0
                  ) -> tuple[tuple[str | int, ...], Any] | None:
    if depth > 4:
        return None
    items: list[tuple[str | int, Any]] = list(record.items()) if isinstance(record, dict) else \
        list(enumerate(record)) if isinstance(record, list) else []
    for key, value in items:  # this level first, then nested records
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return (*prefix, key), value
    for key, value in items:
        if isinstance(value, (dict, list)):
            found = _first_number(value, (*prefix, key), depth + 1)
            if found is not None:
                return found
    return None


def _wrong_type(value: Any) -> Any:
    """A value of another JSON type than `value`'s, one no lenient reader turns back into the right one."""
    for kinds, other in ((bool, "not a boolean"), ((int, float), "not a number"), (str, {"not": "a string"}),
                         (list, "not a list")):
        if isinstance(value, kinds):
            return other
    return "not an object"


def _set(doc: Any, path: tuple[str | int, ...], value: Any) -> None:
    target = doc
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value

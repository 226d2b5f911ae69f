"""Read what a run wrote (a run folder, or a results file with its `.summary.json` / `.run.json` siblings) and
find the view its bench shows samples with.

A run is what a ragjudge command wrote: its summary follows the result contract (`ragjudge.engine.summary`),
which is all the overview reads. A file that is not a run (a plain tasks file, an older run's summary) is refused
with one line saying what is missing and what to do; a results line whose fields have the wrong type is refused
naming its file, line and field, as `export` and `correlate` do.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ragjudge.engine.summary import SCHEMA_ID, Summary
from ragjudge.errors import InputError, RagjudgeError
from ragjudge.formats.files import read_text
from ragjudge.formats.jsonl import read_jsonl
from ragjudge.report.view import ReportView


@dataclass
class LoadedRun:
    label: str
    path: Path
    """The results file."""
    records: list[dict[str, Any]]
    summary: Summary
    run_info: dict[str, Any]
    view: ReportView
    results_sha256: str
    notes: list[str] = field(default_factory=list)
    """What the report could not do for this run (a bench plugin that does not load...)."""

    lines: list[int] = field(default_factory=list)
    """Each record's line in the results file (for errors that name it)."""

    @property
    def bench(self) -> str:
        return self.summary.bench


def results_path(path: Path) -> Path:
    """RUN is a run folder (results.jsonl) or a results file (`ragjudge judge --out X.jsonl`)."""
    if not path.exists():
        raise InputError("no such run folder or results file", file=str(path))
    if path.is_dir():
        found = path / "results.jsonl"
        if not found.is_file():
            raise InputError("not a ragjudge run folder (it has no results.jsonl)", file=str(path))
        return found
    return path


def siblings(results: Path) -> tuple[Path, Path]:
    """(summary, run info) written beside `results`."""
    if results.name == "results.jsonl":
        return results.with_name("summary.json"), results.with_name("run.json")
    stem = results.name.removesuffix(".jsonl")
    return results.with_name(stem + ".summary.json"), results.with_name(stem + ".run.json")


def _read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        data = json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON ({exc.msg})", file=str(path), line=exc.lineno) from None
    if not isinstance(data, dict):
        raise InputError(f"expected a JSON object, got {type(data).__name__}", file=str(path))
    return data


def read_summary(path: Path, results: Path) -> Summary:
    """The run's summary, as the contract defines it; anything else is one line saying what to do."""
    if not path.is_file():
        raise InputError(f"not a ragjudge run: no {path.name} beside it (a run folder written by `ragjudge eval`, or "
                         "a results file written by `ragjudge judge`, has one)", file=str(results))
    data = _read_json(path)
    schema = data.get("schema")
    if schema is None:
        raise InputError(f"not a {SCHEMA_ID} summary (no 'schema': written by an older ragjudge, or not by ragjudge); "
                         "rerun the command that made the run with the same --out: it resumes without repeating "
                         "work and rewrites the summary", file=str(path))
    if schema != SCHEMA_ID:
        raise InputError(f"summary schema {schema!r}: this ragjudge reads {SCHEMA_ID}", file=str(path),
                         field="schema")
    try:
        return Summary.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise InputError(f"not a valid {SCHEMA_ID} summary: {err['msg']}", file=str(path), field=where) from None


CONTAINERS: dict[str, type] = {"metrics": dict, "scores": dict, "output": dict, "ragjudge": dict, "input": list,
                               "contexts": list, "predictions": list}
"""Fields of results lines that views read as objects or lists: a wrong type is an input error, not a crash."""


def check_record(record: dict[str, Any], path: Path, line: int) -> None:
    for key, kind in CONTAINERS.items():
        value = record.get(key)
        if value is not None and not isinstance(value, kind):
            raise InputError(f"must be {'an object' if kind is dict else 'a list'}, got {_type(value)}",
                             file=str(path), line=line, field=key)
    for key in ("scores",):
        for name, value in (record.get(key) or {}).items():
            if value is not None and not isinstance(value, dict):
                raise InputError(f"must be an object, got {_type(value)}", file=str(path), line=line,
                                 field=f"{key}.{name}")
    nested = record.get("ragjudge") or {}
    for key in ("judges", "errors"):
        if nested.get(key) is not None and not isinstance(nested[key], dict):
            raise InputError(f"must be an object, got {_type(nested[key])}", file=str(path), line=line,
                             field=f"ragjudge.{key}")
    for key in ("input", "contexts", "predictions"):
        for i, item in enumerate(record.get(key) or []):
            if not isinstance(item, dict):
                raise InputError(f"must be an object, got {_type(item)}", file=str(path), line=line,
                                 field=f"{key}[{i}]")


def _type(value: Any) -> str:
    names = {str: "a string", bool: "true/false", int: "a number", float: "a number", list: "a list",
             dict: "an object"}
    return names.get(type(value), type(value).__name__)


def load_run(path: str | Path, label: str | None = None) -> LoadedRun:
    results = results_path(Path(path))
    summary_path, run_path = siblings(results)
    summary = read_summary(summary_path, results)
    records, lines = [], []
    for line, record in read_jsonl(results):
        check_record(record, results, line)
        records.append(record)
        lines.append(line)
    if not records:
        raise InputError("no results in this file", file=str(results))
    run_info = _read_json(run_path)
    view, notes = find_view(summary.bench, run_info, records)
    for line, record in zip(lines, records):
        view.check_record(record, results, line)
    if not run_info:
        notes.append(f"{run_path.name} not found: run settings unknown")
    digest = hashlib.sha256(results.read_bytes()).hexdigest()
    return LoadedRun(label=label or default_label(results), path=results, records=records, summary=summary,
                     run_info=run_info, view=view, results_sha256=digest, notes=notes, lines=lines)


def default_label(results: Path) -> str:
    return results.parent.name if results.name == "results.jsonl" else results.name.removesuffix(".jsonl")


def find_view(name: str, run_info: dict[str, Any], records: list[dict[str, Any]]) -> tuple[ReportView, list[str]]:
    """The bench's own view (by the summary's bench name), else MTRAG's for MTRAG-shaped records, else the generic."""
    from ragjudge.engine import registry

    if name:
        if name in registry.entries():
            try:
                return registry.get(name).load().report_view(run_info), []
            except RagjudgeError as exc:
                return ReportView(run_info), [f"bench {name}: {exc}; samples are shown by the generic view"]
        note = [f"bench {name} is not installed here; samples are shown by the generic view"]
        return ReportView(run_info), note
    if looks_like_mtrag(records[0]):
        from ragjudge.bench.mtrag.report_view import MtragView

        return MtragView(run_info), []
    return ReportView(run_info), []


def looks_like_mtrag(record: dict[str, Any]) -> bool:
    return isinstance(record.get("input"), list) and "task_id" in record and "predictions" in record


def unique_labels(runs: list[LoadedRun]) -> None:
    """Two runs named alike (two folders called `run`) get their parent folder's name too, then a number."""
    seen: dict[str, int] = {}
    for run in runs:
        seen[run.label] = seen.get(run.label, 0) + 1
    for run in runs:
        if seen[run.label] > 1:
            run.label = f"{run.path.parent.parent.name}/{run.label}" if run.path.name == "results.jsonl" \
                else f"{run.path.parent.name}/{run.label}"
    counts: dict[str, int] = {}
    for run in runs:
        counts[run.label] = counts.get(run.label, 0) + 1
        if counts[run.label] > 1:
            run.label = f"{run.label} ({counts[run.label]})"

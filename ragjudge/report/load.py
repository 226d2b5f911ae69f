"""Read what a run wrote (a run folder, or a results file with its `.summary.json` / `.run.json` siblings) and
find the view its bench shows samples with."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragjudge.errors import InputError, RagjudgeError
from ragjudge.formats.jsonl import read_jsonl
from ragjudge.report.view import ReportView


@dataclass
class LoadedRun:
    label: str
    path: Path
    """The results file."""
    records: list[dict[str, Any]]
    summary: dict[str, Any]
    run_info: dict[str, Any]
    view: ReportView
    results_sha256: str
    notes: list[str] = field(default_factory=list)
    """What the report could not do for this run (a bench plugin that does not load...)."""

    @property
    def bench(self) -> str:
        return str(self.run_info.get("bench") or "unknown")


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
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON ({exc.msg})", file=str(path), line=exc.lineno) from None
    if not isinstance(data, dict):
        raise InputError(f"expected a JSON object, got {type(data).__name__}", file=str(path))
    return data


def load_run(path: str | Path, label: str | None = None) -> LoadedRun:
    results = results_path(Path(path))
    records = [record for _, record in read_jsonl(results)]
    if not records:
        raise InputError("no results in this file", file=str(results))
    summary_path, run_path = siblings(results)
    summary, run_info = _read_json(summary_path), _read_json(run_path)
    view, notes = find_view(run_info, records)
    if not run_info:
        notes.append(f"{run_path.name} not found: run settings unknown")
    digest = hashlib.sha256(results.read_bytes()).hexdigest()
    return LoadedRun(label=label or default_label(results), path=results, records=records, summary=summary,
                     run_info=run_info, view=view, results_sha256=digest, notes=notes)


def default_label(results: Path) -> str:
    return results.parent.name if results.name == "results.jsonl" else results.name.removesuffix(".jsonl")


def find_view(run_info: dict[str, Any], records: list[dict[str, Any]]) -> tuple[ReportView, list[str]]:
    """The bench's own view (by run.json's bench name), else MTRAG's for MTRAG-shaped records, else the generic."""
    from ragjudge.bench import registry

    name = run_info.get("bench")
    if isinstance(name, str) and name:
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

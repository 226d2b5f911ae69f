"""Read what a run wrote (a run folder, or `ragjudge judge`'s results file with its siblings): its summary (the result
contract) and its sample log, nothing else; and find the view its bench shows samples with. A file that is not a run
(a plain tasks file, an older run) is refused with one line saying what is missing and what to do; a sample line
that is not a `ragjudge.sample/1` record is refused naming its file, line and field.
"""

from __future__ import annotations

import hashlib
import importlib
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ragjudge.engine.summary import SCHEMA_ID, Summary
from ragjudge.errors import InputError, RagjudgeError
from ragjudge.formats.files import read_text
from ragjudge.formats.samples import FILE_NAME, Sample, iter_samples, locate_run, run_sample_log
from ragjudge.report.view import ReportView


@dataclass
class LoadedRun:
    label: str
    path: Path
    """The run's sample log (samples.jsonl, or `<results>.samples.jsonl` beside `ragjudge judge`'s file)."""
    samples: list[Sample]
    summary: Summary
    run_info: dict[str, Any]
    view: ReportView
    samples_sha256: str
    notes: list[str] = field(default_factory=list)
    """What the report could not do for this run (a bench plugin that does not load...)."""
    lines: list[int] = field(default_factory=list)
    """Each sample's line in the sample log (for errors that name it)."""

    @property
    def bench(self) -> str:
        return self.summary.bench


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


def load_run(path: str | Path, label: str | None = None) -> LoadedRun:
    _, summary_path, run_path = locate_run(Path(path))
    if Path(path).is_dir() and not summary_path.is_file() and not (Path(path) / FILE_NAME).is_file():
        raise InputError("not a ragjudge run folder (it has no summary.json or samples.jsonl)", file=str(path))
    summary = read_summary(summary_path, Path(path))
    samples_path = run_sample_log(Path(path))
    rows = list(iter_samples(samples_path))
    samples, lines = [s for _, s in rows], [n for n, _ in rows]
    if not samples:
        raise InputError("no samples in this file", file=str(samples_path))
    run_info = _read_json(run_path)
    view, notes = find_view(summary.bench, run_info)
    if not run_info:
        notes.append(f"{run_path.name} not found: run settings unknown")
    digest = hashlib.sha256(samples_path.read_bytes()).hexdigest()
    return LoadedRun(label=label or default_label(samples_path), path=samples_path, samples=samples,
                     summary=summary, run_info=run_info, view=view, samples_sha256=digest, notes=notes, lines=lines)


def in_memory_run(summary: Summary, samples: list[Sample], run_info: dict[str, Any],
                  label: str = "run") -> LoadedRun:
    """A run that wrote no files (`ragjudge.evaluate` without `out`), as the report reads runs."""
    view, notes = find_view(summary.bench, run_info)
    blob = "".join(json.dumps(s.to_dict(), sort_keys=True) for s in samples).encode()
    return LoadedRun(label=label, path=Path(f"<{label}: in memory>"), samples=samples, summary=summary,
                     run_info=run_info, view=view, samples_sha256=hashlib.sha256(blob).hexdigest(), notes=notes)


def default_label(samples: Path) -> str:
    return samples.parent.name if samples.name == FILE_NAME else samples.name.removesuffix("." + FILE_NAME)


def find_view(name: str, run_info: dict[str, Any]) -> tuple[ReportView, list[str]]:
    """The bench's own view (`Bench.view`, by the summary's bench name), else the generic one."""
    from ragjudge.engine import registry

    if name not in registry.entries():
        return ReportView(run_info), [f"bench {name} is not installed here; samples are shown by the generic view"]
    try:
        target = registry.get(name).load().view
        if not target:
            return ReportView(run_info), []
        module, _, attr = target.partition(":")
        view = getattr(importlib.import_module(module), attr)
        if not (isinstance(view, type) and issubclass(view, ReportView)):
            raise RagjudgeError(f"{target} is not a ReportView")
        return view(run_info), []
    except (RagjudgeError, ImportError, AttributeError) as exc:
        return ReportView(run_info), [f"bench {name}: {exc}; samples are shown by the generic view"]


def unique_labels(runs: list[LoadedRun]) -> None:
    """Two runs named alike (two folders called `run`) get their parent folder's name too, then a number."""
    seen = Counter(run.label for run in runs)
    for run in runs:
        if seen[run.label] > 1:
            run.label = f"{run.path.parent.parent.name}/{run.label}" if run.path.name == FILE_NAME \
                else f"{run.path.parent.name}/{run.label}"
    counts: dict[str, int] = {}
    for run in runs:
        counts[run.label] = counts.get(run.label, 0) + 1
        if counts[run.label] > 1:
            run.label = f"{run.label} ({counts[run.label]})"

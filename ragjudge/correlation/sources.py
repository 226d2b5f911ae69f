"""Where judge values come from: ragjudge results files (or run folders) and InspectorRAGet files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ragjudge.errors import InputError, UsageError
from ragjudge.formats.files import read_text
from ragjudge.formats.jsonl import json_type, read_jsonl


def parse_source(spec: str) -> tuple[str | None, Path]:
    """`[MODEL_ID=]PATH`: an existing path is taken whole, so paths containing '=' still work."""
    if Path(spec).exists() or "=" not in spec:
        return None, Path(spec)
    model_id, path = spec.split("=", 1)
    if not model_id.strip() or not path.strip():
        raise UsageError(f"expected [MODEL_ID=]PATH, got {spec!r}")
    return model_id.strip(), Path(path.strip())


def is_inspectorraget(path: Path) -> bool:
    return path.suffix.lower() == ".json" and path.is_file()


def results_file(path: Path) -> Path:
    """A results.jsonl, or the run folder `ragjudge eval` wrote it in."""
    if path.is_dir():
        candidate = path / "results.jsonl"
        if not candidate.exists():
            raise InputError("no results.jsonl in this folder (expected a ragjudge run folder)", file=str(path))
        return candidate
    if not path.exists():
        raise InputError("file not found", file=str(path))
    return path


def read_results(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """(line, record) of a ragjudge results file, every line checked for shape: an MTRAG task (task_id, input,
    contexts, targets), `metrics` an object and `ragjudge.judges` (when present) an object of judge results."""
    from ragjudge.formats.mtrag import task_from_record

    rows = []
    for line, record in read_jsonl(path):
        if "task_id" not in record:
            raise InputError("is missing (not a ragjudge results line)", file=str(path), line=line, field="task_id")
        if not isinstance(record.get("metrics"), dict):
            raise InputError("is missing or not an object (not a ragjudge results file: run `ragjudge eval` or "
                             "`ragjudge judge` first)", file=str(path), line=line, field="metrics")
        task_from_record(record, file=str(path), line=line)
        judge_details(record, file=str(path), line=line)
        rows.append((line, record))
    if not rows:
        raise InputError("contains no results", file=str(path))
    return rows


def judge_details(record: dict[str, Any], *, file: str, line: int) -> dict[str, dict[str, Any]]:
    """`ragjudge.judges` of a results line (judge name → its result: value, label, metric, panel members),
    checked for shape; a malformed part is an InputError naming the field."""
    details = record.get("ragjudge")
    if details is None:
        return {}
    if not isinstance(details, dict):
        raise InputError(f"must be an object, got {json_type(details)}", file=file, line=line, field="ragjudge")
    judges = details.get("judges") or {}
    if not isinstance(judges, dict):
        raise InputError(f"must be an object, got {json_type(judges)}", file=file, line=line,
                         field="ragjudge.judges")
    for name, detail in judges.items():
        if not isinstance(detail, dict):
            raise InputError(f"must be an object, got {json_type(detail)}", file=file, line=line,
                             field=f"ragjudge.judges.{name}")
        members = detail.get("members")
        if members is not None and not (isinstance(members, list) and all(isinstance(m, dict) for m in members)):
            raise InputError("must be a list of objects", file=file, line=line,
                             field=f"ragjudge.judges.{name}.members")
    return judges


def default_model_id(path: Path) -> str:
    """The generator recorded beside the results (run.json of `eval`, NAME.run.json of `judge`), else the run
    folder's name for a results.jsonl, else the results file's name without `.judged`."""
    results = results_file(path)
    stem = results.name.removesuffix(".jsonl")
    for run_json in (results.with_name(stem + ".run.json"), results.with_name("run.json")):
        if not run_json.exists():
            continue
        try:
            generator = json.loads(read_text(run_json, "run.json")).get("generator")
        except (json.JSONDecodeError, AttributeError, RecursionError, InputError):
            generator = None
        if isinstance(generator, str) and generator:
            return generator
    if stem == "results":
        return results.parent.resolve().name
    return stem.removesuffix(".judged")

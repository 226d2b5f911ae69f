"""Where judge values come from: ragjudge runs (their sample logs: a run folder, `ragjudge judge`'s results file) and
InspectorRAGet files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ragjudge.errors import InputError, UsageError
from ragjudge.formats.files import read_text
from ragjudge.formats.jsonl import json_type, read_jsonl
from ragjudge.formats.samples import FILE_NAME, iter_samples, locate_run, run_sample_log, samples_file


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
    """The sample log of a ragjudge run (a run folder, `ragjudge judge`'s results file, or the log itself); or an
    MTRAG results file with no sample log beside it (as MTRAG's own evaluation scripts write it), itself."""
    if is_mtrag_results(path):
        return path
    return run_sample_log(path)


def is_mtrag_results(path: Path) -> bool:
    """A JSON Lines file of judged MTRAG results (`task_id` with `metrics`, as MTRAG's evaluation scripts write them)
    that no sample log accompanies: the official format, read as it is. Predictions alone are judged first."""
    if not (path.is_file() and path.suffix == ".jsonl") or path.name == FILE_NAME or \
            path.name.endswith("." + FILE_NAME) or samples_file(path).is_file():
        return False
    for _, record in read_jsonl(path):
        return "task_id" in record and "metrics" in record
    return False


def read_results(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """(line, record) for each sample of a run's sample log, as an MTRAG results line (`record_from_sample`: the
    task's fields, its conversation, passages and reference, `predictions`, `metrics`, `ragjudge.judges`). Each line
    is validated as a `ragjudge.sample/1` record first: a mistyped field is one error naming file, line and field.
    An MTRAG results file (`is_mtrag_results`) is read line by line as it is."""
    from ragjudge.formats.mtrag import record_from_sample

    if path.name != FILE_NAME and not path.name.endswith("." + FILE_NAME) and is_mtrag_results(path):
        rows = list(read_jsonl(path))
    else:
        rows = [(line, record_from_sample(sample)) for line, sample in iter_samples(path)]
    if not rows:
        raise InputError("contains no samples", file=str(path))
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
    _, _, run_json = locate_run(results)
    for run_json in (run_json,):
        if not run_json.exists():
            continue
        try:
            generator = json.loads(read_text(run_json, "run.json")).get("generator")
        except (json.JSONDecodeError, AttributeError, RecursionError, InputError):
            generator = None
        if isinstance(generator, str) and generator:
            return generator
    if results.name == FILE_NAME:
        return results.parent.resolve().name
    return results.name.removesuffix("." + FILE_NAME).removesuffix(".judged")

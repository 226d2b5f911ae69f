"""Where judge values come from: ragjudge runs (their sample logs: a run folder, `ragjudge judge`'s results file) and
InspectorRAGet files."""

from __future__ import annotations

from pathlib import Path

from ragjudge.errors import InputError, UsageError
from ragjudge.formats.jsonl import read_json, read_jsonl
from ragjudge.formats.samples import FILE_NAME, Sample, iter_samples, locate_run, run_sample_log, samples_file


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


def read_results(path: Path) -> list[tuple[int, Sample]]:
    """(line, sample) for each sample of a run's sample log, each validated as a `ragjudge.sample/1` record (a
    mistyped field is one error naming file, line and field); an MTRAG results file (`is_mtrag_results`) is read as
    the samples the MTRAG bench would have logged (`formats.mtrag_results.sample_from_result`)."""
    from ragjudge.formats.mtrag_results import sample_from_result

    if is_mtrag_results(path):
        rows = [(line, sample_from_result(record, file=str(path), line=line)) for line, record in read_jsonl(path)]
    else:
        rows = list(iter_samples(path))
    if not rows:
        raise InputError("contains no samples", file=str(path))
    return rows


def default_model_id(path: Path) -> str:
    """The generator recorded beside the results (run.json of `eval`, NAME.run.json of `judge`), else the run
    folder's name for a results.jsonl, else the results file's name without `.judged`."""
    results = results_file(path)
    _, _, run_json = locate_run(results)
    try:
        generator = read_json(run_json, "run.json").get("generator") if run_json.exists() else None
    except (AttributeError, InputError):
        generator = None
    if isinstance(generator, str) and generator:
        return generator
    if results.name == FILE_NAME:
        return results.parent.resolve().name
    return results.name.removesuffix("." + FILE_NAME).removesuffix(".judged")

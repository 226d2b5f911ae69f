"""`export`: ragjudge runs in another tool's format: an InspectorRAGet experiment, or a SemEval-2026 MTRAGEval
submission (`ragjudge export` is this call and one line saying what was written)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ragjudge.engine.bench_options import PYTHON, Spelling
from ragjudge.errors import UsageError

FORMATS = ("inspectorraget", "mtrageval-a", "mtrageval-b", "mtrageval-c")
Results = Sequence[str | Path] | Mapping[str, str | Path] | str | Path
"""Runs (run folders, results files, what `ragjudge judge --out` was given), each `[MODEL_ID=]PATH`, or a dict
model id → path."""


@dataclass
class ExportResult:
    """What was written: the file, its format and what it holds."""

    out: Path
    to: str
    tasks: int
    models: list[str] = field(default_factory=list)
    """InspectorRAGet: the model id of each run."""
    metrics: int = 0
    documents: int = 0
    without_passages: int = 0
    """MTRAGEval: submission lines with no passages."""


def export(results: Results, *, to: str = "inspectorraget", out: str | Path | None = None,
           tasks: str | Path | None = None, model_id: str | None = None, name: str | None = None,
           spelling: Spelling = PYTHON) -> ExportResult:
    """Write `results` as `to`: `inspectorraget` (a .json to open in its UI, one model per run; default
    ragjudge-inspectorraget.json), or an MTRAGEval submission (`mtrageval-a`: retrieval, from a retrieval run;
    `mtrageval-b` / `mtrageval-c`: generation, from one judged run; default `<to>.jsonl`), which must answer exactly
    the tasks of `tasks` when given. `model_id`: the id of a single run given without one (default: the run's
    generator, else its folder or file name); `name`: the experiment's name in the UI."""
    if to not in FORMATS:
        raise UsageError(f"{spelling.flag('to')} must be one of {', '.join(FORMATS)}, got {to!r}")
    sources = _sources(results)
    if to.startswith("mtrageval-"):
        return _mtrageval(sources, to, Path(out or f"{to}.jsonl"), tasks, model_id, name, spelling)
    if tasks is not None:
        raise UsageError(f"{spelling.flag('tasks')} is for {spelling.flag('to')} mtrageval-a|b|c")
    return _inspectorraget(sources, Path(out or "ragjudge-inspectorraget.json"), model_id, name, spelling)


def _sources(results: Results) -> list[tuple[str | None, Path]]:
    from ragjudge.correlation.sources import parse_source

    if isinstance(results, Mapping):
        return [(str(mid), Path(path)) for mid, path in results.items()]
    if isinstance(results, (str, Path)):
        results = [results]
    return [parse_source(str(spec)) for spec in results]


def _inspectorraget(sources: list[tuple[str | None, Path]], out: Path, model_id: str | None, name: str | None,
                    spelling: Spelling) -> ExportResult:
    from ragjudge.version import __version__
    from ragjudge.correlation.sources import default_model_id, read_results, results_file
    from ragjudge.formats.files import output_file
    from ragjudge.formats.inspectorraget import write_inspectorraget
    from ragjudge.formats.inspectorraget_export import from_samples

    output_file(out, f"InspectorRAGet file ({spelling.flag('out')})")
    if model_id and (len(sources) != 1 or sources[0][0] is not None):
        raise UsageError(f"{spelling.flag('model_id')} applies to a single RESULTS given without MODEL_ID=")
    runs = []
    seen: dict[str, Path] = {}
    for given, path in sources:
        file = results_file(path)
        mid = given or model_id or default_model_id(path)
        if mid in seen:
            raise UsageError(f"model id {mid!r} is used for both {seen[mid]} and {file}; name them "
                             f"MODEL_ID=RESULTS")
        seen[mid] = file
        runs.append((mid, [sample for _, sample in read_results(file)]))
    data = from_samples(runs, name=name or out.stem,
                        description=f"ragjudge {__version__} results: {', '.join(str(p) for p in seen.values())}")
    write_inspectorraget(out, data)
    return ExportResult(out=out, to="inspectorraget", tasks=len(data.tasks), models=list(seen),
                        metrics=len(data.metrics), documents=len(data.documents))


def _mtrageval(sources: list[tuple[str | None, Path]], to: str, out: Path, tasks: str | Path | None,
               model_id: str | None, name: str | None, spelling: Spelling) -> ExportResult:
    """One run (a retrieval run for task A, a judged run for B and C) → one submission file, which the benchmark's
    format_checker.py accepts."""
    from ragjudge.correlation.sources import read_results, results_file
    from ragjudge.formats.files import output_file
    from ragjudge.formats.jsonl import write_jsonl
    from ragjudge.formats.mtrageval import TASKS, submission

    if len(sources) != 1 or model_id or name or sources[0][0] is not None:
        raise UsageError(f"{spelling.flag('to')} {to} writes one submission: give one RESULTS (no MODEL_ID=, "
                         f"{spelling.flag('model_id')} or {spelling.flag('name')})")
    path = sources[0][1]
    if out.suffix != ".jsonl":
        raise UsageError(f"{spelling.flag('out')} {out}: an MTRAGEval submission is a .jsonl file (the format "
                         "checker requires it)")
    output_file(out, f"MTRAGEval submission ({spelling.flag('out')})")
    task = TASKS[to]
    source = path if task == "A" else results_file(path)
    if task == "A" and not source.exists():
        raise UsageError(f"{spelling.flag('to')} mtrageval-a reads a retrieval run (a retrieval bench's run "
                         f"folder, or ragjudge retrieve --out): {source} is not one")
    lines = submission(task, source, Path(tasks) if tasks is not None else None,
                       [] if task == "A" else read_results(source))
    write_jsonl(out, lines)
    return ExportResult(out=out, to=to, tasks=len(lines), without_passages=sum(not line["contexts"] for line in lines))

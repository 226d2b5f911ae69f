"""`evaluate_retrieval`: a retrieval run scored against qrels (`ragjudge retrieval-eval` is this call and a rendering
of its report)."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragjudge.engine.bench_options import PYTHON, Spelling
from ragjudge.errors import UsageError

if TYPE_CHECKING:
    from ragjudge.retrieval_eval.report import RetrievalReport

DEFAULT_CUTOFFS = "1,3,5,10,20"


def evaluate_retrieval(run: str | Path, *, qrels: Sequence[str | Path] | str | Path | None = None,
                   metrics: str | Sequence[str] | None = None, cutoffs: str = DEFAULT_CUTOFFS,
                   per_query: str | Path | None = None, compare: str | Path | None = None, by: str | None = None,
                   breakdown_file: str | Path | None = None, domain: str | None = None,
                   ignore_missing: bool = False, alpha: float = 0.05,
                   spelling: Spelling = PYTHON) -> RetrievalReport:
    """Score `run` over the queries that have qrels (`qrels`: BEIR TSV or TREC files, merged; default for a run
    folder: its samples' relevant documents). `metrics`: R, nDCG, P, MRR, MAP, hit (each at every one of `cutoffs`,
    or at one: nDCG@10); `by`: breakdowns (turn, turn_number, domain, standalone or a field of `breakdown_file`;
    'none'); `compare`: a second run, each metric compared with a paired t-test at level `alpha`; `per_query`: also
    write per-query scores and labels there (JSONL, or CSV / TSV when the name ends so)."""
    from ragjudge.formats.files import output_file
    from ragjudge.formats.runs import read_qrels
    from ragjudge.formats.sample_runs import is_sample_log, qrels_from_samples, read_any_run
    from ragjudge.retrieval_eval import evaluate_run, parse_cutoffs, parse_metrics, read_labels, resolve_dimensions
    from ragjudge.retrieval_eval.breakdowns import BUILTIN

    run = Path(run)
    metric_names = parse_metrics(metrics, parse_cutoffs(cutoffs))
    if per_query:
        output_file(Path(per_query), f"per-query file ({spelling.flag('per_query')})")
    the_run = read_any_run(run)
    qrels_files = [Path(qrels)] if isinstance(qrels, (str, Path)) else [Path(q) for q in qrels or []]
    if not qrels_files:
        if not is_sample_log(run):
            raise UsageError(f"{spelling.flag('qrels')} is required for a run file (a ragjudge run folder brings "
                             "its own)")
        merged = qrels_from_samples(run)
    else:
        merged = read_qrels(qrels_files[0])
        for path in qrels_files[1:]:
            merged = merged.merge(read_qrels(path))
    labels = read_labels(breakdown_file) if breakdown_file else None
    dims = resolve_dimensions(by, labels)
    unknown = [d for d in dims if d not in BUILTIN and labels is None]
    if unknown:
        raise UsageError(f"{spelling.flag('by')} {unknown[0]}: not a built-in breakdown ({', '.join(BUILTIN)}); "
                         f"labels of your own need {spelling.flag('breakdown_file')}")
    other = read_any_run(compare) if compare else None
    if other is not None and other.name == the_run.name:
        other.name = f"{other.name} (2)"
    report = evaluate_run(the_run, merged, metrics=metric_names, dims=dims, labels=labels, default_domain=domain,
                          ignore_missing=ignore_missing, compare=other, alpha=alpha)
    if per_query:
        _write_per_query(Path(per_query), report.per_query())
    return report


def _write_per_query(path: Path, rows: list[dict[str, Any]]) -> None:
    from ragjudge.formats.files import atomic_output
    from ragjudge.formats.jsonl import write_jsonl

    suffix = path.suffix.lower()
    if suffix not in (".csv", ".tsv"):
        write_jsonl(path, rows)
        return
    columns = list(dict.fromkeys(c for row in rows for c in row))
    with atomic_output(path) as tmp, tmp.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns, delimiter="\t" if suffix == ".tsv" else ",")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: "|".join(v) if isinstance(v, list) else v for k, v in row.items()})

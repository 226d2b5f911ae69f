"""`ragjudge retrieval-eval`: score a retrieval run (MTRAG or TREC) against qrels (BEIR or TREC)."""

import csv
import json
from pathlib import Path
from typing import Annotated, Any

import typer

from ragjudge.cli import common
from ragjudge.errors import UsageError


def retrieval_eval_command(
    run: Annotated[Path, typer.Argument(help="Run to score: a ragjudge run folder (its samples' rankings), MTRAG "
                                        "retrieval predictions (JSONL) or a TREC run.")],
    qrels: Annotated[list[Path] | None, typer.Option("--qrels", metavar="<file>", help="BEIR TSV or TREC qrels; repeat "
                                                     "to merge several (e.g. one per domain). Default for a run folder: "
                                                     "its samples' relevant documents.")] = None,
    metrics: Annotated[str | None, typer.Option("--metrics", help="Comma-separated R, nDCG, P, MRR, MAP, hit "
                                                "(or ranx's recall, ndcg, precision, mrr, map, hit_rate), each at "
                                                "every cutoff or at one (nDCG@10). Default: all.")] = None,
    cutoffs: Annotated[str, typer.Option("--cutoffs", help="Cutoffs for metrics given without @k.")] = "1,3,5,10,20",
    fmt: common.FormatOpt = "table",
    per_query: Annotated[Path | None, typer.Option("--per-query", help="Write per-query scores and labels: JSONL, "
                                                   "or CSV / TSV when the name ends so.")] = None,
    compare: Annotated[Path | None, typer.Option("--compare", help="A second run: each metric is compared with a "
                                                 "paired t-test on the same queries.")] = None,
    by: Annotated[str | None, typer.Option("--by", help="Breakdowns: turn, turn_number, domain, standalone or any "
                                           "field of --breakdown-file; 'none' for none. Default: turn,domain "
                                           "(+standalone when labelled).")] = None,
    breakdown_file: Annotated[Path | None, typer.Option("--breakdown-file", help="Per-query labels (JSONL/CSV/TSV "
                                                        "with a query id column), e.g. an MTRAG tasks file or "
                                                        "query rewrites with their standalone class.")] = None,
    domain: Annotated[str | None, typer.Option("--domain", help="Domain of queries whose run line has no "
                                               "Collection (TREC runs).")] = None,
    ignore_missing: Annotated[bool, typer.Option("--ignore-missing", metavar="", help="Leave out judged queries the run has "
                                                 "no line for, instead of scoring them zero.")] = False,
    alpha: Annotated[float, typer.Option("--alpha", min=0.0, max=1.0, help="Significance level for --compare.")]
    = 0.05,
) -> None:
    """R, nDCG, P, MRR, MAP and hit at k over the queries that have qrels, with breakdowns."""
    from rich.console import Console
    from ragjudge.engine.render import print_summary
    from ragjudge.formats.files import output_file
    from ragjudge.formats.runs import read_qrels
    from ragjudge.formats.sample_runs import is_sample_log, qrels_from_samples, read_any_run
    from ragjudge.retrieval_eval import evaluate_run, parse_cutoffs, parse_metrics, read_labels, resolve_dimensions
    from ragjudge.retrieval_eval.breakdowns import BUILTIN

    fmt = common.check_format(fmt)
    metric_names = parse_metrics(metrics, parse_cutoffs(cutoffs))
    if per_query:
        output_file(per_query, "per-query file (--per-query)")
    the_run = read_any_run(run)
    if not qrels:
        if not is_sample_log(run):
            raise UsageError("--qrels is required for a run file (a ragjudge run folder brings its own)")
        merged = qrels_from_samples(run)
    else:
        merged = read_qrels(qrels[0])
        for path in qrels[1:]:
            merged = merged.merge(read_qrels(path))
    labels = read_labels(breakdown_file) if breakdown_file else None
    dims = resolve_dimensions(by, labels)
    unknown = [d for d in dims if d not in BUILTIN and labels is None]
    if unknown:
        raise UsageError(f"--by {unknown[0]}: not a built-in breakdown ({', '.join(BUILTIN)}); labels of your own "
                         "need --breakdown-file")
    other = read_any_run(compare) if compare else None
    if other is not None and other.name == the_run.name:
        other.name = f"{other.name} (2)"
    report = evaluate_run(the_run, merged, metrics=metric_names, dims=dims, labels=labels, default_domain=domain,
                          ignore_missing=ignore_missing, compare=other, alpha=alpha)
    if per_query:
        _write_per_query(per_query, report.per_query())
    if fmt == "json":
        print(json.dumps(report.summary.to_dict(), indent=2, ensure_ascii=False))
        return
    print_summary(report.summary, Console())


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

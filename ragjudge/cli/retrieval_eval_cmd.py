"""`ragjudge retrieval-eval`: score a retrieval run (MTRAG or TREC) against qrels (BEIR or TREC); built on
`ragjudge.api.retrieval_eval`, this module only parses the flags and prints the report."""

from pathlib import Path
from typing import Annotated

import typer

from ragjudge.cli import common


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
    from ragjudge.api import evaluate_retrieval
    from ragjudge.engine.bench_options import CLI
    from ragjudge.engine.render import show_summary

    fmt = common.check_format(fmt)
    report = evaluate_retrieval(run, qrels=qrels, metrics=metrics, cutoffs=cutoffs, per_query=per_query, compare=compare,
                            by=by, breakdown_file=breakdown_file, domain=domain, ignore_missing=ignore_missing,
                            alpha=alpha, spelling=CLI)
    show_summary(report.summary, fmt)

"""The retrieval benches' summary: each query file's run scored as `ragjudge retrieval-eval` scores it (the same
function, over the whole qrels: a judged query missing from the run counts zero), the primary file's figures at the
top level, every file's in the `queries` breakdown (the paper's Table 3 layout), and by turn and standalone."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragjudge.bench.mtrag.retrieval.data import KIND_NAMES, QUERIES, RetrievalData, RetrievalQuery, collection_of
from ragjudge.bench.mtrag.retrieval.scorers import METRICS
from ragjudge.bench.mtrag.retrieval.solver import ranking
from ragjudge.engine.bench import SampleResult
from ragjudge.engine.summary import Breakdown, Group, Reference, Stat, Summary
from ragjudge.formats.runs import Run

SHOWN = ["R@5", "R@10", "nDCG@5", "nDCG@10"]
"""The paper's headline cut-offs, shown in tables; summary.json and the samples have all of METRICS."""
PRIMARY = ("rewrite", "lastturn", "questions")
"""Whose figures are the summary's top-level metrics when several query files ran: the paper's headline setting
first (every query file's are in the "queries" breakdown)."""
SPLITS = {"turn": ("By turn (ours)", "queries, turn"),
          "standalone": ("Standalone vs non-standalone (ours)", "queries, standalone")}


def runs(results: Sequence[SampleResult[RetrievalQuery]], data: RetrievalData, pipeline: str, domain: str
         ) -> dict[str, Run]:
    """One run per query file, as its run file (`<kind>.jsonl`) writes it."""
    out: dict[str, Run] = {}
    for r in results:
        kind = r.sample.kind
        run = out.setdefault(kind, Run(name=f"{pipeline}-{kind}", source=str(data.files.get(kind))))
        run.add(r.sample.query_id, ranking(r.output), collection=collection_of(r.sample, domain))
    return out


def evaluate(results: Sequence[SampleResult[RetrievalQuery]], data: RetrievalData, pipeline: str, domain: str
             ) -> dict[str, Summary]:
    """Query kind -> its run's retrieval-eval summary."""
    from ragjudge.retrieval_eval import evaluate_run

    return {kind: evaluate_run(run, data.qrels, metrics=METRICS, dims=data.dims, labels=data.labels).summary
            for kind, run in runs(results, data, pipeline, domain).items()}


def summary_parts(reports: dict[str, Summary], *, domain: str, pipeline: str, table_title: str,
                  reference: list[Reference]) -> dict[str, Any]:
    """The keyword arguments of `Bench.summary`, from each query file's retrieval-eval summary."""
    primary = next(k for k in PRIMARY if k in reports)
    by_kind = {KIND_NAMES[kind]: Group(n=rep.n_samples, metrics={
        name: Stat(value=m.value, n=m.n, errors=m.errors) for name, m in rep.metrics.items()})
        for kind, rep in reports.items()}
    breakdowns = {QUERIES: Breakdown(title=f"{table_title}, {domain} (ours)", label=QUERIES, groups=by_kind,
                                     columns=SHOWN)}
    for dim, (title, label) in SPLITS.items():
        if all(dim in rep.breakdowns for rep in reports.values()):
            groups = {f"{KIND_NAMES[kind]}, {group}": stats for kind, rep in reports.items()
                      for group, stats in rep.breakdowns[dim].groups.items()}
            if groups:
                breakdowns[dim] = Breakdown(title=title, label=label, groups=groups, columns=["R@5", "nDCG@10"])
    top = reports[primary]
    return {"metrics": dict(top.metrics), "breakdowns": breakdowns, "reference": reference,
            "title": f"{pipeline} on {domain}, {KIND_NAMES[primary]}: {top.n_samples} queries",
            "headline": top.headline.model_copy(update={"text": f"{top.headline.text} ({KIND_NAMES[primary]})"})
            if top.headline else None,
            "details": {"domain": domain, "pipeline": pipeline, "primary": primary,
                        "by_queries": {kind: rep.to_dict() for kind, rep in reports.items()}}}


def rows(results: Sequence[SampleResult[RetrievalQuery]], domain: str) -> list[dict[str, Any]]:
    """The tidy per-query table: the query, its kind and what the solver added, and its figures."""
    return [{"task_id": r.sample.query_id, "queries": r.sample.kind, "query": r.sample.text,
             "Collection": collection_of(r.sample, domain),
             **{k: v for k, v in r.output.items() if k not in ("contexts", "error")},
             **((r.scores.get("ranking") or {}).get("metrics") or {})} for r in results]

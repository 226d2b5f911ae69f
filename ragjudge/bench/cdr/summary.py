"""A CDR run's summary: the metrics (means over the ranked queries), the times, the units, the per-category
breakdown, the paper's tables as `reference`, and the bench's own tables (this run's data beside the paper's
Table 2, the task categories' shares, the comparison with another run when asked)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragjudge.bench.cdr import paper
from ragjudge.bench.cdr.compare import OtherRun, compare
from ragjudge.bench.cdr.data import CdrData, CdrQuery
from ragjudge.bench.cdr.metrics import HEADLINE, METRICS, by_category, means
from ragjudge.bench.cdr.paper import TABLE_2
from ragjudge.bench.cdr.solver import SearchFacts
from ragjudge.bench.cdr.trec import conversation_run
from ragjudge.bench.cdr.truncation import describe
from ragjudge.bench.cdr.units import UnitSpec, UnitTable
from ragjudge.engine.bench import SampleResult, failed
from ragjudge.engine.summary import Breakdown, Group, Metric, MetricCatalog, Reference, Table, headline_of, stat

CATEGORY_COLUMNS = ("nDCG@10", "R@10", "P@10")
"""What the category breakdown shows (Table 12's columns); summary.json has every metric."""


@dataclass(frozen=True)
class CdrRun:
    """What a summary is made from besides the results: the data, the units, the pipeline, what the solver learnt."""

    data: CdrData
    table: UnitTable
    unit: UnitSpec
    pipeline: str
    search: SearchFacts
    other: OtherRun | None


def summary_parts(results: Sequence[SampleResult[CdrQuery]], run: CdrRun, catalog: MetricCatalog
                  ) -> dict[str, Any]:
    """The keyword arguments of `Bench.summary` for this run."""
    scored = {r.sample.id: r.scores["metrics"]["metrics"] for r in results if not r.errors}
    failures = len(results) - len(scored)
    overall = means(list(scored.values()))
    metrics: dict[str, Metric] = {m: catalog.metric(m, overall[m], n=len(scored), errors=failures)
                                  for m in METRICS}
    timing = timing_of(results, run.search)
    metrics["ingestion_s"] = catalog.metric("ingestion_s", timing["ingestion_s"], index_reused=timing["index_reused"])
    metrics["inference_s"] = catalog.metric("inference_s", timing["inference_s"], n=timing["queries"])
    units = run.table.stats()
    metrics["units"] = catalog.metric("units", units["units"], unit=units["unit"])
    known = [t for t in run.search.truncation if t["max_tokens"] is not None]
    for t in known:  # one encoder (the usual case): `truncated_units`; several: one count each
        name = "truncated_units" if len(known) == 1 else f"truncated_units[{t['encoder']}]"
        metrics[name] = catalog.metric(name, t["truncated"], n=t["units"], encoder=t["encoder"],
                                       max_tokens=t["max_tokens"], longest=t["longest"])
    breakdowns: dict[str, Breakdown] = {}
    tables: list[Table] = [facts(run.data.stats, units)]
    if run.data.category_file is not None:
        groups = by_category(scored, {q.id: q.category for q in run.data.queries})
        breakdowns["category"] = Breakdown(
            title="By task category", label="category", columns=list(CATEGORY_COLUMNS),
            groups={g: Group(n=v["n"], metrics={m: stat(v[m], n=v["n"]) for m in METRICS}) for g, v in groups.items()},
            note="queries without a category form the group 'unknown'" if "unknown" in groups else "")
        tables.append(category_shares({g: v["n"] for g, v in groups.items()}))
    details: dict[str, Any] = {"pipeline": run.pipeline, "unit": run.unit.label, "timing": timing,
                               "data": run.data.stats, "units": units, "truncation": run.search.truncation,
                               "paper": paper.full_tables(paper.setting_of(run.unit), run.data.category_file is not None)}
    if run.other is not None:
        details["comparison"] = compare(conversation_run(results, run.pipeline, run.unit), run.other,
                                        [r.sample for r in results])
        tables.append(comparison(details["comparison"]))
    notes = list(paper.NOTES)
    if timing["index_reused"]:
        notes.insert(0, "the index was reused: ingestion_s is the time it took to build it")
    warnings = [f"warning: {w}" for w in run.data.warnings]
    warnings += [f"note: {describe(t)}" for t in run.search.truncation if t.get("truncated")]
    return {"metrics": metrics, "breakdowns": breakdowns, "tables": tables, "reference": references(run),
            "notes": notes, "warnings": warnings, "details": details,
            "title": f"cdr: {len(results)} queries, pipeline {run.pipeline}, unit {run.unit.label}",
            "headline": headline_of(metrics, (HEADLINE,), "queries", also=("R@10", "P@10"))}


def timing_of(results: Sequence[SampleResult[CdrQuery]], search: SearchFacts) -> dict[str, Any]:
    assert search.index is not None, "the solver opened no index"
    outputs = [r.output for r in results if not failed(r.output)]
    return {"index_reused": search.index.reused, "ingestion_s": search.index.build_seconds,
            "index_open_s": round(search.index.seconds, 3),
            "inference_s": round(sum(o.get("seconds", 0.0) for o in outputs), 3), "queries": len(outputs),
            "queries_searched_now": search.searched_now, "search_s_now": round(search.search_seconds_now, 3)}


def references(run: CdrRun) -> list[Reference]:
    """The paper's table for the setting this unit reproduces (Table 3 for other units), and Table 12 when queries
    have categories."""
    setting = paper.setting_of(run.unit)
    tables = [paper.setting_table(setting) if setting else paper.overview_table()]
    if run.data.category_file is not None:
        tables.append(paper.category_table())
    return tables


def facts(data: Mapping[str, Any], units: Mapping[str, Any]) -> Table:
    """The data and units of this run beside Table 2's statistics."""
    d, u, p = data, units, TABLE_2
    rows: list[list[Any]] = [
        ["conversations / queries evaluated", f"{d['conversations']:,} / {d['evaluated_queries']:,}",
         f"{p['conversations']:,} / {p['queries']:,}"],
        ["messages per conversation", f"{d.get('messages_per_conversation', 0):.2f}",
         f"{p['messages_per_conversation']:.1f}"],
        ["relevant per query (unique)", f"{d['relevant_per_query']:.2f}", f"{p['relevant_per_query']:.2f}"],
        ["relevant pairs: unique / listed", f"{d['unique_pairs']:,} / {d['raw_pairs']:,}", f"{p['pairs']:,}"],
        [f"units ({u['unit']})", f"{u['units']:,} ({u['units_per_conversation']:g} per conv.)", ""],
    ]
    if d.get("queries_without_relevant"):
        rows.append(["queries left out (none relevant)", f"{d['queries_without_relevant']:,}", ""])
    if u.get("conversations_without_units"):
        rows.append(["conversations without a unit", f"{u['conversations_without_units']:,}", ""])
    notes = ["conversations without a unit are never retrieved"] if u.get("conversations_without_units") else []
    return Table(title="Data", columns=["", "this run", "paper (Table 2)"], rows=rows, notes=notes)


def category_shares(groups: Mapping[str, int]) -> Table:
    """Queries per task category beside Table 2's shares (the figures per category are the breakdown)."""
    total = sum(groups.values()) or 1
    share = TABLE_2["category_share"]
    rows = [[name, n, f"{n / total:.1%}", f"{share[name]:.1%}" if name in share else "-"] for name, n in groups.items()]
    return Table(title="Task categories", columns=["category", "queries", "share", "paper share (Table 2)"],
                 rows=rows)


def comparison(c: Mapping[str, Any]) -> Table:
    rows = []
    for metric, m in c["metrics"].items():
        p = m["p_value"]
        rows.append([metric, m["a"], m["b"], f"{m['diff']:+.3f}", "-" if p is None else f"{p:.3g}",
                     m["significant"]])
    title = (f"this run (A) vs {c['label']} (B): {c['test']}, {c['n_queries']} queries"
             + (f" ({c['left_out']} not in both runs)" if c["left_out"] else ""))
    return Table(title=title, columns=["metric", "A", "B", "B - A", "p", f"p < {c['alpha']:g}"], rows=rows,
                 notes=[f"B is {c['run']}; each metric tested on its own, no correction for testing several"])

"""What `ragjudge eval --bench cdr` prints: the metric grid, categories, run facts, the paper's figures
(compact: summary.json has every column) and a comparison when asked. Tables are built from summary.json
alone, so a saved summary prints the same."""

from __future__ import annotations

from typing import Any

from ragjudge.bench.cdr.data import CATEGORIES
from ragjudge.bench.cdr.metrics import CUTOFFS, FAMILIES, paper_name
from ragjudge.bench.cdr.paper import TABLE_2
from ragjudge.engine.render import Table

FAMILY_LABELS = {"hit_rate": "ACC (hit rate)", "precision": "P", "recall": "R", "ndcg": "nDCG", "mrr": "MRR"}
CATEGORY_COLUMNS = ("ndcg@10", "recall@10", "precision@10", "hit_rate@10", "mrr@10")
PAPER_COLUMNS = ("ACC@1", "ACC@10", "P@10", "R@10", "NDCG@10", "MRR@10", "ingestion s", "inference s")


def metric_grid(summary: dict[str, Any]) -> Table:
    metrics = summary["metrics"]
    title = (f"cdr: {summary['n_scored']} queries, pipeline {summary['pipeline']}, unit {summary['unit']}"
             + (f" ({summary['errors']} failed)" if summary.get("errors") else ""))
    rows = [[FAMILY_LABELS[f], *(metrics.get(f"{f}@{k}") for k in CUTOFFS)] for f in FAMILIES]
    return Table(title, ["metric", *(f"@{k}" for k in CUTOFFS)], rows)


def category_grid(summary: dict[str, Any]) -> Table | None:
    groups = (summary.get("breakdowns") or {}).get("category")
    if not groups:
        return None
    total = sum(g["n"] for g in groups.values())
    share = TABLE_2["category_share"]
    rows = [[name, g["n"], f"{g['n'] / total:.1%}", f"{share[name]:.1%}" if name in share else "-",
             *(g.get(m) for m in CATEGORY_COLUMNS)] for name, g in groups.items()]
    return Table("By task category", ["category", "n", "share", "paper share", *(paper_name(m) for m in
                                                                              CATEGORY_COLUMNS)], rows)


def facts(summary: dict[str, Any]) -> Table:
    t, u, d = summary["timing"], summary["units"], summary["data"]
    p = TABLE_2
    rows: list[list[Any]] = [
        ["conversations / evaluated queries", f"{d['conversations']:,} / {d['evaluated_queries']:,}",
         f"{p['conversations']:,} / {p['queries']:,}"],
        ["messages per conversation", f"{d.get('messages_per_conversation', 0):.2f}",
         f"{p['messages_per_conversation']:.1f}"],
        ["relevant conversations per query (unique)", f"{d['relevant_per_query']:.2f}",
         f"{p['relevant_per_query']:.2f}"],
        ["relevant pairs (unique / listed / duplicates)",
         f"{d['unique_pairs']:,} / {d['raw_pairs']:,} / {d['duplicate_pairs']:,}", f"{p['pairs']:,}"],
        [f"units ({u['unit']})", f"{u['units']:,} ({u['units_per_conversation']} per conversation)", ""],
        ["ingestion (index build)", _seconds(t["ingestion_s"]) + (" (index reused)" if t["index_reused"] else ""),
         ""],
        ["inference (search + ranking)", f"{_seconds(t['inference_s'])} for {t['queries']:,} queries", ""],
    ]
    if d.get("queries_without_relevant"):
        rows.append(["queries without a relevant conversation (left out)", d["queries_without_relevant"], ""])
    if u.get("conversations_without_units"):
        rows.append(["conversations without a unit (never retrieved)", u["conversations_without_units"], ""])
    for trunc in summary.get("truncation") or []:
        limit = trunc["max_tokens"]
        value = ("unknown limit" if limit is None
                 else f"{trunc['truncated']:,} of {trunc['units']:,} over {limit} tokens")
        rows.append([f"truncated units ({trunc['encoder']})", value, ""])
    return Table("Data and run", ["", "this run", "paper (Table 2)"], rows)


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f} s"


def paper_tables(summary: dict[str, Any]) -> list[Table]:
    tables = []
    notes = [f"note: {n}" for n in summary.get("paper_notes") or []]
    for i, ref in enumerate(summary.get("reference") or []):
        columns = ref["columns"]
        if "Table 12" in ref["title"]:
            keep = ["model", *(f"{c} NDCG@10" for c in CATEGORIES)]
            header = ["model (nDCG@10)", *CATEGORIES]
        elif "Table 3" in ref["title"]:
            keep = ["model", "turn NDCG@10", "window NDCG@10", "session NDCG@10", "ingestion_s", "inference_s"]
            header = ["model", "turn nDCG@10", "window nDCG@10", "session nDCG@10", "ingestion s", "inference s"]
        else:
            keep = ["model", *PAPER_COLUMNS]
            header = [c.replace("NDCG", "nDCG") for c in keep]
        idx = [columns.index(c) for c in keep]
        rows = [[_paper_value(columns[j], row[j]) for j in idx] for row in ref["rows"]]
        tables.append(Table(ref["title"], header, rows, notes if i == len(summary["reference"]) - 1 else []))
    return tables


def _paper_value(column: str, value: Any) -> Any:
    """As the paper prints them: metrics to 4 decimals, seconds to 2."""
    if not isinstance(value, float):
        return value
    return f"{value:,.2f}" if column.endswith(("_s", " s")) else f"{value:.4f}"


def comparison(summary: dict[str, Any]) -> Table | None:
    c = summary.get("comparison")
    if not c:
        return None
    rows = []
    for metric, m in c["metrics"].items():
        p = m["p_value"]
        rows.append([paper_name(metric), m["a"], m["b"], f"{m['diff']:+.3f}", "-" if p is None else f"{p:.3g}",
                     m["significant"]])
    title = (f"this run (A) vs {c['label']} (B): {c['test']}, {c['n_queries']} queries"
             + (f" ({c['left_out']} not in both runs)" if c["left_out"] else ""))
    return Table(title, ["metric", "A", "B", "B - A", "p", f"p < {c['alpha']:g}"], rows)


def tables(summary: dict[str, Any]) -> list[Table]:
    out = [metric_grid(summary)]
    out += [t for t in (category_grid(summary), comparison(summary)) if t is not None]
    out.append(facts(summary))
    out += paper_tables(summary)
    return out


"""The bench's own tables in a CDR summary (`ragjudge.engine.summary.Table`): this run's data beside the
paper's Table 2, the task categories' shares, and the comparison with another run when asked. The metrics,
the per-category figures (a breakdown) and the paper's tables (`reference`) are the summary's own parts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragjudge.bench.cdr.paper import TABLE_2
from ragjudge.engine.summary import Table


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

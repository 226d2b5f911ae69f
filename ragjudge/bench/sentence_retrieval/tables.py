"""The tables of a sentence-retrieval summary: every system as the paper prints it (`.238 ± .007`), MAP by dialogue
type (the paper's Table 4), the parameters picked on the validation halves and the permutation tests."""

from __future__ import annotations

import math
from typing import Any

from ragjudge.bench.sentence_retrieval.data import TYPES
from ragjudge.bench.sentence_retrieval.metrics import METRICS
from ragjudge.bench.sentence_retrieval.paper import fmt_cell
from ragjudge.engine.summary import Table


def p_text(p: float, permutations: int) -> str:
    digits = max(3, math.ceil(math.log10(permutations + 1)))
    return f"{p:.{digits}f}"


def _cell(stats: dict[str, Any]) -> str:
    return "-" if stats["value"] is None else fmt_cell(stats["value"], stats.get("std"))


def how_scored(n_splits: int, tuned_on: str) -> str:
    return (f"mean ± std over {n_splits} test halves, parameters tuned by {tuned_on} on each validation half"
            if n_splits else "all dialogues at once (-T no_splits=true): parameters tuned on the scored data")


def main_table(systems: dict[str, Any], n_dialogues: int, n_splits: int, tuned_on: str) -> Table:
    """Every system as the paper prints it (`.238 ± .007`), with what it is and the parameters it was picked."""
    rows = []
    for name, entry in systems.items():
        picked = "-" if len(entry["settings"]) == 1 else \
            f"{entry['modal_pick']} ({entry['picks'][entry['modal_pick']]}/{max(n_splits, 1)})"
        rows.append([name, *(_cell(entry["metrics"][m]) for m in METRICS), entry["reranker"],
                     ", ".join(entry["queries"]) or "-", len(entry["settings"]), picked])
    return Table(title=f"Every system, {n_dialogues} dialogues: {how_scored(n_splits, tuned_on)}",
                 columns=["system", *METRICS, "reranker", "query", "settings", "most picked"], rows=rows)


def type_table(systems: dict[str, Any]) -> Table:
    rows = [[name, *(_cell(entry["by_type"][t]["MAP"]) if t in entry["by_type"] else "-" for t in TYPES)]
            for name, entry in systems.items()]
    return Table(title="MAP by dialogue type, every system (the paper's Table 4)", columns=["system", *TYPES],
                 rows=rows)


def picks_table(systems: dict[str, Any]) -> Table:
    rows = [[name, key, count] for name, entry in systems.items() if len(entry["settings"]) > 1
            for key, count in entry["picks"].items()]
    return Table(title="Parameters picked on the validation halves", columns=["system", "setting", "splits"],
                 rows=rows)


def significance_table(sig: dict[str, Any]) -> Table | None:
    """Every pair of systems on every metric; None when there is no pair (one system)."""
    units = [u for u in ("splits", "dialogues") if u in sig and sig[u]["tests"]]
    if not units:
        return None
    perms = sig["permutations"]
    index = {u: {(t["a"], t["b"], t["metric"]): t for t in sig[u]["tests"]} for u in units}
    keys = list(index[units[0]])
    columns = ["systems", "metric", "diff", *(c for u in units for c in (f"p ({u})", "Bonferroni", "Holm"))]
    rows = []
    for key in keys:
        row: list[Any] = [f"{key[0]} vs {key[1]}", key[2], f"{index[units[0]][key]['diff']:+.3f}"]
        for u in units:
            t = index[u][key]
            star = " *" if t["significant"] else ""
            row += [p_text(t["p"], perms), p_text(t["p_bonferroni"], perms) + star, p_text(t["p_holm"], perms)]
        rows.append(row)
    sizes = "; ".join(f"{u}: n = {sig[u]['n']}, {sig[u]['n_hypotheses']} hypotheses" for u in units)
    return Table(title=f"Two-tailed paired permutation tests ({perms:,} permutations, seed {sig['seed']})",
                 columns=columns, rows=rows,
                 notes=[f"{sizes}. * = significant at p <= {sig['alpha']} after Bonferroni. The paper tests over "
                        "the split figures; the 50 test halves overlap, so that test overstates significance — the "
                        "test over dialogues (each dialogue's mean over the test halves that hold it) does not."])

"""From per-dialogue scores to the summary: tuning and testing over the splits, significance, and the tables
printed beside the paper's."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from ragjudge.bench.sentence_retrieval import protocol, reference
from ragjudge.bench.sentence_retrieval.metrics import METRICS
from ragjudge.bench.sentence_retrieval.significance import (
    bonferroni,
    holm,
    paired_permutation_test,
)

TYPES = ("ungrounded", "grounded")


@dataclass
class Scored:
    """One system's per-dialogue scores over its grid, for the dialogues every system scored."""

    name: str
    settings: list[str]
    scores: np.ndarray
    """(settings, dialogues, metrics)."""
    outcome: protocol.SystemOutcome | None = None

    @property
    def modal_pick(self) -> int:
        """The setting picked on most validation halves (first in grid order on a tie)."""
        assert self.outcome is not None
        counts = np.bincount(self.outcome.picks, minlength=len(self.settings))
        return int(counts.argmax())


def p_text(p: float, permutations: int) -> str:
    digits = max(3, math.ceil(math.log10(permutations + 1)))
    return f"{p:.{digits}f}"


def significance(scored: Sequence[Scored], unit: str, values: dict[str, np.ndarray], *, permutations: int,
                 seed: int, alpha: float) -> dict[str, Any]:
    """Every pair of systems on every metric, tested together as one family (its size is recorded)."""
    pairs = list(combinations([s.name for s in scored], 2))
    tests = [(a, b, m) for a, b in pairs for m in range(len(METRICS))]
    if not tests:
        return {"unit": unit, "n_hypotheses": 0, "tests": []}
    a = np.stack([values[t[0]][:, t[2]] for t in tests], axis=1)
    b = np.stack([values[t[1]][:, t[2]] for t in tests], axis=1)
    p = np.atleast_1d(paired_permutation_test(a, b, permutations=permutations, seed=seed))
    p_bonf, p_holm = bonferroni(p), holm(p)
    rows = [{"a": x, "b": y, "metric": METRICS[m], "diff": float(a[:, i].mean() - b[:, i].mean()),
             "p": float(p[i]), "p_bonferroni": float(p_bonf[i]), "p_holm": float(p_holm[i]),
             "significant": bool(p_bonf[i] <= alpha)} for i, (x, y, m) in enumerate(tests)]
    return {"unit": unit, "n": len(a), "n_hypotheses": len(tests), "tests": rows}


def summarize_systems(scored: list[Scored], masks: protocol.SplitMasks, types: np.ndarray, *, tune_on: str,
                      permutations: int, seed: int, alpha: float, with_splits: bool) -> dict[str, Any]:
    tune = METRICS.index(tune_on)
    systems: dict[str, Any] = {}
    for s in scored:
        s.outcome = protocol.evaluate(s.scores, masks, types, tune)
        o = s.outcome
        entry: dict[str, Any] = {"settings": s.settings, "metrics": {}, "by_type": {}}
        for m, metric in enumerate(METRICS):
            mean, std = protocol.mean_std(o.test[:, m])
            entry["metrics"][metric] = {"mean": mean, "std": std, "per_split": o.test[:, m].tolist()}
        for t, values in o.by_type.items():
            entry["by_type"][t] = {metric: dict(zip(("mean", "std"), protocol.mean_std(values[:, m]), strict=True))
                                   for m, metric in enumerate(METRICS)}
        counts = Counter(s.settings[i] for i in o.picks)
        entry["picks"] = dict(counts.most_common())
        entry["modal_pick"] = s.settings[s.modal_pick]
        systems[s.name] = entry
    tests: dict[str, Any] = {}
    if with_splits and masks.test.shape[0] > 1:
        tests["splits"] = significance(scored, "splits", {s.name: s.outcome.test for s in scored if s.outcome},
                                       permutations=permutations, seed=seed, alpha=alpha)
    per_dialogue = {s.name: s.outcome.per_dialogue for s in scored if s.outcome}
    covered = np.all([~np.isnan(v[:, 0]) for v in per_dialogue.values()], axis=0) if per_dialogue else np.zeros(0)
    if covered.any():
        tests["dialogues"] = significance(scored, "dialogues", {k: v[covered] for k, v in per_dialogue.items()},
                                          permutations=permutations, seed=seed, alpha=alpha)
    return {"systems": systems, "significance": {"permutations": permutations, "seed": seed, "alpha": alpha,
                                                 "family": "every pair of systems x (MAP, NDCG@5, MRR), per unit",
                                                 **tests}}


# ------------------------------------------------------------------------------------------------ tables

def _cell(stats: dict[str, Any]) -> str:
    return reference.fmt_cell(stats["mean"], stats.get("std"))


def main_table(summary: dict[str, Any], describe: dict[str, dict[str, Any]]) -> dict[str, Any]:
    n = summary["protocol"]["n_splits"]
    how = (f"mean ± std over {n} test halves, parameters tuned by {summary['protocol']['tuned_on']} on each "
           f"validation half") if n else "all dialogues at once (-T no_splits=true): parameters tuned on the scored data"
    rows = []
    for name, entry in summary["systems"].items():
        d = describe[name]
        picked = "-" if len(entry["settings"]) == 1 else \
            f"{entry['modal_pick']} ({entry['picks'][entry['modal_pick']]}/{max(n, 1)})"
        rows.append([name, *(_cell(entry["metrics"][m]) for m in METRICS), d["reranker"], ", ".join(d["queries"]) or "-",
                     len(entry["settings"]), picked])
    return {"title": f"sentence-retrieval: {summary['n_dialogues']['scored']} dialogues; {how}",
            "columns": ["system", *METRICS, "reranker", "query", "settings", "most picked"], "rows": rows}


def type_table(summary: dict[str, Any]) -> dict[str, Any]:
    rows = [[name, *(_cell(entry["by_type"][t]["MAP"]) if t in entry["by_type"] else "-" for t in TYPES)]
            for name, entry in summary["systems"].items()]
    return {"title": "MAP by dialogue type (the paper's Table 4)", "columns": ["system", *TYPES], "rows": rows}


def picks_table(summary: dict[str, Any]) -> dict[str, Any]:
    rows = []
    for name, entry in summary["systems"].items():
        if len(entry["settings"]) > 1:
            rows += [[name, key, count] for key, count in entry["picks"].items()]
    return {"title": "Parameters picked on the validation halves", "columns": ["system", "setting", "splits"],
            "rows": rows}


def significance_table(summary: dict[str, Any]) -> dict[str, Any]:
    sig = summary["significance"]
    units = [u for u in ("splits", "dialogues") if u in sig]
    perms = sig["permutations"]
    index = {u: {(t["a"], t["b"], t["metric"]): t for t in sig[u]["tests"]} for u in units}
    keys = list(index[units[0]]) if units else []
    columns = ["systems", "metric", "diff"]
    for u in units:
        columns += [f"p ({u})", "Bonferroni", "Holm"]
    rows = []
    for key in keys:
        row: list[Any] = [f"{key[0]} vs {key[1]}", key[2], f"{index[units[0]][key]['diff']:+.3f}"]
        for u in units:
            t = index[u][key]
            star = " *" if t["significant"] else ""
            row += [p_text(t["p"], perms), p_text(t["p_bonferroni"], perms) + star, p_text(t["p_holm"], perms)]
        rows.append(row)
    sizes = "; ".join(f"{u}: n = {sig[u]['n']}, {sig[u]['n_hypotheses']} hypotheses" for u in units)
    return {"title": f"Two-tailed paired permutation tests ({perms:,} permutations, seed {sig['seed']})",
            "columns": columns, "rows": rows,
            "notes": [f"{sizes}. * = significant at p <= {sig['alpha']} after Bonferroni. The paper tests over "
                      "the split figures; the 50 test halves overlap, so that test overstates significance — the "
                      "test over dialogues (each dialogue's mean over the test halves that hold it) does not."]}


def flat_metrics(summary: dict[str, Any]) -> dict[str, Any]:
    n = summary["protocol"]["n_splits"] or 1
    return {f"{name}/{metric}": {"mean": stats["mean"], "std": stats["std"], "n": n}
            for name, entry in summary["systems"].items() for metric, stats in entry["metrics"].items()}

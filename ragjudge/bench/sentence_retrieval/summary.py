"""The run's `Summary` from its evaluation (`evaluation.py`); what it holds: docs/benches/sentence-retrieval.md.

Every system's figures are the `system` breakdown and the top-level metrics are the best system's, not `system/MAP`
names: a breakdown's metrics must be top-level metrics, and every reader (terminal, charts, report, scripts) would
otherwise need this bench's naming to find "the" MAP.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ragjudge.bench.sentence_retrieval import paper, protocol, tables
from ragjudge.bench.sentence_retrieval.data import TYPES, Dialogue, Split
from ragjudge.bench.sentence_retrieval.evaluation import Evaluation, Protocol
from ragjudge.bench.sentence_retrieval.metrics import METRICS
from ragjudge.bench.sentence_retrieval.significance import compare_every_pair
from ragjudge.engine.bench import Bench, SampleResult
from ragjudge.engine.summary import Breakdown, Group, Headline, Metric, Summary, describe, stat


def summarize(bench: Bench[Any, Dialogue], results: Sequence[SampleResult[Dialogue]], evaluation: Evaluation | None,
              descriptions: Mapping[str, dict[str, Any]], plan: Protocol, *, permutations: int, seed: int,
              alpha: float) -> Summary:
    """`bench` gives the metric catalog and the summary's defaults; `descriptions`: each system's `describe()`."""
    ok = evaluation.ok if evaluation is not None else []
    dialogues = [r.sample for r in ok]
    excluded = len(results) - len(ok)
    counts = {t: sum(d.type == t for d in dialogues) for t in TYPES}
    details: dict[str, Any] = {"n_dialogues": {"scored": len(ok), "excluded": excluded, **counts},
                               "labels": label_facts([r.sample for r in results]), **(facts := query_facts(ok))}
    warnings = run_warnings(facts, excluded)
    catalog = bench.catalog
    if evaluation is None:
        metrics = {m: catalog.metric(m, None, n=0, errors=excluded) for m in METRICS}
        return bench.summary(results, metrics, warnings=warnings, details=details, notes=[
            "no dialogue was scored by every system: see the errors in results.csv", *label_note(details)])
    systems = system_entries(evaluation, descriptions)
    best, n_splits = evaluation.best, evaluation.n_splits
    details["protocol"] = {"n_splits": n_splits, "splits_file": plan.source, "tuned_on": plan.tune_on,
                           "split_ids_not_scored": evaluation.masks.dropped,
                           "unbalanced_splits": unbalanced(plan.splits, dialogues),
                           "std": "sample standard deviation (ddof=1) over the test halves"}
    details.update({"best_system": best, "best_by": "MAP", "systems": systems,
                    "significance": significance(evaluation, permutations=permutations, seed=seed, alpha=alpha)})
    metrics: dict[str, Metric] = {
        m: catalog.metric(m, systems[best]["metrics"][m]["value"], n=len(ok), errors=excluded,
                          std=systems[best]["metrics"][m]["std"], system=best, n_splits=n_splits)
        for m in METRICS}
    how = tables.how_scored(n_splits, plan.tune_on)
    breakdowns = {"system": system_breakdown(systems, len(ok), how),
                  "type": type_breakdown(systems[best], counts, best)}
    shown = [tables.main_table(systems, len(ok), n_splits, plan.tune_on), tables.type_table(systems)]
    if any(len(e["settings"]) > 1 for e in systems.values()):
        shown.append(tables.picks_table(systems))
    if (tests := tables.significance_table(details["significance"])) is not None:
        shown.append(tests)
    shown.append(paper.data_table(dialogues))
    which = f"{best}, the best of {len(systems)} systems by MAP" if len(systems) > 1 else best
    spread = systems[best]["metrics"]["MAP"]["std"]
    text = describe("MAP", metrics["MAP"], bench.unit) + f" ({which}" + (
        f"; std {spread:.3f} over {n_splits} test halves)" if spread is not None else ")")
    return bench.summary(results, metrics, breakdowns=breakdowns, tables=shown, reference=paper.reference_tables(),
                         notes=notes(details, descriptions), warnings=warnings, details=details,
                         headline=Headline(metric="MAP", value=metrics["MAP"].value, text=text),
                         title=f"sentence-retrieval: {len(ok)} dialogues, {which}")


def system_entries(evaluation: Evaluation, descriptions: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    """Per system: its settings, MAP/nDCG@5/MRR over the splits (mean, std, each split's), the same by dialogue
    type, the settings picked on the validation halves, and what the system is."""
    systems: dict[str, Any] = {}
    for s in evaluation.scored:
        o = s.outcome
        entry: dict[str, Any] = {"settings": s.settings, "metrics": _figures(o.test, per_split=True),
                                 "by_type": {t: _figures(values) for t, values in o.by_type.items()}}
        entry["picks"] = dict(Counter(s.settings[i] for i in o.picks).most_common())
        entry["modal_pick"] = s.settings[s.modal_pick]
        entry.update(descriptions[s.name])
        systems[s.name] = entry
    return systems


def significance(evaluation: Evaluation, *, permutations: int, seed: int, alpha: float) -> dict[str, Any]:
    """Every pair of systems x metric, over the split figures (as the paper) and over dialogues (each dialogue's mean
    over the test halves that hold it, for the dialogues every system has one)."""
    names = [s.name for s in evaluation.scored]
    options = {"permutations": permutations, "seed": seed, "alpha": alpha}
    tests: dict[str, Any] = {}
    if evaluation.with_splits and evaluation.masks.test.shape[0] > 1:
        tests["splits"] = compare_every_pair(names, "splits", {s.name: s.outcome.test for s in evaluation.scored},
                                             **options)
    per_dialogue = {s.name: s.outcome.per_dialogue for s in evaluation.scored}
    covered = np.all([~np.isnan(v[:, 0]) for v in per_dialogue.values()], axis=0)
    if covered.any():
        tests["dialogues"] = compare_every_pair(names, "dialogues", {k: v[covered] for k, v in per_dialogue.items()},
                                                **options)
    return {**options, "family": "every pair of systems x (MAP, nDCG@5, MRR), per unit", **tests}


def _figures(values: np.ndarray, *, per_split: bool = False) -> dict[str, dict[str, Any]]:
    """MAP, nDCG@5 and MRR (the columns of `values`, a row per split): mean and std over the splits."""
    out = {}
    for m, metric in enumerate(METRICS):
        mean, std = protocol.mean_std(values[:, m])
        out[metric] = {"value": None if np.isnan(mean) else mean, "std": std}
        if per_split:
            out[metric]["per_split"] = values[:, m].tolist()
    return out


def _group(figures: dict[str, dict[str, Any]], n: int) -> Group:
    return Group(n=n, metrics={m: stat(figures[m]["value"], n=n, std=figures[m]["std"]) for m in METRICS})


def system_breakdown(systems: dict[str, Any], n_dialogues: int, how: str) -> Breakdown:
    """One group per system: MAP, nDCG@5 and MRR with their standard deviation over the splits."""
    groups = {name: _group(e["metrics"], n_dialogues) for name, e in systems.items()}
    return Breakdown(title="By system (the paper's Table 3)", label="system", groups=groups, columns=list(METRICS),
                     note=how)


def type_breakdown(entry: dict[str, Any], counts: dict[str, int], system: str) -> Breakdown:
    """The best system's figures on each dialogue type's dialogues of the test halves."""
    groups = {t: _group(entry["by_type"][t], counts[t]) for t in TYPES if t in entry["by_type"] and counts.get(t)}
    return Breakdown(title=f"By dialogue type ({system})", label="type", groups=groups, columns=list(METRICS),
                     note="every system's MAP by type is the table 'MAP by dialogue type'")


# ------------------------------------------------------------------------------------------------ facts and notes

def unbalanced(splits: Sequence[Split] | None, dialogues: Sequence[Dialogue]) -> int:
    """Splits whose halves differ by more than one dialogue of a type (the paper balances them)."""
    if not splits:
        return 0
    type_of = {d.id: d.type for d in dialogues}
    count = 0
    for split in splits:
        val = Counter(type_of[i] for i in split.val if i in type_of)
        test = Counter(type_of[i] for i in split.test if i in type_of)
        count += any(abs(val[t] - test[t]) > 1 for t in TYPES)
    return count


def query_facts(ok: Sequence[SampleResult[Dialogue]]) -> dict[str, Any]:
    """Empty queries per strategy, and how the LLM rewrites went."""
    empty: Counter[str] = Counter()
    rewrite: Counter[str] = Counter()
    for r in ok:
        for key, parts in r.output.get("queries", {}).items():
            empty[key] += not parts
        for info in r.output.get("rewrite", {}).values():
            rewrite["fallback" if info.get("fallback") else str(info.get("class", "rewritten"))] += 1
    facts: dict[str, Any] = {"empty_queries": {k: v for k, v in empty.items() if v}}
    if rewrite:
        facts["query_rewrite"] = dict(rewrite)
    return facts


def label_facts(dialogues: Sequence[Dialogue]) -> dict[str, Any]:
    """The candidates' labels as the dataset defines them (1 relevant, anything else not): how many of each, and the
    labels written as neither 0 nor 1 (read as non-relevant), by value as written."""
    other = Counter(label for d in dialogues for label in d.other_labels)
    return {"relevant": sum(d.n_relevant for d in dialogues),
            "non_relevant": sum(len(d.candidates) - d.n_relevant for d in dialogues),
            "other": sum(other.values()), "other_values": dict(sorted(other.items())),
            "other_dialogues": sum(1 for d in dialogues if d.other_labels)}


def label_note(details: dict[str, Any]) -> list[str]:
    labels = details["labels"]
    if not labels["other"]:
        return []
    values = ", ".join(f"{v} ({n})" for v, n in labels["other_values"].items())
    return [f"{labels['other']} candidate label(s) in {labels['other_dialogues']} dialogue(s) were neither 0 nor "
            f"1 ({values}): read as non-relevant, as the dataset defines labels (1 relevant, anything else not)"]


def notes(details: dict[str, Any], descriptions: Mapping[str, dict[str, Any]]) -> list[str]:
    found = label_note(details)
    lexical = [n for n, d in descriptions.items() if d["reranker"] in ("bm25", "lm")]
    if lexical:
        stats = {n: details["systems"][n]["options"].get("collection", "grid") for n in lexical}
        found.append("collection statistics: " + ", ".join(f"{n} {c}" for n, c in stats.items()) + " (the paper "
                     "used its Wikipedia sentence index, which is not public)")
    if details["empty_queries"]:
        found.append("dialogues with an empty query (their candidates keep the initial order): " +
                     ", ".join(f"{k} {v}" for k, v in details["empty_queries"].items()))
    if details["protocol"]["unbalanced_splits"]:
        found.append(f"{details['protocol']['unbalanced_splits']} split(s) do not balance ungrounded and grounded "
                     f"dialogues between their halves (the paper's do)")
    if details["protocol"]["split_ids_not_scored"]:
        found.append(f"{details['protocol']['split_ids_not_scored']} split id(s) were not scored (--limit or "
                     f"errors) and were left out of their halves")
    return found


def run_warnings(facts: dict[str, Any], excluded: int) -> list[str]:
    out = []
    fallbacks = facts.get("query_rewrite", {}).get("fallback", 0)
    if fallbacks:
        out.append(f"warning: {fallbacks} rewrite(s) fell back to the last turn (see 'rewrite' in samples.jsonl)")
    if excluded:
        out.append(f"warning: {excluded} dialogue(s) had errors and were left out of every system's figures")
    return out

"""Multi-turn retrieval scores (the paper's Table 8): Recall@k of the gold articles of each turn, averaged over turns
with gold articles. CXMArena's evaluator also counts turns without gold (as 0) and scores its predictor's ranking
(top-k passages, repeats removed: `chunk_articles`); those figures are printed beside ours when they differ.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragjudge.bench.cxm import metrics as M
from ragjudge.bench.cxm.models import Article, RagCase
from ragjudge.bench.cxm.multiturn_retrieval.scorers import paper_protocol, turn_figures
from ragjudge.bench.cxm.article_search.summary import read_rankings, unknown_note
from ragjudge.bench.cxm.rows import Rows
from ragjudge.bench.cxm.summary import TaskReport, table


def score_multiturn(cases: Sequence[RagCase], rows: Rows, ks: Sequence[int], path: Path | None = None,
                    articles: dict[str, Article] | None = None) -> TaskReport:
    by_id = {c.case_id: c for c in cases}
    errors = {line: row for line, row in rows if row.get("error")}
    rankings, chunks = read_rankings([(n, r) for n, r in rows if not r.get("error")], set(by_id), "case_id", "turn",
                                     path)
    failed = {str(r.get("case_id")) for r in errors.values()}
    missing = [c.case_id for c in cases if c.case_id not in rankings and c.case_id not in failed]
    scored = [c for c in cases if c.case_id in rankings]
    no_gold = sum(not c.kb_ids for c in scored)
    protocol = paper_protocol([c.case_id in chunks for c in scored], [bool(c.kb_ids) for c in scored])
    official = protocol == "official"
    metrics: dict[str, Any] = {"turns": len(cases), "ranked": len(scored), "turns with gold articles":
                               len(scored) - no_gold}
    figures = [turn_figures(rankings[c.case_id], c.kb_ids, ks, chunks.get(c.case_id), protocol) for c in scored]

    def mean(name: str) -> float | None:  # over the turns that have the figure (`turn_figures` says which)
        values = [f[name] for f in figures if name in f]
        return M.ratio(sum(values), len(values))

    names = ["R@{}", "hit@{}", *(["R@{} (paper protocol)"] if protocol is not None else [])]
    metrics.update({n.format(k): mean(n.format(k)) for k in ks for n in names})
    table_rows = [[k, *(metrics[n.format(k)] for n in names)] for k in ks]
    columns = ["k", "recall@k", "hit@k", *(["recall@k, paper protocol"] if protocol is not None else [])]
    metrics["MRR"] = mean("MRR")
    metrics.update({"errors": len(errors), "missing": len(missing)})
    notes = [f"no ranking for {len(missing)} turn(s), e.g. {missing[0]}"] if missing else []
    if errors:
        first = next(iter(errors.values()))
        notes.append(f"{len(errors)} turn(s) failed, e.g. {first.get('case_id')}: {str(first['error'])[:200]}")
    if no_gold:
        notes.append(f"{no_gold} turn(s) have no gold article: left out of recall (the paper protocol counts "
                     f"them as 0)")
    if official:
        notes.append("paper protocol: CXMArena's evaluator on its predictor's ranking (the top-k passages with "
                     "repeats removed, so often fewer than k articles), turns without gold articles as 0")
    notes += unknown_note(rankings, articles)
    with_gold = len(scored) - no_gold
    ns = {name: (len(scored) if name.endswith("(paper protocol)") else with_gold) for name in metrics
          if name.startswith(("R@", "hit@")) or name == "MRR"}
    top = max(ks)
    return TaskReport(task="multi-turn retrieval", metrics=metrics,
                      tables=[table("Recall by cut-off", columns, table_rows)], notes=notes,
                      problems=len(errors) + len(missing), ns=ns, errors={name: len(errors) for name in ns},
                      headline=[(f"R@{top}", "turns with gold articles"), (f"R@{top} (paper protocol)", "turns")])

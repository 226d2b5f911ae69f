"""The run folder's TREC files (`qrels.trec`, one `run.<system>.trec` per system at its most picked setting), so that
`ragjudge retrieval-eval` or trec_eval scores exactly the rankings the bench scored.

Candidate ids (Wikipedia page names) may hold spaces: `%` and whitespace are percent-encoded, reversibly. Scores are
rank-derived (n, n-1, ..., 1) so that no tool can re-break a tie its own way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ragjudge.bench.sentence_retrieval.data import Dialogue
from ragjudge.bench.sentence_retrieval.samples import picked_order
from ragjudge.engine.bench import SampleResult
from ragjudge.formats.runs import Hit, Qrels, Run, qrels_lines, trec_run_lines

_ESCAPES = {"%": "%25", " ": "%20", "\t": "%09", "\n": "%0A", "\r": "%0D", "\x0b": "%0B", "\x0c": "%0C"}


def trec_id(candidate_id: str) -> str:
    out = "".join(_ESCAPES.get(c, c) for c in candidate_id)
    return "".join(f"%{ord(c):02X}" if c.isspace() else c for c in out)


def qrels_text(dialogues: Sequence[Dialogue]) -> str:
    qrels = Qrels()
    for d in dialogues:
        qrels.judgments[d.id] = {trec_id(c.id): c.label for c in d.candidates}
        qrels.ids[d.id] = d.id
    return "".join(qrels_lines(qrels, fmt="trec"))


def run_text(name: str, dialogues: Sequence[Dialogue], orders: Sequence[np.ndarray]) -> str:
    run = Run(name=name)
    for d, order in zip(dialogues, orders, strict=True):
        n = len(order)
        run.rankings[d.id] = [Hit(trec_id(d.candidates[int(i)].id), float(n - r)) for r, i in enumerate(order)]
        run.ids[d.id] = d.id
    return "".join(trec_run_lines(run, tag=name))


def trec_files(results: Sequence[SampleResult[Dialogue]], systems: Mapping[str, Any]) -> dict[str, str]:
    """`qrels.trec` and a run per system of the summary's `details.systems` (at its `modal_pick`), over the dialogues
    every system scored; nothing when none was."""
    ok = [r for r in results if not r.errors]
    if not ok or not systems:
        return {}
    files = {"qrels.trec": qrels_text([r.sample for r in ok])}
    for name, entry in systems.items():
        orders = [np.asarray(picked_order(r.scores[name], entry["modal_pick"])) for r in ok]
        files[f"run.{name}.trec"] = run_text(name, [r.sample for r in ok], orders)
    return files

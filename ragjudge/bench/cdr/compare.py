"""`-T compare=RUN_DIR`: this run against another CDR run, metric by metric, with `ragjudge retrieval-eval
--compare`'s two-sided paired t-test over per-query scores. The other run's `run.trec` is scored here with our qrels,
on the queries both ranked; its `run.json` data sha256 must match ours (other data means nothing).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ragjudge.bench.cdr.data import CdrQuery
from ragjudge.bench.cdr.metrics import RANX, as_qrels, ours
from ragjudge.errors import UsageError
from ragjudge.formats.runs import Run, read_trec_run
from ragjudge.models import normalize_task_id


class OtherRun:
    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        info_path, trec_path = self.folder / "run.json", self.folder / "run.trec"
        if not info_path.is_file() or not trec_path.is_file():
            raise UsageError(f"-T compare={folder}: not a CDR run folder (run.json and run.trec are written by "
                             "`ragjudge eval --bench cdr`)")
        try:
            self.info: dict[str, Any] = json.loads(info_path.read_text(encoding="utf-8"))
        except ValueError:
            raise UsageError(f"-T compare={folder}: {info_path} is not valid JSON") from None
        if self.info.get("bench") != "cdr":
            raise UsageError(f"-T compare={folder}: a run of bench {self.info.get('bench')!r}, not cdr")
        self.trec = trec_path

    @property
    def label(self) -> str:
        options = self.info.get("options") or {}
        return f"{Path(str(options.get('pipeline', '?'))).stem} ({options.get('unit', '?')})"

    def check_data(self, sha256: Mapping[str, str]) -> None:
        theirs = (self.info.get("data") or {}).get("sha256") or {}
        for name in ("corpus.json", "queries.json", "relevant_docs.json"):
            if theirs.get(name) != sha256.get(name):
                raise UsageError(f"-T compare={self.folder}: that run used another {name} (sha256 "
                                 f"{str(theirs.get(name))[:12]} vs {sha256.get(name, '')[:12]}); compare runs over the "
                                 "same data")


def compare(this: Run, other: OtherRun, queries: Sequence[CdrQuery], alpha: float = 0.05) -> dict[str, Any]:
    """{"run", "label", "test", "alpha", "n_queries", "left_out", "metrics": {m: {"a", "b", "diff", "p_value",
    "significant"}}}: a is this run, b the other; metrics by ragjudge's names (`nDCG@10`)."""
    from ragjudge.retrieval_eval.metrics import evaluate
    from ragjudge.retrieval_eval.significance import TEST_NAME, paired_test

    theirs = read_trec_run(other.trec)
    keys = [k for q in queries if (k := normalize_task_id(q.id)) in this.rankings and k in theirs.rankings]
    if not keys:
        raise UsageError(f"-T compare={other.folder}: the two runs share no query")
    qrels = as_qrels(queries)
    a = evaluate(this, qrels, list(RANX), keys)
    b = evaluate(theirs, qrels, list(RANX), keys)
    tests = paired_test(a, b, alpha=alpha)
    return {"run": str(other.folder), "label": other.label, "test": TEST_NAME, "alpha": alpha,
            "n_queries": len(keys), "left_out": len(queries) - len(keys),
            "metrics": {ours(m): {"a": round(t["a"], 6), "b": round(t["b"], 6), "diff": round(t["diff"], 6),
                            "p_value": t["p_value"], "significant": t["significant"]} for m, t in tests.items()}}

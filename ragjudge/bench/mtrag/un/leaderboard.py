"""SemEval-2026 MTRAGEval's published results (Task 8: A retrieval by nDCG@5 over answerable questions, B and C
generation by `un/task_score.py`), each with its source, and when a run can stand beside them.

Transcribed from the task overview and the system papers; a figure derived from a published statement says so in its
row. Printed only beside a comparable run (`generation_comparable`, `retrieval_comparable`): the same tasks or qrels,
the same setting, the official judges.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ragjudge.engine.summary import Reference

OVERVIEW = "SemEval-2026 Task 8 MTRAGEval overview (ACL Anthology 2026.semeval-1.447)"
PARTICIPATION = f"107 registered teams, 92 submissions (task A 38, task B 26, task C 29) ({OVERVIEW}); each row's " \
    "source is in its last column"

GENERATION_COLUMNS = ["rank", "team", "task score", "RB_agg", "RL_F", "RB_llm", "source"]
TASK_B = [
    [1, "RaguTeam", 0.7827, None, None, None, "RaguTeam's system paper (ACL Anthology 2026.semeval-1.216)"],
    [2, "AILS-NTUA", 0.7698, None, None, None, OVERVIEW],
    ["baseline", "organisers: gpt-oss-120b", 0.6390, None, None, None, OVERVIEW],
    ["-", "NCL", 0.5973, 0.4993, 0.7235, 0.6105, "NCL's system paper (SemEval-2026), its reported breakdown"],
]
TASK_C = [
    [1, "winner (derived: 2nd place is \"within 1.1 % of the top\")", 0.586, None, None, None,
     "derived from the 2nd-place system paper's statement"],
    [2, "2nd place", 0.5796, None, None, None, "the 2nd-place system paper (SemEval-2026)"],
]
RETRIEVAL_COLUMNS = ["rank", "team", "nDCG@5", "source"]
TASK_A = [
    [1, "AILS-NTUA", 0.5776, "AILS-NTUA's system paper (arXiv 2603.10524)"],
    ["baseline", "strongest baseline (derived: the winner is +20.5 % over it)", round(0.5776 / 1.205, 4),
     "derived from AILS-NTUA's system paper (arXiv 2603.10524)"],
]

OFFICIAL_JUDGES = ("rb_alg", "underspecified", "idk", "rl_f", "rb_llm")
"""The official evaluation's judges (run_generation_eval.py), not the offline stand-ins."""
SETTING_TASKS = {"reference": "B", "rag": "C"}
"""Our generation setting -> the MTRAGEval task ranked on it."""
RELEASE_TASKS = (507, "a1095d915ae8272f")
"""The MTRAG-UN release's generation tasks (mtragun-human/generation_tasks/reference.jsonl at IBM/mt-rag-benchmark
commit cc5b1d4): how many, and `fingerprint` of their task ids. Tasks B and C are scored on all of them."""
RELEASE_QRELS = {"clapnq": (83, "a6add7fb74fa0fbb"), "cloud": (86, "29b46b3d9a4db26e"),
                 "fiqa": (58, "005c97a5cbb7f9f4"), "govt": (105, "03d112308abae589")}
"""The release's qrels per domain (mtragun-human/retrieval_tasks/qrels/<domain>.tsv): queries, `fingerprint` of the
`query-id corpus-id score` lines."""


def fingerprint(lines: Iterable[str]) -> str:
    """A short sha256 of a set of lines (order does not matter): tells the release's tasks or qrels from others."""
    return hashlib.sha256("\n".join(sorted(lines)).encode()).hexdigest()[:16]


def qrels_lines(judgments: Mapping[str, Mapping[str, int]], ids: Mapping[str, str]) -> list[str]:
    """Qrels as `query-id corpus-id score` lines (the query id as the file writes it)."""
    return [f"{ids[key]}\t{doc}\t{rel}" for key, docs in judgments.items() for doc, rel in docs.items()]


@dataclass(frozen=True)
class Verdict:
    """Whether a run stands beside a task's published figures: `task` (A, B, C) when it does, else `why` not."""

    task: str | None
    why: str = ""


def generation_comparable(setting: str | None, judges: Iterable[str], task_ids: Iterable[str],
                          complete: bool) -> Verdict:
    """Task B or C when the run generated in that task's setting (`setting`: None for a judged predictions file),
    over the release's 507 tasks, with the official judges, and every task has the three conditioned metrics
    (`complete`)."""
    task = SETTING_TASKS.get(setting or "")
    ids = list(task_ids)
    missing = [j for j in OFFICIAL_JUDGES if j not in set(judges)]
    why = [f"setting {setting} is no MTRAGEval task's (task B: reference, task C: rag)" if setting and not task
           else "" if task else "predictions judged as given do not record their setting (task B: generate with "
           "-T setting=reference, task C with -T setting=rag)",
           "" if (len(ids), fingerprint(ids)) == RELEASE_TASKS else
           f"{len(ids)} tasks, not the release's {RELEASE_TASKS[0]}",
           f"not the official judges (missing {', '.join(missing)})" if missing else "",
           "" if complete else "some tasks have no value for a ranked metric (a judge failed)"]
    why = [w for w in why if w]
    return Verdict(None, "; ".join(why)) if why else Verdict(task)


def retrieval_comparable(domain: str, qrels: list[str]) -> Verdict:
    """Task A when the run is scored on the release's qrels of its domain (`qrels`: `qrels_lines`)."""
    queries = len({line.split("\t", 1)[0] for line in qrels})
    if RELEASE_QRELS.get(domain) == (queries, fingerprint(qrels)):
        return Verdict("A")
    return Verdict(None, f"not the release's {domain} qrels ({queries} queries)")


def generation_reference(task: str) -> Reference:
    rows = TASK_B if task == "B" else TASK_C
    setting = "reference" if task == "B" else "rag"
    return Reference(
        title=f"SemEval-2026 MTRAGEval task {task}, the published results", columns=GENERATION_COLUMNS, rows=rows,
        source=OVERVIEW, unit="fraction",
        comparable=f"-T setting={setting} on the release's {RELEASE_TASKS[0]} tasks with the official judges "
                   f"({', '.join(OFFICIAL_JUDGES)}): the task score is this run's mtrageval_score",
        notes=["task score: harmonic mean of the corpus-level means of the conditioned RB_agg, RL_F, RB_llm "
               "(*_idk_underspecified); the organisers judged with gpt-oss-120b, so a run with other judge "
               "models compares in method, not model",
               PARTICIPATION])


def retrieval_reference(domain: str) -> Reference:
    return Reference(
        title="SemEval-2026 MTRAGEval task A, the published results", columns=RETRIEVAL_COLUMNS, rows=TASK_A,
        source=OVERVIEW, unit="fraction",
        comparable=f"the release's {domain} qrels, every query scored, 10 passages a query from the domain's full "
                   "corpus (which ragjudge cannot check: a smaller corpus makes the figure higher): the leaderboard's "
                   "nDCG@5 pools the released domains (each domain's mean weighted by its queries, as the "
                   "official run_retrieval_eval.py does), so this domain's figure is one term of that mean",
        notes=[PARTICIPATION])

"""MTRAG-UN's retrieval data (MTRAGEval task A): one domain's qrels, whose query ids are the generation tasks' ids
the queries are built from, and optional per-query labels (standalone or not)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from ragjudge.bench.mtrag.retrieval.data import RetrievalData, RetrievalQuery, find, with_labels
from ragjudge.errors import InputError
from ragjudge.formats.mtrag import read_tasks
from ragjudge.formats.runs import read_qrels
from ragjudge.models import Task
from ragjudge.retrieval.queries import all_user_turns, last_turn

DOMAINS = ("clapnq", "cloud", "fiqa", "govt")
BUILDERS: dict[str, Callable[[Task], str]] = {"lastturn": last_turn, "questions": all_user_turns,
                                              "rewrite": last_turn}
"""The text each query kind loads with; `rewrite` starts from the last turn and is rewritten by the solver."""


def load(folder: Path, domain: str, kinds: Iterable[str], prepare: Callable[[str], str],
         labels_file: str | None = None) -> RetrievalData:
    """One query per qrels query and kind, built from its task's conversation; `prepare` is the pipeline's query
    preparation (a query empty once prepared is an input error)."""
    from ragjudge.retrieval_eval.breakdowns import read_labels

    qrels_path = find(folder / "retrieval" / "qrels", [f"{domain}.tsv"], f"{domain} qrels")
    tasks_path = find(folder / "generation", ["reference.jsonl"], "generation tasks")
    qrels = read_qrels(qrels_path)
    files = {"qrels": qrels_path, "tasks": tasks_path}
    tasks = {t.key: t for t in read_tasks(tasks_path)}
    missing = [qrels.ids[key] for key in qrels.judgments if key not in tasks]
    if missing:
        raise InputError(f"{len(missing)} qrels quer{'y has' if len(missing) == 1 else 'ies have'} no generation "
                         f"task to build the query from (first: {missing[0]!r}); the release's qrels ids are "
                         f"task ids of {tasks_path}", file=str(qrels_path), field="query-id")
    given = read_labels(labels_file) if labels_file else {}
    if labels_file:
        files["labels"] = Path(labels_file)
    labels = {key: {**tasks[key].enrichments, "Collection": tasks[key].collection, **given.get(key, {})}
              for key in qrels.judgments}
    queries: list[RetrievalQuery] = []
    for kind in kinds:
        for key in qrels.judgments:
            task = tasks[key]
            text = prepare(BUILDERS[kind](task))
            if not text:
                raise InputError(f"task {task.task_id!r}: the {kind} query is empty", file=str(tasks_path),
                                 field="input")
            queries.append(RetrievalQuery(id=f"{kind}/{task.task_id}", kind=kind, query_id=task.task_id, text=text,
                                          question=task.question, task=task))
    return RetrievalData(with_labels(queries, qrels, labels), qrels, files, labels)

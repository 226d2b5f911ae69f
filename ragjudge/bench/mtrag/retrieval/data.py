"""MTRAG's retrieval tasks for one domain: the query files and qrels, read into one sample per (query file, query)
with its relevant passages and breakdown labels (computed as `ragjudge retrieval-eval` computes them)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ragjudge.errors import InputError
from ragjudge.formats.beir import Query, read_queries
from ragjudge.formats.files import input_file
from ragjudge.formats.runs import Qrels, read_qrels
from ragjudge.models import Task, normalize_task_id
from ragjudge.retrieval.queries import strip_speaker_tags
from ragjudge.retrieval_eval.breakdowns import Labels, label_queries, resolve_dimensions

QueryKind = Literal["lastturn", "rewrite", "questions"]
KIND_NAMES = {"lastturn": "Last Turn", "rewrite": "Query Rewrite", "questions": "All Questions"}
QUERIES = "queries"
"""The label (and breakdown) naming a sample's query kind by the paper's name (Last Turn, Query Rewrite...)."""


class RetrievalQuery(BaseModel):
    """One query of one query file: the sample of the retrieval benches."""

    model_config = ConfigDict(frozen=True)

    id: str
    """`<kind>/<query id>`: a task is a sample once per query kind."""
    kind: str
    query_id: str
    """The task's own id, as the qrels and the run files write it."""
    text: str
    """The query as loaded (a `rewrite` query of MTRAG-UN is rewritten by the solver)."""
    question: str | None = None
    """The task's last user turn as asked (MTRAG: from the lastturn file, when the folder has it)."""
    task: Task | None = None
    """MTRAG-UN: the task whose conversation the query is built from."""
    relevant: dict[str, int] = Field(default_factory=dict)
    """The qrels' relevant passages (grade > 0); empty for a query the qrels do not judge."""
    labels: dict[str, str | list[str]] = Field(default_factory=dict)
    """The summary's breakdowns: the query kind, first or later turn, standalone or not (when labelled)."""


def collection_of(query: RetrievalQuery, domain: str) -> str:
    """The query's MTRAG `Collection` (what a run file and a MTRAGEval submission write): its task's when it has one
    (MTRAG-UN's release names them `clapnq`, `ibmcloud`...), else the domain's (`mt-rag-<domain>`)."""
    return query.task.collection if query.task is not None and query.task.collection else f"mt-rag-{domain}"


@dataclass(frozen=True)
class RetrievalData:
    """What a run reads: the queries, the qrels (whose judged queries missing from a run count zero, as in
    retrieval-eval), the files read and the per-query labels the data gives."""

    queries: list[RetrievalQuery]
    qrels: Qrels
    files: dict[str, Path]
    labels: Labels | None = None

    @property
    def dims(self) -> list[str]:
        return breakdown_dims(self.labels)


def breakdown_dims(labels: Labels | None) -> list[str]:
    """Each query file's breakdowns: first vs later turn, and standalone when the labels give it."""
    return ["turn", "standalone"] if "standalone" in resolve_dimensions(None, labels) else ["turn"]


def find(folder: Path, names: list[str], what: str) -> Path:
    for name in names:
        if (folder / name).exists():  # a folder in a file's place is named as such, not reported missing
            return input_file(folder / name, f"{what} file")
    raise InputError(f"no {what} file ({' or '.join(names)})", file=str(folder))


def with_labels(queries: Sequence[RetrievalQuery], qrels: Qrels, labels: Labels | None) -> list[RetrievalQuery]:
    """The queries with their relevant passages and breakdown labels (one query file's at a time, as the summary
    evaluates them)."""
    dims = breakdown_dims(labels)
    out: list[RetrievalQuery] = []
    for kind in dict.fromkeys(q.kind for q in queries):
        of_kind = [q for q in queries if q.kind == kind]
        keys = [normalize_task_id(q.query_id) for q in of_kind]
        groups = label_queries(keys, dims, runs=[], labels=labels)
        for query, key in zip(of_kind, keys, strict=True):
            found: dict[str, str | list[str]] = {QUERIES: KIND_NAMES[kind]}
            for dim in dims:
                values = groups.get(dim, {}).get(key, [])
                if values:
                    found[dim] = values[0] if len(values) == 1 else list(values)
            out.append(query.model_copy(update={"relevant": qrels.relevant(key), "labels": found}))
    return out


def load(folder: Path, domain: str, kinds: Iterable[str], prepare: Callable[[str], str]) -> RetrievalData:
    """A domain folder of MTRAG's retrieval tasks; `prepare` is the pipeline's query preparation (a query empty once
    prepared is an input error)."""
    qrels_path = find(folder, ["qrels.tsv", "qrels/dev.tsv", "qrels/test.tsv"], "qrels")
    qrels = read_qrels(qrels_path)
    files = {"qrels": qrels_path}
    read: dict[str, list[Query]] = {}
    for kind in dict.fromkeys(kinds):
        files[kind] = find(folder, [f"{kind}.jsonl", f"{domain}_{kind}.jsonl"], f"{kind} queries")
        read[kind] = read_queries(files[kind])
    last = read.get("lastturn")
    names = ["lastturn.jsonl", f"{domain}_lastturn.jsonl"]
    if last is None and (path := next((folder / n for n in names if (folder / n).is_file()), None)) is not None:
        last = read_queries(path)  # not searched: read for the turn as the user asked it
    asked = {normalize_task_id(q.id): strip_speaker_tags(q.text) for q in last or []}
    queries = []
    for kind, given in read.items():
        for query in given:
            if not prepare(query.text):
                raise InputError(f"query {query.id!r} is empty once speaker tags are removed", file=str(files[kind]),
                                 field="text")
            queries.append(RetrievalQuery(id=f"{kind}/{query.id}", kind=kind, query_id=query.id, text=query.text,
                                          question=asked.get(normalize_task_id(query.id))))
    return RetrievalData(with_labels(queries, qrels, None), qrels, files)

"""A run folder as a retrieval run: each sample's ranking (`contexts`) and relevant documents (`target_contexts`), by
the query's id, so `retrieval-eval` and `export --format mtrageval-a` read any retrieval bench's run folder as they
read a TREC or MTRAG run file."""

from __future__ import annotations

from pathlib import Path

from ragjudge.errors import InputError
from ragjudge.formats.runs import Hit, Qrels, Run, rank_hits, read_run
from ragjudge.formats.samples import FILE_NAME, Sample, iter_samples, names_run, run_sample_log
from ragjudge.models import normalize_task_id


def is_sample_log(path: Path) -> bool:
    """A run folder, a file named as a sample log (`samples.jsonl`, `X.samples.jsonl`), or the name given to --out
    whose sample log is beside it (`names_run`)."""
    return path.is_dir() or path.name == FILE_NAME or path.name.endswith("." + FILE_NAME) or names_run(path)


def read_any_run(path: str | Path, *, name: str | None = None) -> Run:
    """A ragjudge run folder (or its sample log), else a MTRAG or TREC run file."""
    path = Path(path)
    return run_from_samples(path, name=name) if is_sample_log(path) else read_run(path, name=name)


def _query_samples(path: Path) -> tuple[Path, list[tuple[int, str, Sample]]]:
    """(the sample log, (line, query id, sample) for each sample): a retrieval sample's query id is its task's
    (`metadata.query_id`) when its own id is composite, else its id; a query ranked twice (one task under several
    query kinds) is refused, naming the kinds' own run files."""
    log = run_sample_log(path)
    out: list[tuple[int, str, Sample]] = []
    seen: dict[str, int] = {}
    for line, sample in iter_samples(log):
        query_id = str(sample.metadata.get("query_id") or sample.id)
        key = normalize_task_id(query_id)
        if key in seen:
            raise InputError(f"query {query_id!r} is ranked twice in this run (line {seen[key]} and {line}; several "
                             "query kinds?): give one kind's run file from the run folder (e.g. rewrite.jsonl)",
                             file=str(log), line=line)
        seen[key] = line
        out.append((line, query_id, sample))
    if not out:
        raise InputError("no samples in this file", file=str(log))
    return log, out


def run_from_samples(path: Path, *, name: str | None = None) -> Run:
    """A run folder's rankings: each sample's `contexts` (ids and scores, best first) by query id."""
    log, samples = _query_samples(path)
    run = Run(source=str(log), name=name or (log.parent.name if log.name == FILE_NAME else log.stem))
    for line, query_id, sample in samples:
        hits = []
        for i, passage in enumerate(sample.contexts):
            if passage.id is None:
                raise InputError("has no id", file=str(log), line=line, field=f"contexts[{i}].id")
            score = passage.score if passage.score is not None else float(len(sample.contexts) - i)
            hits.append(Hit(passage.id, score, text=passage.text, title=passage.title))
        collection = (sample.metadata.get("record") or {}).get("Collection") or sample.metadata.get("collection")
        run.add(query_id, rank_hits(hits), collection=collection if isinstance(collection, str) else None)
    return run


def qrels_from_samples(path: Path) -> Qrels:
    """A run folder's relevance judgments: each sample's `target_contexts` (grade in `score`, 1 when absent)."""
    log, samples = _query_samples(path)
    qrels = Qrels(sources=[str(log)])
    for _, query_id, sample in samples:
        key = normalize_task_id(query_id)
        qrels.ids[key] = query_id
        qrels.judgments[key] = {p.id: int(p.score) if p.score is not None else 1 for p in sample.target_contexts
                                if p.id is not None}
    if not any(qrels.judgments.values()):
        raise InputError("its samples name no relevant document (target_contexts): give --qrels", file=str(log))
    return qrels

"""SemEval-2026 MTRAGEval submission files (tasks A, B, C), from ragjudge's outputs: see docs/benches/mtrag-un.md.

Each is what the benchmark's `format_checker.py` validates: one JSON object per line, the same set of string
`task_id`s as the task's input file, at most 10 `contexts`, each with a string `document_id` and a numeric `score`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ragjudge.errors import InputError, UsageError
from ragjudge.formats.jsonl import read_jsonl
from ragjudge.formats.mtrag import task_record
from ragjudge.formats.samples import Passage, Sample, locate_run, mtrag_turns
from ragjudge.models import normalize_task_id

TASKS = {"mtrageval-a": "A", "mtrageval-b": "B", "mtrageval-c": "C"}
MAX_CONTEXTS = 10
"""The checker's limit on `contexts` per task."""
REFERENCE_SCORE = 1.0


def _collection(record: dict[str, Any]) -> str | None:
    value = record.get("Collection", record.get("collection"))
    return value if isinstance(value, str) and value else None


def _context(passage: Passage, *, text: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"document_id": str(passage.id),
                           "score": passage.score if passage.score is not None else REFERENCE_SCORE}
    if text and passage.text is not None:
        out["text"] = passage.text
    if text and passage.title:
        out["title"] = passage.title
    return out


def task_collections(path: Path) -> dict[str, tuple[str, str | None]]:
    """The task input file's tasks: normalised id → (task id as written, Collection)."""
    out: dict[str, tuple[str, str | None]] = {}
    for line, record in read_jsonl(path):
        task_id = record.get("task_id")
        if not isinstance(task_id, (str, int)) or isinstance(task_id, bool):
            raise InputError("is missing or not a string", file=str(path), line=line, field="task_id")
        out[normalize_task_id(str(task_id))] = (str(task_id), _collection(record))
    if not out:
        raise InputError("contains no tasks", file=str(path))
    return out


def retrieval_lines(run_path: Path) -> list[dict[str, Any]]:
    """Task A from a retrieval run (a retrieval bench's run folder, MTRAG retrieval predictions or a TREC run): the
    top 10 of each query. Answers (a generation run) are refused as such, not as a passage without a score."""
    from ragjudge.formats.sample_runs import is_sample_log, read_any_run

    if is_sample_log(run_path):
        _, summary, _ = locate_run(run_path)
        bench = json.loads(summary.read_text(encoding="utf-8")).get("bench") if summary.is_file() else None
        if bench is not None and not str(bench).endswith("retrieval"):
            raise UsageError(f"{run_path} is a {bench} run (answers), not a retrieval run: task A takes the "
                             "passages a retriever ranked (mtrag-un-retrieval, or ragjudge retrieve --out)")
    elif run_path.is_file():
        for _, record in read_jsonl(run_path) if run_path.suffix == ".jsonl" else []:
            if "predictions" in record:
                raise UsageError(f"{run_path} holds answers (`predictions`), not a retrieval run: task A takes the "
                                 "passages a retriever ranked (mtrag-un-retrieval, or ragjudge retrieve --out)")
            break

    run = read_any_run(run_path)
    return [{"task_id": run.ids[query_id], "Collection": run.collections.get(query_id),
             "contexts": [{"document_id": h.doc_id, "score": float(h.score)} for h in hits[:MAX_CONTEXTS]]}
            for query_id, hits in run.rankings.items()]


def generation_lines(samples: Iterable[tuple[int, Sample]], task: str, source: Path) -> list[dict[str, Any]]:
    """Task B or C from a judged run's samples: each task's conversation, the passages its answer was made from
    (`contexts`) and the answer."""
    lines = []
    for line, sample in samples:
        setting = sample.metadata.get("setting")
        retrieved = setting in ("rag", "reference+rag") or any(p.metadata.get("origin") == "retrieved"
                                                               for p in sample.contexts)
        if task == "B" and retrieved:
            raise UsageError(f"{source}:{line}: these answers were generated from retrieved passages (-T "
                             "setting=rag or reference+rag): task B is generation from the reference passages alone")
        if task == "C" and setting == "reference":
            raise UsageError(f"{source}:{line}: these answers were generated from the reference passages (-T "
                             "setting=reference): task C is full RAG, answers generated from retrieved passages "
                             "(-T setting=rag)")
        if sample.output is None:
            raise InputError("is missing (expected [{\"text\": ...}])", file=str(source), line=line,
                             field="predictions")
        record = task_record(sample)
        out: dict[str, Any] = {"task_id": sample.id}
        if task == "C":
            out["Collection"] = _collection(record)
        out.update({"conversation_id": record["conversation_id"], "turn": record["turn"],
                    "input": mtrag_turns(sample.input)})
        out["contexts"] = [_context(p, text=True) for p in sample.contexts[:MAX_CONTEXTS]]
        out["predictions"] = [{"text": sample.output}]
        lines.append(out)
    return lines


def match_tasks(lines: list[dict[str, Any]], tasks: dict[str, tuple[str, str | None]] | None, *,
                source: Path, tasks_file: Path | None, needs_collection: bool) -> list[dict[str, Any]]:
    """Ids as the task file writes them, its Collection where missing; exactly its tasks, each once."""
    seen: set[str] = set()
    for out in lines:
        key = normalize_task_id(out["task_id"])
        if key in seen:
            raise InputError(f"task {out['task_id']!r} appears twice", file=str(source))
        seen.add(key)
        if tasks is not None:
            if key not in tasks:
                raise InputError(f"task {out['task_id']!r} is not in the task file {tasks_file}", file=str(source))
            out["task_id"], collection = tasks[key]
            if "Collection" in out and out["Collection"] is None:
                out["Collection"] = collection
        if needs_collection and not out.get("Collection"):
            raise UsageError(f"{source}: task {out['task_id']!r} has no Collection: pass --tasks TASK_FILE (the "
                             "task's input file) to take it from there")
    if tasks is not None:
        if missing := [written for key, (written, _) in tasks.items() if key not in seen]:
            raise InputError(f"{len(missing)} task(s) of the task file {tasks_file} have no prediction here "
                             f"(first: {missing[0]!r}); a submission must answer every task", file=str(source))
    return lines


def submission(task: str, source: Path, tasks_file: Path | None,
               samples: Iterable[tuple[int, Sample]] = ()) -> list[dict[str, Any]]:
    """The submission lines of task A (from the retrieval run at `source`) or B and C (from `samples`, a judged
    run's); see the module's docstring."""
    tasks = task_collections(tasks_file) if tasks_file is not None else None
    lines = retrieval_lines(source) if task == "A" else generation_lines(samples, task, source)
    return match_tasks(lines, tasks, source=source, tasks_file=tasks_file, needs_collection=task in ("A", "C"))

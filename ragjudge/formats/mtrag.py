"""MTRAG generation tasks, predictions and results files, read as published and written back compatibly.
Published files are not uniform (`Collection` or `collection`, `<::>` or `::` in task ids, enrichments that are
lists, strings, NaN or absent): reading normalises them into `Task`; writing starts from the original record so
that every input field survives.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ragjudge.errors import InputError
from ragjudge.formats.jsonl import json_type, missing, read_jsonl
from ragjudge.formats.samples import Sample, mtrag_turns
from ragjudge.models import ANSWERABILITY_VALUES, Passage, Prediction, Task, Turn, normalize_task_id

# Fields mapped onto Task attributes; everything else is kept in Task.enrichments.
_KNOWN = {
    "task_id", "conversation_id", "turn", "Collection", "collection", "input", "contexts", "targets",
    "answerability", "Answerability", "Question Type", "Multi-Turn", "predictions",
}


_NOT_APPLICABLE = frozenset({"", "N/A", "NA", "n/a", "None", "null", "nan", "NaN"})  # older MTRAG files: "N/A" on turn 1
_missing = partial(missing, empty=True, na=_NOT_APPLICABLE)


def _whole_number(value: Any) -> int | None:
    """1, 1.0 and "1" are turn 1; 1.5, inf, true, "one" are not turns."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else None
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return None


def _as_list(value: Any) -> list[str]:
    if _missing(value):
        return []
    if isinstance(value, list):
        return [str(v) for v in value if not _missing(v)]
    return [str(value)]


def _turns(value: Any, *, where: dict[str, Any], field: str, required: bool) -> list[Turn]:
    if _missing(value):
        if required:
            raise InputError("is missing or empty", field=field, **where)
        return []
    if not isinstance(value, list):
        raise InputError(f"must be a list of {{speaker, text}} turns, got {type(value).__name__}", field=field, **where)
    turns = []
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            raise InputError("must be an object with speaker and text", field=f"{field}[{i}]", **where)
        speaker = item.get("speaker")
        if speaker not in ("user", "agent"):
            raise InputError(f"speaker must be 'user' or 'agent', got {speaker!r}", field=f"{field}[{i}].speaker", **where)
        if not isinstance(item.get("text"), str):
            raise InputError("is missing or not a string", field=f"{field}[{i}].text", **where)
        turns.append(Turn.model_validate(item))
    return turns


def _passages(value: Any, *, where: dict[str, Any], field: str) -> list[Passage]:
    if _missing(value):
        return []
    if not isinstance(value, list):
        raise InputError(f"must be a list of passages, got {type(value).__name__}", field=field, **where)
    passages = []
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            raise InputError("must be an object", field=f"{field}[{i}]", **where)
        pid = item.get("document_id", item.get("id", item.get("_id")))
        if _missing(pid):
            raise InputError("is missing", field=f"{field}[{i}].document_id", **where)
        text = item.get("text")
        if not isinstance(text, str):
            raise InputError("is missing or not a string", field=f"{field}[{i}].text", **where)
        score = item.get("score")
        passages.append(Passage.of_record(item, id=str(pid), text=text,
                                          title=None if _missing(item.get("title")) else str(item["title"]),
                                          score=None if _missing(score) or not isinstance(score, (int, float))
                                          else float(score)))
    return passages


def task_from_record(record: dict[str, Any], *, file: str | None = None, line: int | None = None) -> Task:
    """Build a Task from one MTRAG record, raising InputError that names file, line and field."""
    where = {"file": file, "line": line}
    task_id = record.get("task_id")
    if _missing(task_id):
        raise InputError("is missing", field="task_id", **where)
    if isinstance(task_id, bool) or not isinstance(task_id, (str, int)):  # an int is kept as written (results)
        raise InputError(f"must be a string or an integer, got {json_type(task_id)}", field="task_id", **where)
    task_id = str(task_id)
    sep = "<::>" if "<::>" in task_id else "::"
    conversation_id = record.get("conversation_id")
    if _missing(conversation_id):
        conversation_id = task_id.split(sep)[0]
    elif isinstance(conversation_id, bool) or not isinstance(conversation_id, (str, int)):
        raise InputError(f"must be a string or an integer, got {json_type(conversation_id)}", field="conversation_id",
                         **where)
    turn = record.get("turn")
    if _missing(turn):
        tail = task_id.split(sep)[-1] if sep in task_id else ""
        if not tail.isdigit():
            raise InputError("is missing and cannot be derived from task_id", field="turn", **where)
        turn = int(tail)
    turn = _whole_number(turn)
    if turn is None or turn < 1:  # MTRAG counts turns from 1
        raise InputError(f"must be a whole number >= 1, got {record.get('turn')!r}"[:120], field="turn", **where)

    answerability = _as_list(record.get("answerability", record.get("Answerability")))
    label = answerability[0].upper() if answerability else None
    if label is not None and label not in ANSWERABILITY_VALUES:
        raise InputError(f"unknown value {label!r} (expected one of {', '.join(ANSWERABILITY_VALUES)})",
                         field="answerability", **where)
    multi = _as_list(record.get("Multi-Turn"))
    collection = record.get("Collection", record.get("collection"))
    try:
        return Task(
            task_id=task_id,
            conversation_id=str(conversation_id),
            turn=turn,
            collection=None if _missing(collection) else str(collection),
            input=_turns(record.get("input"), where=where, field="input", required=True),
            contexts=_passages(record.get("contexts"), where=where, field="contexts"),
            targets=_turns(record.get("targets"), where=where, field="targets", required=False),
            answerability=label,
            question_types=_as_list(record.get("Question Type")),
            multi_turn=multi[0] if multi else None,
            multi_turns=multi,
            enrichments={k: v for k, v in record.items() if k not in _KNOWN},
            raw=record,
        )
    except ValidationError as exc:  # defensive: anything the checks above did not catch
        err = exc.errors()[0]
        raise InputError(err["msg"], field=".".join(str(p) for p in err["loc"]), **where) from None


def prediction_from_record(record: dict[str, Any], *, file: str | None = None, line: int | None = None) -> Prediction:
    """The `predictions: [{"text": ...}]` of an MTRAG evaluation-input record (first prediction is scored)."""
    where = {"file": file, "line": line}
    preds = record.get("predictions")
    if _missing(preds) or not isinstance(preds, list):
        raise InputError("is missing (expected a list of {\"text\": ...})", field="predictions", **where)
    first = preds[0]
    if not isinstance(first, dict) or not isinstance(first.get("text"), str):
        raise InputError("must be an object with a string 'text'", field="predictions[0].text", **where)
    return Prediction(task_id=str(record["task_id"]), text=first["text"])


def task_files(path: str | Path) -> list[Path]:
    """A file, or every *.jsonl in a folder except our own outputs (results/predictions/journals)."""
    path = Path(path)
    if path.is_dir():
        files = sorted(p for p in path.glob("*.jsonl") if "tasks" in p.stem or "input" in p.stem)
        if not files:
            raise InputError("no task files (*tasks*.jsonl or *input*.jsonl) in this folder", file=str(path))
        return files
    if not path.exists():
        raise InputError("file not found", file=str(path))
    return [path]


def read_tasks(path: str | Path) -> list[Task]:
    """Read generation tasks from a file or folder; duplicated task ids are an input error."""
    tasks: list[Task] = []
    seen: dict[str, tuple[str, int]] = {}
    files = task_files(path)
    for file in files:
        tasks += tasks_of(read_jsonl(file), file=str(file), seen=seen)
    if not tasks:  # name the empty file itself when there is one, not the folder it was found in
        if len(files) == 1:
            raise InputError("contains no tasks", file=str(files[0]))
        raise InputError(f"contains no tasks ({', '.join(f.name for f in files)} are all empty)", file=str(path))
    return tasks


def tasks_of(records: Iterable[tuple[int, dict[str, Any]]], *, file: str,
             seen: dict[str, tuple[str, int]] | None = None) -> list[Task]:
    """Tasks from (line, record) pairs: a file's lines, or records given in memory (their index as the line);
    `seen` (task key -> where first read) spans the files of a folder."""
    seen = {} if seen is None else seen
    tasks = []
    for line, record in records:
        task = task_from_record(record, file=file, line=line)
        if task.key in seen:
            f, l = seen[task.key]
            raise InputError(f"duplicate task id {task.task_id!r} (first at {f}:{l})", file=file, line=line,
                             field="task_id")
        seen[task.key] = (file, line)
        tasks.append(task)
    return tasks


def read_predictions(path: str | Path) -> list[tuple[Task, Prediction]]:
    """Read an MTRAG evaluation-input file: each line a task with its `predictions`."""
    return predictions_of(read_jsonl(path), file=str(path))


def predictions_of(records: Iterable[tuple[int, dict[str, Any]]], *, file: str) -> list[tuple[Task, Prediction]]:
    """Tasks with their `predictions` from (line, record) pairs: a file's lines, or records given in memory. Each
    record's prediction is read right after its task, so the first bad line is the one named."""
    predictions: list[Prediction] = []

    def lines() -> Iterator[tuple[int, dict[str, Any]]]:
        for line, record in records:
            yield line, record
            predictions.append(prediction_from_record(record, file=file, line=line))

    tasks = tasks_of(lines(), file=file)
    if not tasks:
        raise InputError("contains no tasks", file=file)
    return list(zip(tasks, predictions, strict=True))


def result_record(task: Task, prediction: Prediction, metrics: dict[str, Any], details: dict[str, Any] | None = None
                  ) -> dict[str, Any]:
    """One results line: the input record unchanged, plus predictions, the contexts used and `metrics`."""
    record = dict(task.raw)  # the task id as written: an integer id stays an integer
    if prediction.contexts is not None:
        record["contexts"] = [p.to_record() for p in prediction.contexts]
    record["predictions"] = [{"text": prediction.text}]
    record["metrics"] = metrics
    if details is not None:
        record["ragjudge"] = details
    return record


RECORD_FIELDS = ("input", "contexts", "predictions", "metrics", "ragjudge")
"""The parts of an MTRAG results line a sample holds in its own fields; the rest of the task's record (`targets` too,
with what MTRAG-UN keeps beside each reference) is kept whole in the sample's `metadata["record"]`."""


def task_record(sample: Sample) -> dict[str, Any]:
    """The task a sample answers, as MTRAG writes a task: its own fields as read (`metadata["record"]`) under the
    sample's id; a sample of a bench with no task record (a RAG record) is its own conversation, its turn the count
    of its user turns."""
    record: dict[str, Any] = dict(sample.metadata.get("record") or {})
    if str(record.get("task_id")) != sample.id:  # the sample's id rules; the record's is kept only as written
        record["task_id"] = sample.id
    record.setdefault("conversation_id", sample.id)
    record.setdefault("turn", 1 if isinstance(sample.input, str) else max(1, sum(m.role == "user"
                                                                                for m in sample.input)))
    return record


def task_of(sample: Sample, *, file: str, line: int) -> Task:
    """The MTRAG task a sample answers (`task_record` with the sample's conversation), read as `task_from_record`
    reads a task: its fields normalised, a malformed one an InputError naming file, line and field."""
    return task_from_record({**task_record(sample), "input": mtrag_turns(sample.input)}, file=file, line=line)


def require_questions(tasks: list[Task], source: str | Path,
                      records: Iterable[tuple[int, dict[str, Any]]] | None = None) -> None:
    """Every task must have a last user turn to search for: checked before any indexing, named by file and line
    (`records`: the (line, record) pairs the tasks were read from; default: the file `source`)."""
    empty = next((t for t in tasks if not t.question.strip()), None)
    if empty is None:
        return
    if records is None and Path(source).is_file():
        records = read_jsonl(source)
    line = next((n for n, record in records or ()
                 if normalize_task_id(str(record.get("task_id", ""))) == empty.key), None)
    raise InputError(f"task {empty.task_id!r}: the last user turn is empty, there is nothing to search for",
                     file=str(source), line=line, field="input")

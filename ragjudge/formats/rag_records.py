"""Your own RAG app's records, read under ragjudge's, RAGAS's and DeepEval's field names (docs/your-rag-app.md).

Beyond the docs' table: RAGAS 0.1's `ground_truth` is `reference`, RAGAS's `reference_context_ids` /
`retrieved_context_ids` are read, and a message may be MTRAG's `{speaker, text}`. In every table format a list or
object cell goes through one function (`table_records`).
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterable, Mapping, Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ragjudge.errors import InputError
from ragjudge.formats.jsonl import json_type, missing, read_jsonl, to_jsonable
from ragjudge.models import JudgedItem, Passage, RecordPassage, Task, Turn, normalize_task_id

FIELDS: dict[str, tuple[str, ...]] = {
    "id": ("id", "sample_id"),
    "question": ("question", "user_input", "input", "query"),
    "messages": ("messages", "conversation"),
    "answer": ("answer", "response", "actual_output"),
    "contexts": ("contexts", "retrieved_contexts", "retrieval_context"),
    "reference": ("reference", "ground_truth", "expected_output"),
    "reference_contexts": ("reference_contexts", "context"),
    "reference_context_ids": ("reference_context_ids",),
    "retrieved_context_ids": ("retrieved_context_ids",),
    "labels": ("labels",),
    "metadata": ("metadata",),
}
"""Each field's accepted names: ragjudge's first, then RAGAS's and DeepEval's."""
NAMES = {alias: field for field, aliases in FIELDS.items() for alias in aliases}
ROLES = {"user": "user", "human": "user", "assistant": "agent", "agent": "agent", "ai": "agent"}
"""Conversation roles as MTRAG's speakers (OpenAI's and LangChain's names too); system messages are dropped."""


class RagRecord(BaseModel):
    """One record of a RAG app, read: the conversation ending with the question, and what the app answered with."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    turns: list[Turn]
    answer: str | None = None
    contexts: list[RecordPassage] = Field(default_factory=list)
    reference: str | None = None
    reference_contexts: list[RecordPassage] = Field(default_factory=list)
    reference_context_ids: list[str] = Field(default_factory=list)
    labels: dict[str, str | list[str]] = Field(default_factory=dict)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @property
    def question(self) -> str:
        return self.turns[-1].text

    @property
    def key(self) -> str:
        """The id as the judges key a task (MTRAG's `<::>` and `::` compare equal)."""
        return normalize_task_id(self.id)

    def task(self) -> Task:
        """The record as the judges read a task (MTRAG's model): the conversation, the passages, the reference."""
        return Task(task_id=self.id, conversation_id=self.id, turn=sum(t.speaker == "user" for t in self.turns),
                    input=list(self.turns), contexts=list(self.contexts),
                    targets=[Turn(speaker="agent", text=self.reference)] if self.reference else [])

    def item(self) -> JudgedItem:
        """The record as every judge reads it: the conversation, the answer ("" when none), the passages, the
        reference, the labels."""
        return JudgedItem(id=self.key, messages=list(self.turns), answer=self.answer or "", contexts=list(self.contexts),
                          reference=self.reference, reference_context_ids=list(self.reference_context_ids),
                          labels=dict(self.labels), metadata=dict(self.metadata))


def is_mtrag_record(record: Mapping[str, Any]) -> bool:
    """An MTRAG task (its own format: `task_id`, `input` as `{speaker, text}` turns), read by MTRAG's reader; also
    a broken one (a `task_id` and no question under a RAG record's names), so that its error names MTRAG's field."""
    if "task_id" not in record:
        return False
    turns = record.get("input")
    if isinstance(turns, list) and turns and all(isinstance(t, Mapping) and "speaker" in t for t in turns):
        return True
    asked = [k for k in FIELDS["question"] + FIELDS["messages"] if k in record]
    return not asked or asked == ["input"] and not isinstance(turns, str)


TABLES = {".csv": ",", ".tsv": "\t"}
"""Delimited text tables by suffix, and their delimiter."""
WORKBOOKS = (".xlsx", ".xlsm", ".xls", ".ods", ".numbers")
"""Spreadsheet files, refused with what to do: a workbook has sheets, types and formulas, a CSV says what it holds."""


def record_format(path: str | Path) -> str:
    """The suffix that says how a file of records is read (`.csv`, `.tsv`, `.json`, `.parquet`, else JSON Lines),
    looking through `.gz`; a spreadsheet workbook is an InputError saying to save it as CSV."""
    from ragjudge.formats.files import without_gz

    suffix = without_gz(path).suffix.lower()
    if suffix in WORKBOOKS:
        raise InputError(f"a spreadsheet workbook ({suffix}) is not read: save it as CSV (UTF-8) and give the .csv",
                         file=str(path))
    return suffix


def holds_mtrag_tasks(path: str | Path) -> bool:
    """Whether a file (or folder) of records to judge is MTRAG's own format rather than plain RAG records: a folder,
    or JSON Lines whose first record is an MTRAG task. CSV, TSV, Parquet and JSON arrays are plain records."""
    path = Path(path)
    if path.is_dir():
        return True
    if record_format(path) in (*TABLES, ".parquet", ".json"):
        return False
    for _, record in read_jsonl(path):
        return is_mtrag_record(record)
    return True  # empty: MTRAG's reader says so


def records_stem(path: str | Path) -> str:
    """A file of records' name without its format's suffix (`rows.csv.gz` -> `rows`): what outputs are named after."""
    from ragjudge.formats.files import without_gz

    inner = without_gz(path)
    return inner.stem if inner.suffix.lower() in (*TABLES, ".json", ".jsonl", ".parquet") else inner.name


def rag_record(record: Mapping[str, Any], position: int, *, file: str | None = None, line: int | None = None
               ) -> RagRecord:
    """One record under any accepted names; `position` (1-based) makes its id when it has none. A bad field is an
    InputError naming it (and the file and line)."""
    where = {"file": file, "line": line}
    values: dict[str, tuple[str, Any]] = {}
    for name, value in record.items():
        field = NAMES.get(str(name))
        if field is None:
            raise InputError(f"is not a field of a RAG record (accepted: {accepted()}; put anything else under "
                             "labels or metadata)", field=str(name), **where)
        if field in values:
            raise InputError(f"gives the {field} twice (as {values[field][0]!r} and {name!r})", field=str(name),
                             **where)
        if not missing(value):
            values[field] = (str(name), value)

    answer = values.get("answer")
    turns, replied = _turns(values.get("messages"), values.get("question"), answer is not None, where)
    rid = values.get("id")
    if rid is not None and (isinstance(rid[1], bool) or not isinstance(rid[1], (str, int))):
        raise InputError(f"must be text or a whole number, got {json_type(rid[1])}", field=rid[0], **where)
    passages = _passages(values.get("contexts"), "retrieved", where)
    if ids := _strings(values.get("retrieved_context_ids"), where):
        if passages and len(ids) != len(passages):
            raise InputError(f"has {len(ids)} ids for {len(passages)} contexts", field="retrieved_context_ids",
                             **where)
        passages = [p.model_copy(update={"id": i}) for p, i in zip(passages, ids, strict=False)] \
            if passages else [Passage(id=i, text="") for i in ids]
    return RagRecord(id=str(rid[1]) if rid is not None else str(position), turns=turns,
                     answer=replied if replied is not None else _text(answer, where), contexts=passages,
                     reference=_text(values.get("reference"), where),
                     reference_contexts=_passages(values.get("reference_contexts"), "reference", where),
                     reference_context_ids=_strings(values.get("reference_context_ids"), where),
                     labels=_labels(values.get("labels"), where), metadata=_object(values.get("metadata"), where))


def rag_records(records: Iterable[Mapping[str, Any]], *, file: str | None = None,
                lines: Sequence[int] | None = None) -> list[RagRecord]:
    """Every record; ids made from positions where absent, and unique."""
    out: list[RagRecord] = []
    seen: dict[str, int] = {}
    for n, record in enumerate(records, 1):
        line = lines[n - 1] if lines is not None else None
        if not isinstance(record, Mapping):
            raise InputError(f"must be a record (an object), got {json_type(record)}", file=file, line=line)
        read = rag_record(record, n, file=file, line=line)
        if read.id in seen:
            raise InputError(f"repeats id {read.id!r} (first in record {seen[read.id]})", file=file, line=line,
                             field="id")
        seen[read.id] = n
        out.append(read)
    if not out:
        raise InputError("holds no records", file=file)
    return out


def read_rag_records(path: str | Path) -> list[RagRecord]:
    """A file of records: JSON Lines, a JSON array, CSV, TSV or Parquet (by its suffix), each also as `.gz`."""
    path = Path(path)
    suffix = record_format(path)
    if suffix in TABLES:
        from ragjudge.formats.files import csv_rows

        kind = suffix[1:].upper()
        rows = list(csv_rows(path, f"{kind} file", header=True, delimiter=TABLES[suffix]))
        for line, row in rows:
            if None in row:
                raise InputError("has more cells than the header names", file=str(path), line=line)
        lines = [line for line, _ in rows]
        return rag_records(table_records([row for _, row in rows], file=str(path), lines=lines), file=str(path),
                           lines=lines)
    if suffix == ".parquet":
        import pandas as pd
        import pyarrow

        from ragjudge.formats.files import open_binary

        with open_binary(path, "Parquet file") as fh:  # recorded as an input of the run, like every file read
            try:
                frame = pd.read_parquet(fh)
            except (pyarrow.ArrowException, OSError, ValueError) as exc:
                raise InputError(f"not a Parquet file ({type(exc).__name__}: {exc})", file=str(path)) from None
        lines = [n + 2 for n in range(len(frame))]
        return rag_records(frame_records(frame, file=str(path), lines=lines), file=str(path), lines=lines)
    if suffix == ".json":
        from ragjudge.formats.jsonl import read_json

        data = read_json(path, "JSON file of records")
        if not isinstance(data, list):
            raise InputError(f"must be a JSON array of records, got {json_type(data)}", file=str(path))
        return rag_records(data, file=str(path))
    numbered = list(read_jsonl(path))
    return rag_records([r for _, r in numbered], file=str(path), lines=[n for n, _ in numbered])


def frame_records(frame: Any, *, file: str | None = None, lines: Sequence[int] | None = None,
                  index_as_id: bool = False) -> list[dict[str, Any]]:
    """A DataFrame's rows as records, read as any table's (`table_records`). With `index_as_id`, an index that is
    not the plain 0..n-1 (a filtered or re-indexed frame) gives each record its id, unless a column does: joining
    the results back on the index then lines up."""
    rows = [{str(k): to_jsonable(v) for k, v in row.items()} for row in frame.to_dict(orient="records")]
    out = table_records(rows, file=file, lines=lines)
    if not index_as_id or _plain_range(frame.index) or any(r.keys() & set(FIELDS["id"]) for r in out) \
            or any(is_mtrag_record(r) for r in out[:1]):
        return out
    if not frame.index.is_unique:
        repeated = to_jsonable(frame.index[frame.index.duplicated()][0])
        raise InputError(f"the DataFrame's index repeats {repeated!r}, and its index gives the sample ids: make it "
                         "unique, give an id column, or pass df.reset_index(drop=True)", file=file)
    for record, key in zip(out, frame.index, strict=True):
        record["id"] = str(to_jsonable(key))
    return out


def table_records(rows: Sequence[Mapping[str, Any]], *, file: str | None = None,
                  lines: Sequence[int] | None = None) -> list[dict[str, Any]]:
    """A table's rows (CSV, TSV, a DataFrame, Parquet) as records: an empty or missing cell (NaN, None, "") is no
    field, and a list or object field given as text is parsed (JSON, or a Python literal). MTRAG tasks in a table are
    left as they are (their reader checks them)."""
    if rows and is_mtrag_record(rows[0]):
        return [{k: v for k, v in row.items() if not missing(v)} for row in rows]
    return [_table_row(row, file, lines[n] if lines is not None else None) for n, row in enumerate(rows)]


def accepted() -> str:
    return ", ".join(a for aliases in FIELDS.values() for a in aliases)


# -- the fields -----------------------------------------------------------------------------------------------

LIST_FIELDS = {"messages", "contexts", "reference_contexts", "reference_context_ids", "retrieved_context_ids",
               "labels", "metadata"}


def _table_row(row: Mapping[str, Any], file: str | None, line: int | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, cell in row.items():
        if missing(cell) or cell == "":
            continue
        field = NAMES.get(str(name))
        listed = isinstance(cell, str) and (field in LIST_FIELDS or field == "question" and cell.lstrip()[:1] == "[")
        out[str(name)] = _literal(cell, file, line, str(name)) if listed else cell
    return out


def _literal(cell: str, file: str | None, line: int | None, name: str) -> Any:
    with suppress(json.JSONDecodeError, RecursionError):
        return json.loads(cell)
    try:
        return ast.literal_eval(cell)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        raise InputError("must be a JSON list or object (or a Python list literal)", file=file, line=line,
                         field=name) from None


def _plain_range(index: Any) -> bool:
    """Whether a DataFrame's index is the 0..n-1 pandas gives a frame nobody indexed."""
    import pandas as pd

    if isinstance(index, pd.RangeIndex):
        return index.start == 0 and index.step == 1
    return list(index) == list(range(len(index)))


def _turns(messages: tuple[str, Any] | None, question: tuple[str, Any] | None, has_answer: bool,
           where: dict[str, Any]) -> tuple[list[Turn], str | None]:
    """(the conversation ending with the question, the answer when the conversation ends with it)."""
    if question is not None and isinstance(question[1], list):  # RAGAS's multi-turn user_input
        if messages is not None:
            raise InputError(f"gives the conversation twice (as {messages[0]!r} and {question[0]!r})",
                             field=question[0], **where)
        messages, question = question, None
    turns: list[Turn] = []
    if messages is not None:
        name, items = messages
        if not isinstance(items, list):
            raise InputError(f"must be a list of {{role, content}} messages, got {json_type(items)}", field=name,
                             **where)
        for i, item in enumerate(items):
            if not isinstance(item, Mapping):
                raise InputError(f"must be a {{role, content}} message, got {json_type(item)}", field=f"{name}[{i}]",
                                 **where)
            role = item.get("role", item.get("speaker", item.get("type")))
            content = item.get("content", item.get("text"))
            if role == "system":
                continue
            if role not in ROLES:
                raise InputError(f"role must be user or assistant, got {role!r}", field=f"{name}[{i}].role", **where)
            if not isinstance(content, str):
                raise InputError(f"must be text, got {json_type(content)}", field=f"{name}[{i}].content", **where)
            turns.append(Turn(speaker=ROLES[role], text=content))  # type: ignore[arg-type]
    if question is not None:
        text = question[1]
        if not isinstance(text, str):
            raise InputError(f"must be text, got {json_type(text)}", field=question[0], **where)
        if not turns or turns[-1].speaker != "user" or turns[-1].text != text:
            turns.append(Turn(speaker="user", text=text))
    if not turns:
        raise InputError(f"is missing: give a question (or messages) under one of: "
                         f"{', '.join(FIELDS['question'] + FIELDS['messages'])}", field="question", **where)
    name = (messages or question or ("messages",))[0]
    answer = None
    if turns[-1].speaker == "agent" and question is None:
        if has_answer:
            raise InputError("ends with the assistant's reply and the record gives an answer too: end the "
                             "conversation with the user's question, or leave the answer out (the last reply is "
                             "then the answer judged)", field=name, **where)
        answer = turns.pop().text  # RAGAS's MultiTurnSample: the last reply is the answer under test
        if not turns:
            raise InputError("holds only the assistant's reply: it needs the user's question before it", field=name,
                             **where)
    if turns[-1].speaker != "user" or not turns[-1].text.strip():
        raise InputError("must end with the user's question (or with the assistant's reply to it)", field=name,
                         **where)
    return turns, answer


def _passages(given: tuple[str, Any] | None, kind: str, where: dict[str, Any]) -> list[Passage]:
    if given is None:
        return []
    name, items = given
    if not isinstance(items, list):
        raise InputError(f"must be a list of passages (strings or {{id, text}}), got {json_type(items)}", field=name,
                         **where)
    out = []
    for i, item in enumerate(items):
        if isinstance(item, str):
            out.append(Passage(id=f"{kind}-{i + 1}", text=item))
        elif isinstance(item, Mapping):
            pid = item.get("id", item.get("document_id", item.get("_id")))
            text = item.get("text", item.get("content"))
            if not isinstance(text, str):
                raise InputError(f"must be text, got {json_type(text)}", field=f"{name}[{i}].text", **where)
            if pid is not None and (isinstance(pid, bool) or not isinstance(pid, (str, int))):
                raise InputError(f"must be text, got {json_type(pid)}", field=f"{name}[{i}].id", **where)
            try:
                out.append(Passage.of_record({k: v for k, v in item.items() if k != "content"}, text=text,
                                             id=str(pid) if pid is not None else f"{kind}-{i + 1}"))
            except ValidationError as exc:  # a title that is not text, or a score that is not a number
                err = exc.errors()[0]
                raise InputError(f"must be {'text' if err['loc'][0] == 'title' else 'a number'}, got "
                                 f"{json_type(err['input'])}", field=f"{name}[{i}].{err['loc'][0]}", **where) from None
        else:
            raise InputError(f"must be a string or an {{id, text}} object, got {json_type(item)}",
                             field=f"{name}[{i}]", **where)
    return out


def _text(given: tuple[str, Any] | None, where: dict[str, Any]) -> str | None:
    if given is None:
        return None
    if not isinstance(given[1], str):
        raise InputError(f"must be text, got {json_type(given[1])}", field=given[0], **where)
    return given[1]


def _strings(given: tuple[str, Any] | None, where: dict[str, Any]) -> list[str]:
    if given is None:
        return []
    name, items = given
    if not isinstance(items, list) or not all(isinstance(i, (str, int)) and not isinstance(i, bool) for i in items):
        raise InputError("must be a list of ids", field=name, **where)
    return [str(i) for i in items]


def _labels(given: tuple[str, Any] | None, where: dict[str, Any]) -> dict[str, str | list[str]]:
    labels = _object(given, where)
    out: dict[str, str | list[str]] = {}
    for key, value in labels.items():
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            out[key] = value
        elif isinstance(value, (str, int, float, bool)):
            out[key] = str(value)
        else:
            raise InputError(f"must be text or a list of texts, got {json_type(value)}", field=f"labels.{key}",
                             **where)
    return out


def _object(given: tuple[str, Any] | None, where: dict[str, Any]) -> dict[str, Any]:
    if given is None:
        return {}
    if not isinstance(given[1], Mapping):
        raise InputError(f"must be an object, got {json_type(given[1])}", field=given[0], **where)
    return {str(k): v for k, v in given[1].items()}

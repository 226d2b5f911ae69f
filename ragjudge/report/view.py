"""How `ragjudge report` shows a bench's samples: the generic view, which any bench's results.jsonl fits.

A bench says how its samples are shown by returning a `ReportView` from `Bench.report_view(run_info)`; the
default is this class, which reads records by convention (the run as a whole is its summary, which the overview
reads without a view: the result contract says everything it needs):

- the sample id from the first of `id`, `sample_id`, `task_id`, `case_id`, `query_id`, `_id`;
- metrics from `metrics` ({name: number or [number]}), from `scores` ({name: {"value": number}}: the engine's
  default record) and from top-level booleans and floats;
- judges from `scores` and `ragjudge.judges` entries shaped like `ragjudge.models.JudgeResult` (value, label,
  rationale, raw, error, model, tokens, latency, panel `members`);
- errors from `error`, `parse_error`, `errors` at the top level, in `output` and in each score;
- facets (what the task list filters by) from short categorical fields;
- the detail of a sample as blocks: lists of `{speaker|role, text}` are conversations, lists of `{text, ...}`
  passages, long strings texts, everything else a field table.

A bench whose records have a known shape subclasses this and overrides what it knows better (see
`ragjudge.bench.mtrag.report_view`). Blocks are plain dicts (`kind` conversation, passages, text, judges,
metrics, fields, errors); `shared: True` marks a block that is the same for every run of the same task (the
conversation, the reference), shown once above the runs' columns when comparing.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any


Record = dict[str, Any]
Block = dict[str, Any]

ID_FIELDS = ("id", "sample_id", "task_id", "case_id", "query_id", "_id")
TITLE_FIELDS = ("question", "query", "title", "prompt", "text", "answer", "response")
ERROR_FIELDS = ("error", "parse_error", "errors")
JUDGE_KEYS = ("value", "label", "rationale", "raw", "error", "model", "members")
LONG_TEXT = 120
"""Strings at least this long (or with a line break) get a text block rather than a field row."""


class ReportView:
    """The generic view: every method reads one results.jsonl record (or the summary) by convention."""

    def __init__(self, run_info: dict[str, Any] | None = None):
        self.run_info = run_info or {}

    # -- per sample ---------------------------------------------------------------------------------

    def check_record(self, record: Record, path: Path, line: int) -> None:
        """Refuse a results line whose fields this view reads with the wrong type (an InputError naming
        `path:line` and the field): the report stops with one line, as `export` and `correlate` do, instead of
        drawing a wrong figure. The generic checks (`report.load.check_record`) come first; a bench's view adds
        its own fields."""

    def sample_id(self, record: Record) -> str | None:
        for key in ID_FIELDS:
            if isinstance(record.get(key), (str, int)) and not isinstance(record.get(key), bool):
                return str(record[key])
        return None

    def title(self, record: Record) -> str:
        """One line for the task list: the question, query or answer."""
        for source in (record, record.get("output") if isinstance(record.get("output"), dict) else {}):
            for key in TITLE_FIELDS:
                if isinstance(source.get(key), str) and source[key].strip():
                    return source[key].strip()
        return ""

    def facets(self, record: Record) -> dict[str, str | list[str]]:
        """Categorical fields to filter by; the report keeps those with 2 to 30 distinct values."""
        out: dict[str, str | list[str]] = {}
        for key, value in record.items():
            if key in ID_FIELDS:
                continue
            if isinstance(value, bool):
                out[key] = "yes" if value else "no"
            elif isinstance(value, (str, int)) and len(str(value)) <= 40:
                out[key] = str(value)
            elif isinstance(value, list) and value and all(isinstance(v, str) and len(v) <= 40 for v in value):
                out[key] = list(value)
        return out

    def metrics(self, record: Record) -> dict[str, float]:
        out: dict[str, float] = {}
        for key, value in record.items():
            if isinstance(value, bool) or (isinstance(value, float) and key not in ID_FIELDS):
                out[key] = float(value)
        for name, value in (record.get("metrics") or {}).items():
            number = _number(value[0] if isinstance(value, list) and len(value) == 1 else value)
            if number is not None:
                out[name] = number
        for name, score in (record.get("scores") or {}).items():
            if isinstance(score, dict) and (number := _number(score.get("value"))) is not None:
                out[name] = number
        return out

    def judges(self, record: Record) -> dict[str, dict[str, Any]]:
        """Judge-shaped results: `ragjudge.judges` first, then the engine's `scores`."""
        found: dict[str, dict[str, Any]] = {}
        nested = (record.get("ragjudge") or {}).get("judges") if isinstance(record.get("ragjudge"), dict) else None
        for source in (nested or {}, record.get("scores") or {}):
            for name, result in source.items():
                if isinstance(result, dict) and any(k in result for k in JUDGE_KEYS):
                    found.setdefault(name, result)
        return found

    def errors(self, record: Record) -> dict[str, str]:
        out: dict[str, str] = {}
        _collect_errors(record, "", out)
        if isinstance(record.get("output"), dict):
            _collect_errors(record["output"], "output", out)
        for name, result in self.judges(record).items():
            if result.get("error"):
                out[name] = str(result["error"])
        nested = record.get("ragjudge")
        if isinstance(nested, dict) and isinstance(nested.get("errors"), dict):
            out.update({k: str(v) for k, v in nested["errors"].items()})
        return out

    def flags(self, record: Record) -> dict[str, bool]:
        """Named yes/no disagreements the task list can filter by (e.g. MTRAG's IDK vs RB)."""
        return {}

    def error_blocks(self, record: Record) -> list[Block]:
        """The sample's errors, shown first when there are any."""
        errors = self.errors(record)
        return [errors_block(errors)] if errors else []

    def blocks(self, record: Record) -> list[Block]:
        """What a sample's detail shows, in order."""
        blocks = self.error_blocks(record)
        judges = self.judges(record)
        skip = set(ERROR_FIELDS) | {"ragjudge"} | ({"scores"} if judges else set())
        blocks += generic_blocks(record, skip)
        metrics = self.metrics(record)
        if metrics:
            blocks.append({"kind": "metrics", "title": "Metrics", "items": [[k, v] for k, v in metrics.items()]})
        if judges:
            blocks.append(judges_block(judges))
        return blocks

# -- helpers views share ---------------------------------------------------------------------------

def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    return None


def _collect_errors(source: Record, prefix: str, out: dict[str, str]) -> None:
    for key in ERROR_FIELDS:
        value = source.get(key)
        if not value:
            continue
        where = prefix or key
        if isinstance(value, dict):
            out.update({f"{where}.{k}" if prefix else str(k): str(v) for k, v in value.items() if v})
        elif isinstance(value, list):
            out.update({f"{where}[{i}]": str(v) for i, v in enumerate(value) if v})
        else:
            out[where] = str(value)


def display(value: Any, limit: int = 4000) -> str:
    """A field value as text: strings as they are, the rest as compact JSON (cut at `limit`)."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit] + f"… ({len(text) - limit} more characters)"


def is_conversation(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(
        isinstance(t, dict) and isinstance(t.get("text", t.get("content")), str) and
        ("speaker" in t or "role" in t) for t in value)


def is_passages(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(p, dict) and isinstance(p.get("text"), str)
                                                           for p in value)


def conversation_block(turns: list[dict[str, Any]], title: str = "Conversation", *, shared: bool = False,
                       current_last_user: bool = False) -> Block:
    out = [{"speaker": str(t.get("speaker", t.get("role", ""))), "text": str(t.get("text", t.get("content", "")))}
           for t in turns]
    if current_last_user:
        for turn in reversed(out):
            if turn["speaker"] == "user":
                turn["current"] = True
                break
    return {"kind": "conversation", "title": title, "turns": out, "shared": shared}


def passage_item(p: dict[str, Any], mark: str | None = None) -> dict[str, Any]:
    item = {"id": str(p.get("document_id", p.get("_id", p.get("id", "")))), "title": p.get("title") or "",
            "text": p.get("text", ""), "score": _number(p.get("score"))}
    if mark:
        item["mark"] = mark
    return item


def passages_block(items: list[dict[str, Any]], title: str = "Passages", *, shared: bool = False,
                   note: str | None = None) -> Block:
    block: Block = {"kind": "passages", "title": title, "items": items, "shared": shared}
    if note:
        block["note"] = note
    return block


def text_block(title: str, text: str, *, shared: bool = False) -> Block:
    return {"kind": "text", "title": title, "text": text, "shared": shared}


def object_field(value: Any, field: str) -> dict[str, Any]:
    """A field a view reads as an object (None: empty); anything else is a TypeError, which the report turns into
    an error naming the results file and line."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise TypeError(f"field '{field}' must be an object, got {type(value).__name__}")
    return value


def errors_block(errors: dict[str, str]) -> Block:
    return {"kind": "errors", "title": "Errors", "items": [[k, v] for k, v in errors.items()]}


def judges_block(judges: dict[str, dict[str, Any]], title: str = "Judges") -> Block:
    return {"kind": "judges", "title": title, "items": [judge_item(name, r) for name, r in judges.items()]}


def judge_item(name: str, result: dict[str, Any]) -> dict[str, Any]:
    """The fields of a judge result the page shows; members recursively."""
    item: dict[str, Any] = {"name": name}
    for key in ("metric", "value", "label", "rationale", "raw", "error", "model", "prompt_tokens",
                "completion_tokens", "latency"):
        if result.get(key) is not None and result.get(key) != "":
            item[key] = result[key]
    details = {k: v for k, v in (result.get("details") or {}).items() if k != "cached"}
    if details:
        item["details"] = display(details, 2000)
    extra = {k: v for k, v in result.items() if k not in item and k not in ("details", "members", "judge")}
    if extra:
        item["details"] = (item.get("details", "") + " " + display(extra, 2000)).strip()
    if result.get("members"):
        item["members"] = [judge_item(str(m.get("model") or f"member {i + 1}"), m)
                           for i, m in enumerate(result["members"]) if isinstance(m, dict)]
    return item


def generic_blocks(record: Record, skip: set[str]) -> list[Block]:
    """Conversations, passages, long texts and one field table for everything else, in the record's order
    (the engine's default `output` dict is opened: its fields are the sample's)."""
    blocks: list[Block] = []
    fields: list[list[str]] = []
    _walk_fields(record, skip, "", blocks, fields)
    if fields:
        blocks.insert(0, {"kind": "fields", "title": "Fields", "items": fields})
    return blocks


def _walk_fields(record: Record, skip: set[str], prefix: str, blocks: list[Block], fields: list[list[str]]) -> None:
    for key, value in record.items():
        if key in skip:
            continue
        label = prefix + key
        if is_conversation(value):
            blocks.append(conversation_block(value, label))
        elif is_passages(value):
            blocks.append(passages_block([passage_item(p) for p in value], label))
        elif isinstance(value, str) and (len(value) >= LONG_TEXT or "\n" in value):
            blocks.append(text_block(label, value))
        elif isinstance(value, dict) and key == "output" and not prefix:
            _walk_fields(value, set(ERROR_FIELDS), f"{key}.", blocks, fields)
        elif key == "metrics" and isinstance(value, dict):
            continue  # shown in the metrics block
        else:
            fields.append([label, display(value)])

"""How `ragjudge report` shows a bench's samples: the generic view, which turns any `Sample` into what the page shows
(id, title, the facets the task list filters by, metrics, judges, errors, the detail as blocks).

A bench adds what only it knows by subclassing this (`Bench.view` names the class, e.g. MTRAG's flags of IDK vs RB
disagreement). Blocks are plain dicts (`kind` conversation, passages, text, judges, metrics, fields, errors);
`shared: True` marks a block that is the same for every run of the task (the conversation, the reference), shown
once above the runs' columns when comparing.
"""

from __future__ import annotations

import json
import math
from typing import Any

from ragjudge.formats.samples import Passage, Sample, Score

Block = dict[str, Any]
JUDGE_FIELDS = ("judge", "model", "raw", "rationale", "members")
"""A score with any of these carries a judge's verdict (shown in the judges block and the Judges tab)."""


class ReportView:
    """The generic view: every method reads one `Sample`."""

    passage_titles = ("Reference passages", "Passages", "are reference passages")
    """The titles of the reference passages and of the system's, and how a note counts references among the latter."""
    fold_references = True
    """The system's passages, when they are the references in order, shown as "the reference passages above"."""

    def __init__(self, run_info: dict[str, Any] | None = None):
        self.run_info = run_info or {}

    # -- per sample ---------------------------------------------------------------------------------

    def sample_id(self, sample: Sample) -> str:
        return sample.id

    def title(self, sample: Sample) -> str:
        """One line for the task list: the question."""
        return sample.question.strip() or sample.id

    def facets(self, sample: Sample) -> dict[str, str | list[str]]:
        """What the task list filters by: the sample's labels (the report keeps those with 2 to 30 values)."""
        return dict(sample.labels)

    def metrics(self, sample: Sample) -> dict[str, float]:
        return {k: v for k, v in sample.values().items() if math.isfinite(v)}

    def judges(self, sample: Sample) -> dict[str, Score]:
        """Scores that carry a judge's verdict, by judge name (the metric they gave as `metric`)."""
        found: dict[str, Score] = {}
        for name, score in sample.scores.items():
            if any(getattr(score, f) for f in JUDGE_FIELDS):
                found.setdefault(score.judge or name, score.model_copy(update={"metric": name}))
        return found

    def errors(self, sample: Sample) -> dict[str, str]:
        return sample.errors()

    def flags(self, sample: Sample) -> dict[str, bool]:
        """Named yes/no disagreements the task list can filter by (e.g. MTRAG's IDK vs RB)."""
        return {}

    def error_blocks(self, sample: Sample) -> list[Block]:
        """The sample's errors, shown first when there are any."""
        errors = self.errors(sample)
        return [errors_block(errors)] if errors else []

    def blocks(self, sample: Sample) -> list[Block]:
        """What a sample's detail shows, in order: errors, the question, the passages (references marked), the
        answer, the reference, metrics, judges, and the bench's other fields."""
        blocks = self.error_blocks(sample)
        if isinstance(sample.input, list):
            blocks.append(conversation_block([m.model_dump() for m in sample.input], "Conversation", shared=True,
                                             current_last_user=True))
        else:
            blocks.append(text_block("Question", sample.input, shared=True))
        blocks += self.passage_blocks(sample)
        if sample.output is not None or not sample.error:
            blocks.append(text_block("Answer", sample.output if sample.output is not None else "(no answer)"))
        for i, reference in enumerate([sample.target] if isinstance(sample.target, str) else sample.target or []):
            blocks.append(text_block("Reference" if i == 0 else f"Reference {i + 1}", reference, shared=True))
        if metrics := self.metrics(sample):
            blocks.append({"kind": "metrics", "title": "Metrics", "items": [[k, v] for k, v in metrics.items()]})
        if judges := self.judges(sample):
            blocks.append(judges_block(judges))
        if shown := self.metadata(sample):
            blocks += generic_blocks(shown)
        return blocks

    def metadata(self, sample: Sample) -> dict[str, Any]:
        """The sample's other fields, as the detail shows them (a bench may leave out what its other blocks show)."""
        return dict(sample.metadata)

    def passage_blocks(self, sample: Sample) -> list[Block]:
        """The reference passages (shared by every run of the task), then the passages the system retrieved or was
        shown, each marked when it is a reference."""
        blocks = []
        refs = {p.id for p in sample.target_contexts if p.id is not None}
        references, title, counted = self.passage_titles
        if sample.target_contexts:
            blocks.append(passages_block([passage_item(p, "reference") for p in sample.target_contexts], references,
                                         shared=True))
        if sample.contexts:
            same = refs and [p.id for p in sample.contexts] == [p.id for p in sample.target_contexts]
            if same and self.fold_references:
                blocks.append(passages_block([], "Passages the system saw", note="the reference passages above"))
            else:
                hits = sum(p.id in refs for p in sample.contexts)
                note = f"{hits} of {len(sample.contexts)} {counted}" if refs else None
                blocks.append(passages_block([passage_item(p, "reference" if p.id in refs else None)
                                              for p in sample.contexts], title, note=note))
        return blocks


# -- helpers views share ---------------------------------------------------------------------------

def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    return None


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
    if current_last_user and (last := next((t for t in reversed(out) if t["speaker"] == "user"), None)):
        last["current"] = True
    return {"kind": "conversation", "title": title, "turns": out, "shared": shared}


def passage_item(p: Passage | dict[str, Any], mark: str | None = None) -> dict[str, Any]:
    if isinstance(p, Passage):
        item = {"id": p.id or "", "title": p.title or "", "text": p.text or "", "score": _number(p.score)}
        mark = mark or p.metadata.get("origin")
    else:
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


def errors_block(errors: dict[str, str]) -> Block:
    return {"kind": "errors", "title": "Errors", "items": [[k, v] for k, v in errors.items()]}


def judges_block(judges: dict[str, Score], title: str = "Judges") -> Block:
    return {"kind": "judges", "title": title, "items": [judge_item(name, r) for name, r in judges.items()]}


def judge_item(name: str, score: Score) -> dict[str, Any]:
    """The fields of a judge's Score the page shows; members recursively."""
    result = score.model_dump(mode="json", exclude_defaults=True, exclude={"members"})
    if score.metric is not None:
        result = {"metric": score.metric, **result}
    item: dict[str, Any] = {"name": name} | {key: result[key] for key in (
        "metric", "value", "label", "rationale", "raw", "error", "model", "prompt_tokens", "completion_tokens",
        "latency") if result.get(key) not in (None, "")}
    if details := {k: v for k, v in (result.get("details") or {}).items() if k != "cached"}:
        item["details"] = display(details, 2000)
    if extra := {k: v for k, v in result.items() if k not in item and k not in ("details", "members", "judge")}:
        item["details"] = (item.get("details", "") + " " + display(extra, 2000)).strip()
    if score.members:
        item["members"] = [judge_item(m.model or f"member {i + 1}", m) for i, m in enumerate(score.members)]
    return item


def generic_blocks(metadata: dict[str, Any]) -> list[Block]:
    """A sample's other fields: conversations, passage lists and long texts as their own blocks, the rest in one
    field table (nested objects opened one level, `output.model`)."""
    blocks: list[Block] = []
    fields: list[list[str]] = []
    _walk_fields(metadata, "", blocks, fields)
    if fields:
        blocks.insert(0, {"kind": "fields", "title": "Fields", "items": fields})
    return blocks


LONG_TEXT = 120
"""Strings at least this long (or with a line break) get a text block rather than a field row."""


def _walk_fields(record: dict[str, Any], prefix: str, blocks: list[Block], fields: list[list[str]]) -> None:
    for key, value in record.items():
        label = prefix + key
        if is_conversation(value):
            blocks.append(conversation_block(value, label))
        elif is_passages(value):
            blocks.append(passages_block([passage_item(p) for p in value], label))
        elif isinstance(value, str) and (len(value) >= LONG_TEXT or "\n" in value):
            blocks.append(text_block(label, value))
        elif isinstance(value, dict) and value and not prefix:
            _walk_fields(value, f"{key}.", blocks, fields)
        else:
            fields.append([label, display(value)])

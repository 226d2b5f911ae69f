"""A result as a `Sample` when a bench says nothing better: read by convention from the bench's sample object and
the solver's output dict (docs/extending.md); a bench whose records have a known shape overrides `Bench.sample`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from ragjudge.formats.jsonl import to_jsonable
from ragjudge.formats.samples import Message, Passage, Sample, Score, contexts_of, messages

INPUT_TEXT = ("question", "query", "input", "prompt", "text", "user_input")
INPUT_TURNS = ("messages", "conversation", "input", "turns", "dialogue")
TARGET = ("reference", "target", "expected", "expected_output", "gold", "answer", "label")
OUTPUT_TEXT = ("answer", "response", "prediction", "text", "output", "label", "predicted")
OUTPUT_CONTEXTS = ("contexts", "passages", "retrieved", "ranking", "ranked")


def default_sample(sample_id: str, sample: Any, output: Mapping[str, Any], scores: Mapping[str, Mapping[str, Any]],
                   breakdowns: Sequence[str] = ()) -> Sample:
    fields = _fields(sample)
    rest = {k: v for k, v in output.items() if k != "error"}
    text = _first_text(rest, OUTPUT_TEXT)
    contexts, contexts_key = _contexts(rest)
    for key in (text[0] if text else None, contexts_key):
        if key is not None:
            rest.pop(key, None)
    labels = {}
    for name in breakdowns:
        value = fields.get(name)
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            labels[name] = str(value)
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            labels[name] = list(value)
    target = _target(fields)
    return Sample(id=sample_id, input=_input(fields, sample_id), target=target, output=text[1] if text else None,
                  contexts=contexts, scores={name: Score.of(s) for name, s in scores.items()}, labels=labels,
                  error=str(output["error"]) if output.get("error") else None,
                  metadata=to_jsonable({"output": rest} if rest else {}))


def _fields(sample: Any) -> dict[str, Any]:
    if isinstance(sample, BaseModel):
        return {name: getattr(sample, name) for name in type(sample).model_fields}
    if isinstance(sample, Mapping):
        return dict(sample)
    return {k: v for k, v in vars(sample).items() if not k.startswith("_")} if hasattr(sample, "__dict__") else {}


def _input(fields: Mapping[str, Any], sample_id: str) -> str | list[Message]:
    for key in INPUT_TURNS:
        value = fields.get(key)
        if isinstance(value, list) and value and all(_is_turn(t) for t in value):
            return messages(_as_dict(t) for t in value)
    found = _first_text(fields, INPUT_TEXT)
    return found[1] if found else sample_id


def _target(fields: Mapping[str, Any]) -> str | list[str] | None:
    for key in TARGET:
        value = fields.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return list(value)
    return None


def _contexts(output: Mapping[str, Any]) -> tuple[list[Passage], str | None]:
    for key in OUTPUT_CONTEXTS:
        value = output.get(key)
        if isinstance(value, list) and value:
            if all(isinstance(p, Mapping) for p in value):
                return contexts_of(value), key
            if all(isinstance(p, str) for p in value):
                return [Passage(id=p) for p in value], key
    return [], None


def _first_text(source: Mapping[str, Any], keys: Sequence[str]) -> tuple[str, str] | None:
    for key in keys:
        if isinstance(source.get(key), str):
            return key, source[key]
    return None


def _is_turn(value: Any) -> bool:
    turn = _as_dict(value)
    return isinstance(turn, Mapping) and isinstance(turn.get("text", turn.get("content")), str) and \
        ("speaker" in turn or "role" in turn)


def _as_dict(value: Any) -> Any:
    return value.model_dump() if isinstance(value, BaseModel) else value

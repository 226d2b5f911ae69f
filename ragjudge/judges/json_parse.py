"""Turn a model's text into a JSON value that satisfies the spec's JSON Schema, or an error with the reason (never a
default). Candidates, in order: the last ```json fence (or any fence), the whole text, every embedded JSON object or
array (last first); the first that satisfies the schema wins, else the error names the violation.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ragjudge.judges.spec import ParseSpec

_FENCE = re.compile(r"```[ \t]*([A-Za-z]*)[ \t]*\n(.*?)```", re.DOTALL)


@dataclass(frozen=True)
class ParsedJSON:
    value: Any = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def _embedded(text: str) -> list[Any]:
    """Every top-level JSON object/array found in the text, in order (nested ones are not listed twice)."""
    decoder = json.JSONDecoder()
    found: list[Any] = []
    end = 0
    for start, char in enumerate(text):
        if start >= end and char in "{[":
            try:
                value, end = decoder.raw_decode(text, start)
            except json.JSONDecodeError:
                continue
            found.append(value)
    return found


def candidates(text: str) -> list[Any]:
    """JSON values the text may mean, most likely first."""
    out: list[Any] = []
    fences = list(_FENCE.finditer(text))
    for fence in sorted(fences, key=lambda m: m.group(1).lower() != "json"):  # json fences first, stable
        out.extend(reversed(_embedded(fence.group(2))))
    try:
        out.append(json.loads(text.strip()))
    except json.JSONDecodeError:
        pass
    out.extend(reversed(_embedded(text)))
    return out


def parse_json_output(text: str, spec: ParseSpec) -> ParsedJSON:
    assert spec.kind == "json" and spec.json_schema is not None
    found = candidates(text or "")
    if not found:
        return ParsedJSON(error="unparsable output: no JSON object or array found")
    import jsonschema

    validator = jsonschema.validators.validator_for(spec.json_schema)(spec.json_schema)
    first_error: str | None = None
    for value in found:
        errors = sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
        if not errors:
            return ParsedJSON(value=value)
        if first_error is None:
            err = errors[0]
            where = "/".join(str(p) for p in err.absolute_path) or "(top level)"
            first_error = f"unparsable output: JSON at {where}: {err.message}"
    return ParsedJSON(error=first_error)

"""Turn a judge model's text into a value, or an error that keeps the raw text."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ragjudge.judges.spec import ParseSpec


@dataclass(frozen=True)
class Parsed:
    value: float | None
    label: str | None = None
    error: str | None = None


def parse_output(text: str, spec: ParseSpec) -> Parsed:
    matches = list(re.finditer(spec.pattern, text, flags=re.IGNORECASE | re.MULTILINE))
    if not matches:
        return Parsed(None, error="unparsable judge output: no match for the expected answer format")
    token = matches[-1].group(1).strip()
    if spec.kind == "choice":
        choices = {k.lower(): v for k, v in (spec.choices or {}).items()}
        label = token.lower()
        if label not in choices:
            return Parsed(None, error=f"unparsable judge output: {token!r} is not one of {sorted(choices)}")
        return Parsed(choices[label], label=label)
    try:
        number = float(token)
    except ValueError:
        return Parsed(None, error=f"unparsable judge output: {token!r} is not a number")
    assert spec.scale_max is not None
    if not spec.scale_min <= number <= spec.scale_max:
        return Parsed(None, error=f"rating {number:g} outside the scale {spec.scale_min:g}-{spec.scale_max:g}")
    return Parsed(number / spec.scale_max, label=f"{number:g}")

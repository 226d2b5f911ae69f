"""Declarative judge specs (YAML): prompt templates, output parsing and scales; adding a judge should mostly mean
adding one. Python-backed judges (RB_alg) point at their implementation and take their options from the spec.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ragjudge.specs import load_yaml_spec


class PromptSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    system: str | None = None
    user: str
    """A Jinja2 template; see `ragjudge.judges.llm_judge.template_variables` for what it can use."""


class ParseSpec(BaseModel):
    """How to turn the judge model's text into a value. No match is an error, never a default."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["choice", "rating", "json"]
    pattern: str | None = None
    """Regex whose first group is the label (choice) or number (rating); the last match wins."""
    choices: dict[str, float] | None = None
    scale_min: float = 1.0
    scale_max: float | None = None
    """Rating: values outside [scale_min, scale_max] are errors; the score is value / scale_max."""
    json_schema: dict[str, Any] | None = None
    """json: the JSON Schema the JSON value in the answer must satisfy (`ragjudge.judges.json_parse`)."""

    @model_validator(mode="after")
    def _check(self) -> ParseSpec:
        if self.kind == "json":
            return self._check_json()
        if self.pattern is None:
            raise ValueError(f"a {self.kind} parser needs pattern")
        try:
            compiled = re.compile(self.pattern)
        except re.error as exc:
            raise ValueError(f"pattern is not a valid regex: {exc}") from None
        if compiled.groups < 1:
            raise ValueError("pattern needs one capturing group")
        if self.kind == "choice" and not self.choices:
            raise ValueError("a choice parser needs choices")
        if self.kind == "rating" and self.scale_max is None:
            raise ValueError("a rating parser needs scale_max")
        return self

    def _check_json(self) -> ParseSpec:
        if self.pattern is not None or self.choices:
            raise ValueError("a json parser takes json_schema, not pattern or choices")
        if self.json_schema is None:
            raise ValueError("a json parser needs json_schema")
        import jsonschema

        try:
            jsonschema.validators.validator_for(self.json_schema).check_schema(self.json_schema)
        except jsonschema.SchemaError as exc:
            raise ValueError(f"json_schema is not a valid JSON Schema: {exc.message}") from None
        return self


class JudgeSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    description: str
    metric: str
    """The metric name written to results files (MTRAG's official name where there is one)."""
    higher_is_better: bool | None = True
    """Which way the metric is better (None: neither, e.g. how often an answer declines): shown in every table."""
    metric_kind: Literal["score", "rate", "number"] = "score"
    """What the metric's values are: a score or a rate in [0, 1], or another number (see ragjudge.engine.summary)."""
    bench: str | None = None
    """Whose samples this judge reads: none for an answer to a conversation with passages (MTRAG, `ragjudge
    judge`, the pytest plugin); a bench's name (`cxm`, `dialsim`) for judges of that bench's own items."""
    kind: Literal["llm", "python"]
    implementation: str | None = None
    """For kind=python: `module:Class`."""
    prompt: PromptSpec | None = None
    parse: ParseSpec | None = None
    panel: bool = False
    """Run by every judge model given; the score is their `aggregate`."""
    aggregate: Literal["median", "mean"] = "median"
    params: dict[str, Any] = Field(default_factory=dict)
    """Extra completion parameters (max_tokens, seed...); temperature is 0 unless set here."""
    requires: list[Literal["reference", "passages"]] = Field(default_factory=list)
    """Tasks lacking these are not judged (recorded as not applicable, not as a zero)."""
    options: dict[str, Any] = Field(default_factory=dict)
    source: str | None = None

    @model_validator(mode="after")
    def _check(self) -> JudgeSpec:
        if self.kind == "llm" and (self.prompt is None or self.parse is None):
            raise ValueError("an llm judge needs prompt and parse")
        if self.kind == "llm" and self.parse is not None and self.parse.kind == "json":
            raise ValueError("the generic llm judge parses choice or rating; json parsing is for python judges "
                             "and task runners (ragjudge.judges.json_parse)")
        if self.kind == "python" and not self.implementation:
            raise ValueError("a python judge needs implementation: 'module:Class'")
        return self

    def patterns(self, option: str, *, required: bool = False) -> re.Pattern[str] | None:
        """A lexical judge's list of regexes under `options.<option>`, as one case-insensitive alternation; a bad
        list or regex is an error naming the spec file and the option."""
        from ragjudge.errors import InputError

        patterns: Any = self.options.get(option)
        if patterns is None and not required:
            return None
        if not isinstance(patterns, list) or not patterns or not all(isinstance(p, str) for p in patterns):
            raise InputError("must list at least one regex", file=self.source, field=f"options.{option}")
        for i, pattern in enumerate(patterns):
            try:
                re.compile(pattern)
            except re.error as exc:
                raise InputError(f"not a regular expression: {exc}", file=self.source,
                                 field=f"options.{option}[{i}]") from None
        return re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)


def load_spec(path: Path) -> JudgeSpec:
    spec = load_yaml_spec(path, JudgeSpec, "judge")
    return spec.model_copy(update={"source": str(path)})

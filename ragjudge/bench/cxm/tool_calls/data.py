"""Tool calling: the tool catalog (OpenAI function schemas) and the cases with expected calls."""

from __future__ import annotations

import random
import re
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field as dataclass_field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from ragjudge.bench.cxm.data import conversation, id_of, new_id, records
from ragjudge.bench.cxm.models import ToolCall, ToolCase, parse_arguments
from ragjudge.bench.cxm.tables import field, id_list, listish, read_rows, require_file, structured
from ragjudge.errors import InputError


def _openai_tool(definition: Any, path: Path, line: int) -> dict[str, Any]:
    """OpenAI tool format: {"type": "function", "function": {"name", "description", "parameters"}}."""
    if isinstance(definition, dict) and definition.get("type", "function") != "function":
        raise InputError(f"a tool's type must be \"function\" (an OpenAI function tool), got {definition['type']!r}"
                         [:160], file=str(path), line=line, field="type")
    if isinstance(definition, dict) and isinstance(definition.get("function"), dict):
        function = definition["function"]
    elif isinstance(definition, dict) and "name" in definition:
        function = {k: v for k, v in definition.items() if k in ("name", "description", "parameters", "strict")}
    else:
        raise InputError("a tool needs an OpenAI function definition", file=str(path), line=line, field="definition")
    if not isinstance(function.get("name"), str) or not function["name"]:
        raise InputError("a tool definition needs a name", file=str(path), line=line, field="definition")
    function = {**function}
    function.setdefault("parameters", {"type": "object", "properties": {}})
    if not isinstance(function["parameters"], dict):
        raise InputError("a tool's parameters must be a JSON Schema object", file=str(path), line=line,
                         field="parameters")
    return {"type": "function", "function": function}


def load_tool_catalog(folder: Path) -> dict[str, dict[str, Any]]:
    """Tool name → OpenAI tool schema, from tools.jsonl or the release's Tools_Description."""
    path = require_file(folder, "tool definitions", ("tools.jsonl",), (("Tools_Description", "train"),))
    catalog: dict[str, dict[str, Any]] = OrderedDict()
    for line, row in read_rows(path, "tool definitions"):
        if "Definition" in row or "definition" in row:
            raw = field(row, "Definition", "definition")
            tool = _openai_tool(structured(raw, path=path, line=line, name="Definition"), path, line)
            declared = field(row, "Name", "name")
            if declared is not None and str(declared) != tool["function"]["name"]:
                raise InputError(f"Name {declared!r} differs from the definition's {tool['function']['name']!r}",
                                 file=str(path), line=line, field="Name")
        else:
            tool = _openai_tool(row, path, line)
        name = tool["function"]["name"]
        if name in catalog:
            raise InputError(f"tool {name!r} is defined twice", file=str(path), line=line, field="name")
        catalog[name] = tool
    return catalog


def _expected_calls(row: dict[str, Any], path: Path, line: int) -> list[ToolCall]:
    raw = field(row, "expected", "expected_calls", "true_tools")
    if raw is None:
        raise InputError("missing expected (or true_tools)", file=str(path), line=line)
    items = listish(raw, path=path, line=line, name="expected")
    calls = []
    for item in items:
        if isinstance(item, str):
            calls.append(ToolCall(name=item))
        elif isinstance(item, dict) and isinstance(item.get("name"), str):
            args = item.get("arguments")
            parsed = parse_arguments(args)
            if args is not None and parsed is None:
                raise InputError(f"arguments of {item['name']!r} are not a JSON object", file=str(path), line=line,
                                 field="expected")
            calls.append(ToolCall(name=item["name"], arguments=parsed))
        else:
            raise InputError("an expected call is a tool name or {name, arguments}", file=str(path), line=line,
                             field="expected")
    if not calls:
        raise InputError("no expected tool call", file=str(path), line=line, field="expected")
    return calls


def load_tool_cases(folder: Path, catalog: dict[str, dict[str, Any]]) -> list[ToolCase]:
    path = require_file(folder, "tool-call cases", ("tool_calls.jsonl",), (("Tool_Calling", "train"),))
    cases = []
    seen: set[str] = set()
    for line, index, row in records(path, "tool-call cases"):
        case_id = new_id(seen, id_of(row, ("case_id", "id"), path, line, index), "case", path, line, "case_id")
        expected = _expected_calls(row, path, line)
        candidates: dict[int, list[str]] = {}
        given = row.get("candidates")
        if given is not None and not isinstance(given, dict):
            raise InputError('candidates must be an object {"16": [tool names], ...}', file=str(path), line=line,
                             field="candidates")
        for size, names in (given or {}).items():
            if not str(size).strip().isdigit() or int(size) < 1:
                raise InputError(f"candidates keys are numbers of offered tools, got {size!r}", file=str(path),
                                 line=line, field="candidates")
            candidates[int(size)] = id_list(names, path=path, line=line, name=f"candidates.{size}")
        for key, value in row.items():  # the release: tool_candidates16, tool_candidates32, ...
            match = re.fullmatch(r"tool_candidates(\d+)", key)
            if match and value is not None:
                candidates[int(match.group(1))] = id_list(value, path=path, line=line, name=key)
        for size, names in candidates.items():
            unknown = [n for n in names if n not in catalog]
            if unknown:
                raise InputError(f"offered tool {unknown[0]!r} is not in the tool definitions", file=str(path),
                                 line=line, field=f"candidates.{size}")
            missing = [c.name for c in expected if c.name not in names]
            if missing:
                raise InputError(f"expected tool {missing[0]!r} is not among the {size} offered", file=str(path),
                                 line=line, field=f"candidates.{size}")
        unknown = [i for i, c in enumerate(expected) if c.name not in catalog]
        if unknown:
            raise InputError(f"expected tool {expected[unknown[0]].name!r} is not in the tool definitions",
                             file=str(path), line=line, field=f"expected[{unknown[0]}].name")
        kb_ids = id_list(field(row, "kb_ids", "kbs"), path=path, line=line, name="kb_ids")
        cases.append(ToolCase(case_id=case_id, messages=conversation(row, path, line), expected=expected,
                              candidates=dict(sorted(candidates.items())), kb_ids=kb_ids))
    return cases


class ToolSample(BaseModel):
    """One conversation offered one set of tools."""

    model_config = ConfigDict(frozen=True)

    id: str
    case: ToolCase
    offered: list[str]


def offered_tools(case: ToolCase, catalog: Sequence[str], size: int) -> list[str] | None:
    """The case's own candidate list for `size`, else the expected tools plus distractors: a seeded
    permutation of the rest of the catalog, so a smaller offer is always contained in a larger one.
    None if the catalog has fewer than `size` tools."""
    if size in case.candidates:
        return list(case.candidates[size])
    if size > len(catalog):
        return None
    expected = list(dict.fromkeys(c.name for c in case.expected))
    rng = random.Random(f"cxm-tools/{case.case_id}")
    rest = [name for name in catalog if name not in expected]
    rng.shuffle(rest)
    names = expected + rest[: max(0, size - len(expected))]
    random.Random(f"cxm-tools/{case.case_id}/{size}").shuffle(names)
    return names


@dataclass
class Plan:
    """What a run offers: a sample per (case, number of tools) the catalog allows, and what it leaves out."""

    samples: list[ToolSample]
    notes: list[str] = dataclass_field(default_factory=list)
    """One line per number of tools some cases are not run with (the catalog is smaller)."""
    never_offered: list[ToolCase] = dataclass_field(default_factory=list)
    """Cases run with no number of tools at all: reported as missing."""
    offered_by_data: dict[int, bool] = dataclass_field(default_factory=dict)
    """For each number of offered tools, whether every case's offer is the data's own candidate list."""


def plan(cases: Sequence[ToolCase], catalog: Sequence[str], tool_counts: Sequence[int], mode: str) -> Plan:
    samples, skipped = [], {}
    for case in cases:
        for size in tool_counts:
            offered = offered_tools(case, catalog, size)
            if offered is None:
                skipped[size] = skipped.get(size, 0) + 1
                continue
            samples.append(ToolSample(id=f"{case.case_id}@{size}/{mode}", case=case, offered=offered))
    offered_ids = {s.case.case_id for s in samples}
    return Plan(samples, [f"{n} case(s) not run with {size} tools: the catalog has only {len(catalog)} tools"
                          for size, n in sorted(skipped.items())],
                [c for c in cases if c.case_id not in offered_ids],
                {size: all(size in c.candidates for c in cases) for size in tool_counts})

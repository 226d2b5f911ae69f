"""The cxm_* specs in `judges/`: prompts for the model under test and for the judges, rendered here with
task variables (not the MTRAG ones), and the MTRAG-facing stand-in the judge registry builds for them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ragjudge.formats.samples import Score
from ragjudge.judges.base import Judge, JudgeContext, JudgedItem
from ragjudge.judges.json_parse import ParsedJSON, parse_json_output
from ragjudge.judges.llm_judge import render
from ragjudge.judges.parsing import Parsed, parse_output
from ragjudge.judges.registry import JudgeRegistry
from ragjudge.judges.spec import JudgeSpec

INTENT_PREDICTION = "cxm_intent_prediction"
INTENT_MATCH = "cxm_intent_match"
QUALITY = "cxm_quality_adherence"
TOOL_CALL = "cxm_tool_call"
AGENT_RESPONSE = "cxm_agent_response"
ANSWER_CLASS = "cxm_answer_classification"
QUERY_FORMATION = "cxm_query_formation"
CONTRADICTION = "cxm_contradiction"


class PromptBook:
    """The cxm specs by name; `--judge-dir` folders can override any of them."""

    def __init__(self, extra_dirs: list[str | Path] | None = None):
        self._registry = JudgeRegistry(extra_dirs, bench="cxm")

    def spec(self, name: str) -> JudgeSpec:
        return self._registry.spec(name)


def messages(spec: JudgeSpec, variables: dict[str, Any],
             chat: list[dict[str, str]] | None = None) -> list[dict[str, str]]:
    """System prompt, then the chat itself if given, then the user prompt (skipped when it renders empty)."""
    assert spec.prompt is not None
    out = []
    if spec.prompt.system:
        out.append({"role": "system", "content": render(spec.prompt.system, variables)})
    out.extend(chat or [])
    user = render(spec.prompt.user, variables)
    if user.strip():
        out.append({"role": "user", "content": user})
    return out


def parse_choice(text: str, spec: JudgeSpec) -> Parsed:
    assert spec.parse is not None and spec.parse.kind == "choice"
    return parse_output(text, spec.parse)


def parse_json(text: str, spec: JudgeSpec) -> ParsedJSON:
    assert spec.parse is not None and spec.parse.kind == "json"
    return parse_json_output(text, spec.parse)


def fingerprint_of(spec: JudgeSpec | None, *extra: Any) -> str:
    """Changes whenever the prompt, parser or parameters change, so stale journal rows are not reused."""
    import hashlib

    dumped = spec.model_dump(mode="json", exclude={"source"}) if spec is not None else None
    blob = json.dumps([dumped, *extra], sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


class CXMPromptJudge(Judge):
    """What the judge registry builds for a cxm_* spec. These prompts take CXMArena inputs (a taxonomy,
    quality questions, offered tools...), so asked to judge MTRAG answers they decline, item by item."""

    needs_llm = False

    async def judge(self, items: list[JudgedItem], ctx: JudgeContext) -> list[Score]:
        task = self.spec.options.get("task", "a CXMArena task")
        message = (f"{self.name} is a CXMArena prompt ({task}); it does not judge MTRAG answers. "
                   f"Run it with `ragjudge eval --bench cxm-{task}`")
        ctx.on_progress(len(items))
        return [self.result(error=message) for _ in items]

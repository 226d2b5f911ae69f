"""Query strategies: how a multi-turn conversation becomes one retrieval query (docs/pipelines.md, Query
strategies). `last_turn`, `all_user_turns` and `rewrite` are MTRAG's "last turn", "questions" and "rewrite";
`all_user_turns` puts one turn a line, `full_conversation` marks each turn with its speaker.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from ragjudge.errors import InputError, UsageError
from ragjudge.llm import LLMError, LLMGateway
from ragjudge.models import Task
from ragjudge.retrieval.spec import QuerySpec

_SPEAKER_TAG = re.compile(r"(?m)^[ \t]*\|(?:user|agent|assistant|system)\|:[ \t]*")


def strip_speaker_tags(text: str) -> str:
    """`|user|: where do ...` → `where do ...` (MTRAG's query files mark every turn this way)."""
    return _SPEAKER_TAG.sub("", text).strip()


def _tagged(speaker: str, text: str) -> str:
    return f"|{speaker}|: {text.strip()}"


def last_turn(task: Task) -> str:
    return task.question.strip()


def all_user_turns(task: Task) -> str:
    return "\n".join(_tagged("user", t.text) for t in task.input if t.speaker == "user" and t.text.strip())


def full_conversation(task: Task) -> str:
    return "\n".join(_tagged(t.speaker, t.text) for t in task.input if t.text.strip())


# The MTRAG paper (Katsis et al., 2025) describes its rewrite step (an LLM classifies the last question
# as standalone or not and rewrites it into a standalone question) but publishes the exact prompt only
# as an image. This prompt is our faithful rendering of that description, not a verbatim copy.
REWRITE_SYSTEM = """\
You help a search engine. You are given a conversation between a user and an agent, and the user's \
latest question.

1. Decide whether the latest question can be understood on its own ("standalone") or only with the \
conversation before it ("non-standalone"), for example because it uses pronouns, ellipsis or refers to \
something said earlier.
2. If it is non-standalone, rewrite it as a standalone question with the same meaning, replacing every \
reference with what it refers to in the conversation. Do not answer the question and do not add \
information that is not in the conversation. If it is standalone, repeat it unchanged.

Reply with JSON only, exactly in this form:
{"class": "standalone" or "non-standalone", "question": "<the standalone question>"}"""

REWRITE_USER = """\
Conversation:
{conversation}

Latest question: {question}"""

REWRITE_CLASSES = ("standalone", "non-standalone")


@dataclass
class BuiltQuery:
    task_id: str
    text: str
    strategy: str
    question_class: str | None = None
    """rewrite: the model's standalone / non-standalone label."""
    fallback: str | None = None
    """rewrite: why the last turn was used instead (malformed answer, failed call)."""
    raw: str | None = None


def rewrite_messages(task: Task) -> list[dict[str, str]]:
    history = "\n".join(_tagged(t.speaker, t.text) for t in task.history if t.text.strip())
    return [{"role": "system", "content": REWRITE_SYSTEM},
            {"role": "user", "content": REWRITE_USER.format(conversation=history, question=task.question.strip())}]


def parse_rewrite(text: str) -> tuple[str, str]:
    """(class, question) from the model's answer; ValueError says what is wrong with it."""
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            obj, _ = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict) and ("question" in obj or "class" in obj):
            break
    else:
        raise ValueError("no JSON object with 'class' and 'question'")
    label = obj.get("class")
    question = obj.get("question")
    if not isinstance(label, str) or label.strip().lower() not in REWRITE_CLASSES:
        raise ValueError(f"'class' must be standalone or non-standalone, got {label!r}")
    if not isinstance(question, str) or not question.strip():
        raise ValueError("'question' is missing or empty")
    return label.strip().lower(), question.strip()


class QueryBuilder:
    """Turns tasks into queries with one strategy; `stats` counts what happened (rewrites, fallbacks)."""

    def __init__(self, spec: QuerySpec, *, gateway: LLMGateway | None = None, strip_tags: bool = True):
        self.spec = spec
        self.gateway = gateway
        self.strip_tags = strip_tags
        self.stats: Counter[str] = Counter()
        if spec.strategy == "rewrite":
            if not spec.model:
                raise UsageError("the rewrite query strategy needs a model: set query.model in the pipeline "
                                 "spec or pass --rewrite-model")
            if gateway is None:
                raise UsageError("the rewrite query strategy needs an LLM gateway")

    def _finish(self, text: str) -> str:
        return strip_speaker_tags(text) if self.strip_tags else text.strip()

    def _simple(self, task: Task) -> BuiltQuery:
        fn = {"last_turn": last_turn, "all_user_turns": all_user_turns, "full_conversation": full_conversation}
        return BuiltQuery(task.task_id, self._finish(fn[self.spec.strategy](task)), self.spec.strategy)

    async def _rewrite(self, task: Task) -> BuiltQuery:
        question = last_turn(task)
        if not any(t.text.strip() for t in task.history):
            self.stats["first_turn"] += 1  # nothing to resolve against: the question is its own rewrite
            return BuiltQuery(task.task_id, self._finish(question), "rewrite", question_class="standalone")
        assert self.gateway is not None and self.spec.model is not None
        try:
            response = await self.gateway.complete(self.spec.model, rewrite_messages(task), **self.spec.params)
        except LLMError as exc:
            self.stats["fallback_error"] += 1
            return BuiltQuery(task.task_id, self._finish(question), "rewrite", fallback=f"call failed: {exc}")
        try:
            label, rewritten = parse_rewrite(response.text)
        except ValueError as exc:
            self.stats["fallback_malformed"] += 1
            return BuiltQuery(task.task_id, self._finish(question), "rewrite", fallback=f"malformed answer: {exc}",
                              raw=response.text)
        self.stats["rewritten"] += 1
        self.stats[label] += 1
        return BuiltQuery(task.task_id, self._finish(rewritten), "rewrite", question_class=label, raw=response.text)

    async def build(self, tasks: list[Task]) -> list[BuiltQuery]:
        for task in tasks:
            if not last_turn(task):
                raise InputError(f"task {task.task_id!r}: the last user turn is empty, there is nothing to search for",
                                 field="input")
        built = [self._simple(t) for t in tasks] if self.spec.strategy != "rewrite" else \
            list(await asyncio.gather(*(self._rewrite(t) for t in tasks)))
        for query in built:
            if not query.text:
                raise InputError(f"task {query.task_id!r}: the {query.strategy} query is empty", field="input")
        return built

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {"strategy": self.spec.strategy}
        if self.spec.strategy == "rewrite":
            out.update({"model": self.spec.model, **{k: self.stats.get(k, 0) for k in (
                "rewritten", "standalone", "non-standalone", "first_turn", "fallback_malformed", "fallback_error")}})
        return out


def rewrite_warning(query_summary: dict[str, Any]) -> str | None:
    """One stderr line when rewrites fell back to the last turn: counted in the outputs, and said aloud."""
    malformed, failed = query_summary.get("fallback_malformed", 0), query_summary.get("fallback_error", 0)
    if not malformed and not failed:
        return None
    return (f"warning: {malformed + failed} rewrite(s) fell back to the last user turn ({malformed} malformed "
            f"answer(s), {failed} failed call(s) of {query_summary.get('model')})")

"""An offline "I don't know" detector from patterns; its agreement with the LLM IDK judge is measurable."""

from __future__ import annotations

import re

from ragjudge.errors import InputError
from ragjudge.judges.base import Judge, JudgeContext, JudgeItem
from ragjudge.judges.spec import JudgeSpec
from ragjudge.models import JudgeResult

_SENTENCE = re.compile(r"(?<=[.!?])\s+")


class LexicalIDKJudge(Judge):
    """yes: the response only declines; partial: it declines part and answers part; no: it answers."""

    def __init__(self, spec: JudgeSpec):
        super().__init__(spec)
        patterns = spec.options.get("patterns") or []
        if not isinstance(patterns, list) or not patterns or not all(isinstance(p, str) for p in patterns):
            raise InputError("must list at least one regex", file=spec.source, field="options.patterns")
        for i, pattern in enumerate(patterns):
            try:
                re.compile(pattern)
            except re.error as exc:
                raise InputError(f"not a regular expression: {exc}", file=spec.source,
                                 field=f"options.patterns[{i}]") from None
        self.pattern = re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)
        words = spec.options.get("min_answer_words", 12)
        if isinstance(words, bool) or not isinstance(words, int) or words < 0:
            raise InputError(f"must be a whole number, got {words!r}", file=spec.source,
                             field="options.min_answer_words")
        self.min_answer_words = words
        self.values = {"yes": 1.0, "partial": 0.5, "no": 0.0}

    def classify(self, text: str) -> tuple[str, str]:
        sentences = [s for s in _SENTENCE.split(text.strip()) if s]
        declining = [s for s in sentences if self.pattern.search(s)]
        if not declining:
            return "no", "no declining phrase found"
        answer_words = sum(len(s.split()) for s in sentences if s not in declining)
        if answer_words >= self.min_answer_words:
            return "partial", f"declines ({declining[0]!r}) but also answers with {answer_words} words"
        return "yes", f"declines: {declining[0]!r}"

    async def judge(self, items: list[JudgeItem], ctx: JudgeContext) -> list[JudgeResult]:
        results = []
        for item in items:
            label, why = self.classify(item.prediction.text)
            results.append(self.result(value=self.values[label], label=label, rationale=why, model="patterns"))
        ctx.on_progress(len(items))
        return results

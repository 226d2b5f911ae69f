"""An offline "I don't know" detector from patterns; its agreement with the LLM IDK judge is measurable.

How it reads a response (clauses cut at a contrast, declining / filler / answer clauses, a decline inside a condition
not counting) and how well it agrees: docs/judges.md ("How `idk_lexical` reads an answer"). The patterns are options of
`judges/idk_lexical.yaml`. A clause also declines when an `after_apology` entry matches it and it begins with, or
follows, an apology. No declining clause: 0; declining clauses and at least `min_answer_words` words of answer: 0.5;
less answer: 1.
"""

from __future__ import annotations

import re

from ragjudge.errors import InputError
from ragjudge.judges.base import LexicalJudge, unconditional
from ragjudge.judges.spec import JudgeSpec
from ragjudge.normalize import normalize_for_matching

_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_CLAUSE = re.compile(r"\s*;\s*|,?\s+(?=(?:but|however|nevertheless|nonetheless|although)\b)", re.IGNORECASE)
_CONDITION = re.compile(r"\b(?:if|when|whenever|unless|in case)\b[^,;:]*$")
"""A condition opened before a match, with no comma in between, makes it hypothetical ("if it is not available")."""


class LexicalIDKJudge(LexicalJudge):
    """yes: the response only declines; partial: it declines part and answers part; no: it answers."""

    values = {"yes": 1.0, "partial": 0.5, "no": 0.0}

    def __init__(self, spec: JudgeSpec):
        super().__init__(spec)
        self.pattern = spec.patterns("patterns", required=True)
        self.after_apology = spec.patterns("after_apology")
        self.apology = spec.patterns("apology")
        self.filler = spec.patterns("filler")
        words = spec.options.get("min_answer_words", 12)
        if isinstance(words, bool) or not isinstance(words, int) or words < 0:
            raise InputError(f"must be a whole number, got {words!r}", file=spec.source,
                             field="options.min_answer_words")
        self.min_answer_words = words

    def _apologises(self, clause: str) -> bool:
        return self.apology is not None and self.apology.match(clause.lstrip(" \"'(-")) is not None

    def classify(self, text: str) -> tuple[str, str]:
        declining: list[str] = []  # the sentences holding a declining clause, as written
        answer_words = 0
        after_apology = False
        for sentence in (s for s in _SENTENCE.split(text.strip()) if s):
            for clause in (c for c in _CLAUSE.split(sentence) if c and c.strip()):
                norm = normalize_for_matching(clause)
                apologises = self._apologises(norm)
                if unconditional(self.pattern, norm, _CONDITION) or (
                        (apologises or after_apology) and unconditional(self.after_apology, norm, _CONDITION)):
                    if sentence not in declining:
                        declining.append(sentence)
                elif not (self.filler is not None and self.filler.fullmatch(norm.strip(" .!?,;:"))):
                    answer_words += len(clause.split())
                after_apology = apologises
        if not declining:
            return "no", "no declining phrase found"
        if answer_words >= self.min_answer_words:
            return "partial", f"declines ({declining[0]!r}) but also answers with {answer_words} words"
        return "yes", f"declines: {declining[0]!r}"

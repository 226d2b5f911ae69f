"""An offline clarification detector: does a response ask the user for the information it is missing?

As MTRAG-UN's clarification judge defines it (`judges/underspecified.yaml`): a direct clarification question ("Which
one are you referring to?") or a directive request ("Please specify the county.") counts; saying it cannot answer,
naming what is missing without asking, or an unrelated question ("Anything else I can help with?") does not.
The text is cut into sentences (at `.`, `!`, `?` + space, and line breaks), each normalised; a sentence ending in "?"
counts when a `questions` pattern matches, any sentence when a `requests` one does (options of
`judges/underspecified_lexical.yaml`), but not a match inside a condition ("if you can tell me which one, ...") nor
a sentence a `not_clarification` pattern matches (an offer of more help). One clarifying sentence: 1; none: 0.
"""

from __future__ import annotations

import re

from ragjudge.judges.base import LexicalJudge, unconditional
from ragjudge.judges.spec import JudgeSpec
from ragjudge.normalize import normalize_for_matching

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\s*\n+\s*")
_CONDITION = re.compile(r"\b(?:if|when|whenever|once|unless|in case)\b[^,;:]*$")
"""An "if ..." opened before a match, with no comma in between, makes it conditional, not a request."""
_TRAILING = " \"')]*_"
"""Stripped from a sentence's end before looking for its question mark: `"Which one?"`, `(which one?)`."""


def sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE.split(text.strip()) if s and s.strip()]


class LexicalUnderspecifiedJudge(LexicalJudge):
    """yes (1): the response asks the user to clarify or to provide what is missing; no (0): it does not."""

    values = {"yes": 1.0, "no": 0.0}

    def __init__(self, spec: JudgeSpec):
        super().__init__(spec)
        self.questions = spec.patterns("questions", required=True)
        self.requests = spec.patterns("requests", required=True)
        self.not_clarification = spec.patterns("not_clarification")

    def clarifying_sentence(self, text: str) -> str | None:
        """The first sentence of `text` (as written) that asks the user for clarification, or None."""
        for sentence in sentences(text):
            norm = normalize_for_matching(sentence)
            if self.not_clarification is not None and self.not_clarification.search(norm):
                continue
            asks = norm.rstrip(_TRAILING).endswith("?") and unconditional(self.questions, norm, _CONDITION)
            if asks or unconditional(self.requests, norm, _CONDITION):
                return sentence
        return None

    def classify(self, text: str) -> tuple[str, str]:
        found = self.clarifying_sentence(text)
        if found is None:
            return "no", "no clarification question or request found"
        return "yes", f"asks for clarification: {found!r}"

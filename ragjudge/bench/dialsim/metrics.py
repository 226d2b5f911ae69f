"""The per-answer metrics: pure functions of the agent's answer, no LLM. The rules: docs/benches/dialsim.md (Scoring
and the summary). Official orders kept here: `mc` is the official `judge_eq`, and other option tokens count in
either case; `calibrate` checks "answer is (A)" first, then the `[EXPLANATION]` rule (the part before it decides),
then (B) to (E). Phrases and option texts match regardless of case (officially option texts were compared against an
upper-cased answer, so "Paul" never matched "PAUL"). The exact match is `answer == gold` or `gold + "."`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Literal

from ragjudge.bench.dialsim.plan import OPTION_LETTERS
from ragjudge.normalize import normalize_for_matching

Verdict = Literal["correct", "wrong", "ambiguous"]
IDK = OPTION_LETTERS[4]
AMBIGUOUS_CHOICE = "([/AMB/])"
NO_CHOICE = "([N/A])"
_ALL_TOKENS = tuple(OPTION_LETTERS) + tuple(t.lower() for t in OPTION_LETTERS)

_IDK_PATTERNS = [re.compile(p) for p in (
    r"\bi (?:do not|don'?t|dont) know\b", r"\bi'?m not sure\b", r"\bnot sure\b", r"\bno idea\b",
    r"\b(?:cannot|can'?t|can not|unable to|could ?n'?t|could not) (?:answer|tell|determine|say|know|be sure)\b",
    r"\bno (?:information|mention|record|relevant|details?|evidence)\b", r"\bnot enough (?:information|context)\b",
    r"\binsufficient (?:information|context)\b",
    r"\b(?:is|was|are|were)(?: not|n'?t) (?:mentioned|specified|provided|stated|known|clear|given)\b",
    r"\bdoes(?: not|n'?t) (?:mention|specify|provide|say|state|contain|include|indicate)\b",
    r"\bnone of the (?:options|above|choices)\b", r"\bunknown\b", r"\bno way to know\b")]
_ARTICLES = re.compile(r"\b(?:a|an|the)\b")


def strict_mc(gold: str, answer: str) -> Verdict:
    if not answer or gold not in answer:
        return "wrong"
    others = [t for t in _ALL_TOKENS if t not in (gold, gold.lower())]
    return "ambiguous" if any(t in answer for t in others) else "correct"


def distill(answer: str) -> str:
    """The option an answer names: `(A)`..`(E)`, `([/AMB/])` for several, `([N/A])` for none (official)."""
    for letter in OPTION_LETTERS:
        if letter in answer or letter.lower() in answer:
            others = [t for t in _ALL_TOKENS if t not in (letter, letter.lower())]
            return AMBIGUOUS_CHOICE if any(t in answer for t in others) else letter
    return NO_CHOICE


def calibrate(gold: str, answer: str, options: Sequence[str]) -> Verdict:
    """The official re-reading of an answer `strict_mc` found ambiguous."""
    low = answer.lower()
    if "none of the options" in low:
        return "correct" if gold == IDK else "wrong"

    def names(letter: str) -> bool:
        return f"answer is {letter.lower()}" in low

    if names(OPTION_LETTERS[0]):
        return "correct" if gold == OPTION_LETTERS[0] else "wrong"
    if "[explanation]" in low:
        explicit = low.split("[explanation]")[0]
        gold_text = options[OPTION_LETTERS.index(gold)].lower().strip()
        if gold.lower() in explicit:
            others = [t for t in OPTION_LETTERS if t != gold]
            return "ambiguous" if any(t in answer for t in others) else "correct"
        if gold_text and gold_text in explicit:
            other_texts = [o.lower().strip() for o in options if o.lower().strip() != gold_text]
            return "ambiguous" if any(t and t in explicit for t in other_texts) else "correct"
    for letter in OPTION_LETTERS[1:]:
        if names(letter):
            return "correct" if gold == letter else "wrong"
    return "ambiguous"


def exact_match(gold_text: str, answer: str) -> bool:
    """The official shortcut before the LLM judge: the answer is the gold text, with or without a full stop."""
    return answer == gold_text or answer == f"{gold_text}."


def normalize(text: str) -> str:
    text = unicodedata.normalize("NFKD", normalize_for_matching(text)).encode("ascii", "ignore").decode()
    text = re.sub(r"[^a-z0-9']+", " ", text).replace("'", "")
    return " ".join(_ARTICLES.sub(" ", text).split())


def phrase_in(phrase: str, text: str) -> bool:
    return bool(phrase) and f" {phrase} " in f" {text} "


def says_idk(answer: str) -> bool:
    low = normalize_for_matching(answer)
    return any(p.search(low) for p in _IDK_PATTERNS)


def options_named(answer: str, options: Sequence[str]) -> list[int]:
    """Which of the four answer options (A-D) the answer names, by normalised whole-word match."""
    norm = normalize(answer)
    return [i for i, o in enumerate(options[:4]) if phrase_in(normalize(o), norm)]


def lexical_verdict(answer: str, gold_text: str, options: Sequence[str], gold_is_idk: bool) -> Verdict:
    """The offline judge for natural-language answers: the gold text (normalised, whole words) and no other
    option; for an unanswerable question, an admission of not knowing that names no option."""
    named = options_named(answer, options)
    if gold_is_idk:
        return "correct" if says_idk(answer) and not named else ("ambiguous" if says_idk(answer) else "wrong")
    gold = normalize(gold_text)
    has_gold = phrase_in(gold, normalize(answer))
    others = [i for i in named if normalize(options[i]) != gold and not phrase_in(normalize(options[i]), gold)]
    if has_gold and (others or says_idk(answer)):
        return "ambiguous"
    return "correct" if has_gold else "wrong"


def declined(fmt: str, answer: str, options: Sequence[str]) -> bool:
    """Did the agent say it does not know? (E), or an admission that names no option."""
    if fmt == "mc":
        choice = distill(answer)
        return choice == IDK or (choice == NO_CHOICE and says_idk(answer))
    return says_idk(answer) and not options_named(answer, options)


def committed(fmt: str, answer: str, options: Sequence[str]) -> bool:
    """Did the agent give a definite answer (an option A-D, or a non-empty answer that does not decline)?"""
    if fmt == "mc":
        return distill(answer) in OPTION_LETTERS[:4]
    if fmt == "mc-nl":
        return len(options_named(answer, options)) == 1 and not says_idk(answer)
    return bool(answer.strip()) and not says_idk(answer)

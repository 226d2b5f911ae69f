"""A tiny RAG app to test: a help desk for a (fictional) public library.

Retrieval ranks the passages in passages.jsonl by the idf-weighted words they share with the question
(plus the previous question, for follow-ups); the answer is the best-matching sentences of the top
passage, or "I don't know" when nothing matches well enough. Plain Python, no model, no network.
Its known weakness is synonyms: a question that shares no word with the right passage finds nothing.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

PASSAGES_FILE = Path(__file__).with_name("passages.jsonl")
STOPWORDS = frozenset("""
a about after all an and any are as at be by can could did do does for from get got has have how i if in into is
it its me my no not of on or our so than that the their them then there these they this those to up us was we
were what when where which who why will with would you your also just much many may another once
""".split())
MIN_SCORE = 1.5
"""Below this retrieval score the app declines instead of answering."""
IDK = "I'm sorry, I don't know: the library's documents do not cover that."
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_FOLLOW_UP = re.compile(r"\b(it|its|they|them|that|those|this|these|one)\b", re.IGNORECASE)


@dataclass
class Reply:
    text: str
    passages: list[dict] = field(default_factory=list)
    """What was retrieved, best first: {"id", "title", "text", "score"}."""


def words(text: str) -> list[str]:
    """Lower-case content words, with a crude plural stemmer so "fines" matches "fine"."""
    out = []
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        if word in STOPWORDS:
            continue
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        out.append(word)
    return out


@cache
def passages() -> tuple[dict, ...]:
    with PASSAGES_FILE.open(encoding="utf-8") as fh:
        return tuple({"id": r["_id"], "title": r["title"], "text": r["text"]} for r in map(json.loads, fh))


@cache
def _idf() -> dict[str, float]:
    docs = [set(words(p["title"] + " " + p["text"])) for p in passages()]
    vocabulary = set().union(*docs)
    return {w: math.log(1 + len(docs) / sum(w in d for d in docs)) for w in vocabulary}


def retrieve(query: str, k: int = 3) -> list[dict]:
    idf = _idf()
    wanted = set(words(query))
    scored = []
    for passage in passages():
        shared = wanted & set(words(passage["title"] + " " + passage["text"]))
        score = sum(idf[w] for w in shared)
        if score > 0:
            scored.append({**passage, "score": round(score, 3)})
    scored.sort(key=lambda p: -p["score"])
    return scored[:k]


def answer(question: str, history: Sequence[object] = ()) -> Reply:
    """Answer the last question of a conversation; `history` holds earlier turns (dicts or ragjudge Turns)."""
    query = question
    if _FOLLOW_UP.search(question):  # "How long can I keep them?" needs the previous question's words
        previous = [_text(t) for t in history if _speaker(t) == "user"]
        if previous:
            query = previous[-1] + " " + question
    found = retrieve(query)
    if not found or found[0]["score"] < MIN_SCORE:
        return Reply(IDK, found)
    wanted = set(words(query))
    sentences = _SENTENCE.split(found[0]["text"])
    overlap = [len(wanted & set(words(s))) for s in sentences]
    best = max(overlap)
    chosen = [s for s, n in zip(sentences, overlap, strict=True) if n == best and n > 0][:2]
    return Reply(" ".join(chosen) if chosen else IDK, found)


def _speaker(turn: Any) -> str:
    return turn["speaker"] if isinstance(turn, dict) else turn.speaker


def _text(turn: Any) -> str:
    return turn["text"] if isinstance(turn, dict) else turn.text

"""What MTRAG-UN's summary adds to MTRAG's: Table 4 beside the run's figures, the answers to UNDERSPECIFIED tasks by
the paper's Table 5 types, and a note when the tasks do not say which questions are standalone.

Table 5 defines three ways a right answer asks for more information, with examples but no counts; a simple reading
(`response_type`, also in each sample's `metadata.response_type`) sorts a run's answers so a reader sees how a
system asks, not only whether.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ragjudge.bench.mtrag.metrics import CLARIFICATION_METRIC, TaskOutcome
from ragjudge.bench.mtrag.un import leaderboard
from ragjudge.bench.mtrag.un.data import CLARIFICATION_LABEL
from ragjudge.bench.mtrag.un.paper import generation_reference
from ragjudge.bench.mtrag.un.task_score import RANKED, add_task_score
from ragjudge.engine.summary import Summary, Table

REFERENCE_BASED = ("RB_agg", "RB_llm", "RL_F")
"""The paper's Table 4 is printed when the run has one of these."""

TYPES = ("hedging with answers", "hedging over list", "open-domain", "does not ask for clarification",
         "not judged")
TYPE_NOTES = [
    "the paper's Table 5 types, each ending with a request for more information: hedging with answers (few "
    "options, each briefly described or answered), hedging over list (an enumeration of options without "
    "explanation), open-domain (a direct question over the kind of entity meant)",
    "the type is ragjudge's reading of the answer, not a judge: an answer the clarification judge passed is "
    "'over list' when it enumerates at least two options (numbered, or after 'such as' / 'like') of at most 8 "
    "words each, 'with answers' when it says 12 words or more besides its questions to the user, else "
    "'open-domain'",
]
_ENUMERATED = re.compile(r"(?:^|\s)\(?\d{1,2}[.)]\s")
_LIST = re.compile(r"\b(?:such as|like|including|e\.g\.)\b:?\s*(.*)", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\s*\n+\s*")
_ITEM_SPLIT = re.compile(r",\s*(?:or |and )?|\s+or\s+|\s+and\s+")
MAX_ITEM_WORDS = 8
MIN_ANSWER_WORDS = 12


def _options(body: str) -> list[str]:
    """The options an answer enumerates: numbered items, or the items after "such as" / "like" in a sentence."""
    numbered = _ENUMERATED.split(body)
    if len(numbered) >= 3:
        return [p for p in numbered[1:] if p.strip()]
    for sentence in _SENTENCE.split(body):
        found = _LIST.search(sentence)
        if found:
            return [p for p in _ITEM_SPLIT.split(found.group(1).rstrip(" .")) if p.strip()]
    return []


def response_type(text: str, asks: bool) -> str:
    """One of the paper's three types for an answer that asks for clarification (see TYPE_NOTES)."""
    if not asks:
        return TYPES[3]
    sentences = [s for s in _SENTENCE.split(text.strip()) if s.strip()]
    asking = [s for s in sentences if s.rstrip(" \"')").endswith("?") and re.search(r"\byou\b", s, re.I)]
    body = " ".join(s for s in sentences if s not in asking)
    options = _options(body)
    if len(options) >= 2 and max(len(o.split()) for o in options) <= MAX_ITEM_WORDS:
        return TYPES[1]
    return TYPES[0] if len(body.split()) >= MIN_ANSWER_WORDS else TYPES[2]


def response_types(answers: Sequence[tuple[str, float | None]]) -> Table:
    """How the answers to UNDERSPECIFIED tasks are written: (answer text, underspecified_eval or None) each."""
    counts = dict.fromkeys(TYPES, 0)
    for text, asked in answers:
        counts[TYPES[4] if asked is None else response_type(text, asked == 1)] += 1
    total = len(answers)
    rows: list[list[Any]] = [[t, n, round(n / total, 3) if total else None] for t, n in counts.items()
                             if n or t != TYPES[4]]
    return Table(title="Answers to UNDERSPECIFIED tasks by type (the paper's Table 5)", columns=["type", "n", "share"],
                 rows=rows, notes=TYPE_NOTES)


def answer_type(outcome: TaskOutcome) -> str | None:
    """The Table 5 type of an answer to an UNDERSPECIFIED task whose clarification judge answered (else None)."""
    asked = outcome.metrics.get(CLARIFICATION_METRIC)
    if outcome.task.answerability != CLARIFICATION_LABEL or asked is None or outcome.prediction.error:
        return None
    return response_type(outcome.prediction.text, asked == 1)


def add_to_summary(summary: Summary, outcomes: Sequence[TaskOutcome], setting: str | None,
                   judges: dict[str, list[str]]) -> Summary:
    """MTRAG's summary of a run, with MTRAG-UN's additions (`setting`: None for a judged predictions file)."""
    found = add_task_score(summary)
    if found is not None and found.score is not None:
        add_leaderboard(summary, outcomes, setting, judges)
    if any(m in summary.metrics for m in REFERENCE_BASED):
        summary.reference.append(generation_reference(setting, judges))
    if CLARIFICATION_METRIC in summary.metrics:
        answers = [(o.prediction.text, o.metrics.get(CLARIFICATION_METRIC)) for o in outcomes
                   if o.task.answerability == CLARIFICATION_LABEL]
        if answers:
            summary.tables.append(response_types(answers))
    if "standalone" not in summary.breakdowns:
        summary.notes.append("no standalone / non-standalone breakdown: these tasks do not say which questions "
                             "are standalone (the MTRAG-UN release does not label it)")
    return summary


def add_leaderboard(summary: Summary, outcomes: Sequence[TaskOutcome], setting: str | None,
                    judges: dict[str, list[str]]) -> None:
    """MTRAGEval's published task B or C results beside a run that is comparable, else a note saying why not."""
    complete = all(all(m in o.metrics for m in RANKED.values()) for o in outcomes)
    verdict = leaderboard.generation_comparable(setting, judges, [o.task.task_id for o in outcomes], complete)
    if verdict.task is not None:
        summary.reference.insert(0, leaderboard.generation_reference(verdict.task))
    else:
        summary.notes.append(f"the MTRAGEval leaderboard is not shown beside this run: {verdict.why}")

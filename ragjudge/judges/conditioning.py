"""IDK conditioning and answerability accuracy, as in the MTRAG paper (pure functions).

A reference-based score means little when the model declined, and declining is right for an unanswerable question.
Given IDK (yes 1, partial 0.5, no 0): answerable or partial task → the metric if the model answered (IDK no/partial),
else 0; unanswerable → 1 if it declined (IDK yes), else 0. Conversational turns ("thanks!") are excluded unless
treated as unanswerable, as the benchmark's own scripts do.
"""

from __future__ import annotations

IDK_YES = 1.0
CONDITIONED_SUFFIX = "_idk"
UNDERSPECIFIED_SUFFIX = "_idk_underspecified"
ANSWERABILITY_ACCURACY = "answerability_acc"


def _kind(answerability: str | None, conversational_as_unanswerable: bool) -> str | None:
    if answerability in ("ANSWERABLE", "PARTIAL"):
        return "answerable"
    if answerability == "UNANSWERABLE" or (answerability == "CONVERSATIONAL" and conversational_as_unanswerable):
        return "unanswerable"
    return None  # conversational (by default), underspecified, unknown: not conditioned


def condition(value: float | None, idk: float | None, answerability: str | None,
              *, conversational_as_unanswerable: bool = False) -> float | None:
    """The IDK-conditioned metric, or None when it is not defined for this task."""
    kind = _kind(answerability, conversational_as_unanswerable)
    if kind is None or idk is None:
        return None
    if kind == "unanswerable":
        return 1.0 if idk == IDK_YES else 0.0
    return 0.0 if idk == IDK_YES else value


def answerability_correct(idk: float | None, answerability: str | None,
                          *, conversational_as_unanswerable: bool = False) -> float | None:
    """1 when the IDK judgement agrees with the task's answerability (declined iff unanswerable)."""
    kind = _kind(answerability, conversational_as_unanswerable)
    if kind is None or idk is None:
        return None
    return 1.0 if (idk == IDK_YES) == (kind == "unanswerable") else 0.0


def condition_underspecified(value: float | None, idk: float | None, underspecified: float | None,
                             answerability: str | None) -> float | None:
    """MTRAG-UN's official conditioning (`get_idk_underspec_score` in the benchmark's judge_wrapper.py), rule for rule,
    over every task. None when a judgement the rule needs, or the metric (RL_F without passages), is missing: the
    official script would fail or write NaN there; here the task is left out and counted.
    """
    if answerability == "UNDERSPECIFIED":
        return None if underspecified is None else (1.0 if underspecified == 1 else 0.0)
    if idk is None:
        return None
    if answerability in ("UNANSWERABLE", "CONVERSATIONAL"):
        return 1.0 if idk == IDK_YES else 0.0
    return 0.0 if idk == IDK_YES else value

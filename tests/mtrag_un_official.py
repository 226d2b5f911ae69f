"""The official MTRAG-UN conditioning, restated as a test oracle (shared by the MTRAG-UN tests)."""

from __future__ import annotations


def official(answerability: str | None, idk: float, underspec: float, metric: float) -> float:
    """`get_idk_underspec_score` of the benchmark's judge_wrapper.py, restated branch by branch."""
    if answerability in ["UNDERSPECIFIED"] and underspec == 1:
        return 1
    elif answerability in ["UNDERSPECIFIED"] and underspec != 1:
        return 0
    elif answerability in ["UNANSWERABLE", "CONVERSATIONAL"] and idk == 1:
        return 1
    elif answerability in ["UNANSWERABLE", "CONVERSATIONAL"] and idk in [0, 0.5]:
        return 0
    elif idk == 1:
        return 0
    return metric

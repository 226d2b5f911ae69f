"""The offline IDK judge against the labelled examples of MTRAG's own IDK prompt."""

from __future__ import annotations

import asyncio
import re

from ragjudge.judges import JudgeContext, JudgeItem, JudgeRegistry
from ragjudge.models import Prediction, Task, Turn


def icl_examples() -> list[tuple[str, str, str]]:
    """(inquiry, response, label) triples from the in-context examples in judges/idk.yaml."""
    prompt = JudgeRegistry().spec("idk").prompt.user  # type: ignore[union-attr]
    pattern = r"\[Inquiry\]\n(.*?)\n\n\[Response\]\n(.*?)\n\n\[Output\]\n(yes|no|partial)\n"
    return re.findall(pattern, prompt, flags=re.S)


def test_the_spec_carries_the_fifteen_labelled_examples() -> None:
    examples = icl_examples()
    assert len(examples) == 15
    assert [label for *_, label in examples].count("yes") == 6


def test_lexical_judge_agrees_with_the_labelled_examples() -> None:
    judge = JudgeRegistry().build("idk_lexical")
    items = []
    for i, (inquiry, response, _) in enumerate(icl_examples()):
        task = Task(task_id=f"ex::{i}", conversation_id="ex", turn=1, input=[Turn(speaker="user", text=inquiry)])
        items.append(JudgeItem(task, Prediction(task_id=task.task_id, text=response)))
    results = asyncio.run(judge.judge(items, JudgeContext()))
    labels = [label for *_, label in icl_examples()]
    agree = sum(r.label == label for r, label in zip(results, labels, strict=True))
    declined_right = sum((r.label == "yes") == (label == "yes") for r, label in zip(results, labels, strict=True))
    # Patterns cannot read intent ("the document does not say..., however A is larger" is a "no"), so
    # exact agreement is partial; telling outright refusals from answers is what matters for conditioning.
    assert agree >= 12, [(r.label, label) for r, label in zip(results, labels, strict=True)]
    assert declined_right >= 14

"""The offline IDK judge: the labelled examples of MTRAG's own IDK prompt, the declines issue 26 quotes from
MTRAG-UN, passing mentions and partial declines, and its measured error rates on the MTRAG-UN references."""

from __future__ import annotations

import asyncio
import re

import pytest
from shared_data import SHARED_DATA, requires_shared

from ragjudge.bench.mtrag.items import judged_item
from ragjudge.judges import JudgeContext, JudgedItem, JudgeRegistry
from ragjudge.judges.labelled import half_of, judge_answers, read_reference_set, score
from ragjudge.models import Prediction, Task, Turn


def icl_examples() -> list[tuple[str, str, str]]:
    """(inquiry, response, label) triples from the in-context examples in judges/idk.yaml."""
    prompt = JudgeRegistry().spec("idk").prompt.user  # type: ignore[union-attr]
    pattern = r"\[Inquiry\]\n(.*?)\n\n\[Response\]\n(.*?)\n\n\[Output\]\n(yes|no|partial)\n"
    return re.findall(pattern, prompt, flags=re.DOTALL)


def test_the_spec_carries_the_fifteen_labelled_examples() -> None:
    examples = icl_examples()
    assert len(examples) == 15
    assert [label for *_, label in examples].count("yes") == 6


def test_lexical_judge_agrees_with_the_labelled_examples() -> None:
    judge = JudgeRegistry().build("idk_lexical")
    items = []
    for i, (inquiry, response, _) in enumerate(icl_examples()):
        task = Task(task_id=f"ex::{i}", conversation_id="ex", turn=1, input=[Turn(speaker="user", text=inquiry)])
        items.append(judged_item(task, Prediction(task_id=task.task_id, text=response)))
    results = asyncio.run(judge.judge(items, JudgeContext()))
    labels = [label for *_, label in icl_examples()]
    agree = sum(r.label == label for r, label in zip(results, labels, strict=True))
    declined_right = sum((r.label == "yes") == (label == "yes") for r, label in zip(results, labels, strict=True))
    # Patterns cannot read intent ("the document does not say..., however A is larger" is a "no"), so
    # exact agreement is partial; telling outright refusals from answers is what matters for conditioning.
    assert agree >= 13, [(r.label, label) for r, label in zip(results, labels, strict=True)]
    assert declined_right == 15


def classify(text: str) -> tuple[str, str]:
    return JudgeRegistry().build("idk_lexical").classify(text)  # type: ignore[attr-defined]


@pytest.mark.parametrize("decline", [
    "I don’t have that information.",  # a typographic apostrophe
    "I'm very sorry, but I can not help you with that information.",
    "I apologize, but I cannot confirm or deny that.",
    "Sorry. I can not confirm that.",
    "I'm sorry, but I can't do that.",
])
def test_the_declines_quoted_in_issue_26_are_declines(decline: str) -> None:
    """The five MTRAG-UN reference declines the first version missed (issue 26)."""
    label, why = classify(decline)
    assert label == "yes", why


@pytest.mark.parametrize("decline", [
    "I’m unable to provide an answer regarding that.",
    "Unfortunately, the provided documents don’t mention the fee.",
    "I'm afraid I won't speculate on that.",  # an apology, then a refusal of any kind
    ("There is no specific information about party boats in the documents. Is there anything else I can help "
     "you with?"),  # an offer of more help is not an answer
])
def test_more_declines(decline: str) -> None:
    label, why = classify(decline)
    assert label == "yes", why


@pytest.mark.parametrize("answer", [
    # missing content mentioned in passing, inside a condition
    ("Yes, you can use them together: the CDN serves cached copies, and if the content is not available in the "
     "cache, the CDN pulls it from Object Storage, so your static files stay fast."),
    # a missing item as a fact of the subject, not of the sources
    "The basic plan does not include dental coverage.",
    "I'm sorry to hear about your loss. You can file a claim online or call the number on your card.",
])
def test_answers_that_only_mention_missing_details_are_not_declines(answer: str) -> None:
    label, why = classify(answer)
    assert label == "no", why


def test_a_partial_decline_is_partial() -> None:
    """'I do not have much information about X, but ...': MTRAG's scale scores it partial (0.5)."""
    judge = JudgeRegistry().build("idk_lexical")
    text = ("I do not have much information about the monastery, but I can tell you that it is an important "
            "pilgrimage site, reached in a few days of travel across the Himalayas.")
    task = Task(task_id="p::1", conversation_id="p", turn=1, input=[Turn(speaker="user", text="Tell me about it")])
    [result] = asyncio.run(judge.judge([judged_item(task, Prediction(task_id="p::1", text=text))], JudgeContext()))
    assert (result.label, result.value) == ("partial", 0.5), result.rationale
    # a short offer after the decline is not an answer
    assert classify("I do not have information on that, but I can help with something else.")[0] == "yes"


def test_halves_are_fixed_by_task_id() -> None:
    assert half_of("3449f31be70b565a6580bda4a9349559<::>6") == "rules"
    assert half_of("8ee55be21d9fd1839c75d9dc3edde634<::>7") == "held-out"


MTRAG_UN = "generation/reference.jsonl"


@pytest.fixture(scope="module")
def mtrag_un_scores():
    items = read_reference_set(SHARED_DATA / "mtrag-un" / MTRAG_UN, ["UNANSWERABLE"], ["ANSWERABLE", "PARTIAL"])
    return score(judge_answers("idk_lexical", items))


@requires_shared("mtrag-un", MTRAG_UN)
def test_mtrag_un_references_rule_writing_half(mtrag_un_scores) -> None:
    rules = mtrag_un_scores["rules"]
    assert rules.recall >= 0.97 and rules.false_alarm_rate <= 0.01
    assert (rules.positives, rules.true_positives, rules.negatives, rules.false_positives) == (53, 52, 175, 0)


@requires_shared("mtrag-un", MTRAG_UN)
def test_mtrag_un_references_held_out_half_as_measured(mtrag_un_scores) -> None:
    """The figures the README states (measured once, after the rules were written). Of the 5 misses, 2 references
    answer the question although the task is UNANSWERABLE, 1 declines in part (partial, 0.5), 2 are declines no
    rule covers ("I neither have ... nor able to confirm", "I cannot explain ...")."""
    held = mtrag_un_scores["held-out"]
    assert held.false_alarm_rate <= 0.01
    assert (held.positives, held.true_positives, held.negatives, held.false_positives) == (44, 39, 157, 0)
    assert held.labels["positive"] == {"yes": 39, "no": 4, "partial": 1}


@requires_shared("mtrag-un", MTRAG_UN)
@pytest.mark.xfail(strict=True, reason="issue 26's target (recall >= 0.97) is not met on the held-out half: "
                   "39/44 = 0.886; see test_mtrag_un_references_held_out_half_as_measured")
def test_mtrag_un_references_held_out_half_meets_the_target(mtrag_un_scores) -> None:
    held = mtrag_un_scores["held-out"]
    assert held.recall >= 0.97 and held.false_alarm_rate <= 0.01

"""The test server's lexical judge mode (`--judge-mode lexical`): a stand-in judge model for every built-in judge,
so CI can run an evaluation with no key, bill or network and see a wrong answer score lower (what each judge is
answered, and the HTTP 400 for any other prompt: docs/testing-offline.md; RAGAS's metrics as
`ragjudge.testing.ragas_model` answers them). Prompts are recognised by the instruction text the judge itself
carries (ragas's prompt classes, the judge specs, the criterion's templates), so a reworded prompt fails loudly
instead of matching nothing. The same prompt always gets the same answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import lru_cache

from ragjudge.judges.spec import JudgeSpec
from ragjudge.testing import ragas_model as rm
from ragjudge.testing.replies import Reply, Request
from ragjudge.testing.scripted_judges import judge_panel

STEPS = """1. Read the passages and the reference answer, if any.
2. Check each claim of the response against them.
3. Lower the score for every claim they do not support."""
"""The evaluation steps the stand-in writes for every criterion."""


def marker(template: str) -> str:
    """The first line of a prompt template's fixed text with at least six words: how its prompt is recognised."""
    fixed = template.split("{", 1)[0]
    for line in fixed.splitlines():
        if len(line.split()) >= 6:
            return line.strip()
    raise ValueError(f"no instruction line to recognise this prompt by: {template[:80]!r}")


def instruction(spec: JudgeSpec) -> str:
    """A judge spec's instruction line: from its user prompt, else (the user prompt only fills in texts) its system
    prompt."""
    assert spec.prompt is not None, f"judge spec {spec.name} has no prompt"
    for template in (spec.prompt.user, spec.prompt.system or ""):
        try:
            return marker(template)
        except ValueError:
            continue
    raise ValueError(f"judge spec {spec.name}: no instruction line to recognise its prompt by")


def _section(prompt: str, start: str, *ends: str) -> str:
    """The text after `start` up to the first of `ends` that follows it ('' when `start` is absent)."""
    if start not in prompt:
        return ""
    rest = prompt.split(start, 1)[1]
    cut = min((rest.find(end) for end in ends if end in rest), default=len(rest))
    return rest[:cut].strip()


def declines(text: str) -> bool:
    return any(d in text.lower() for d in rm.DECLINES)


# -- the MTRAG judges of the judge specs --------------------------------------------------------------------------

def _underspecified(request: Request) -> str:
    response = request.prompt.rsplit("Response:", 1)[1].strip()
    asks = any(s.rstrip().endswith("?") for s in rm.sentences(response))
    return json.dumps({"decision": "yes" if asks else "no",
                       "explanation": "it asks the user a question" if asks else "it asks the user nothing"})


# -- a criterion, G-Eval's way ------------------------------------------------------------------------------------

def _criterion_score(request: Request) -> str:
    prompt = request.last_user
    scale = re.search(r"Evaluation criterion \((\d+) to (\d+)\)", prompt)
    assert scale, "no scale in the criterion prompt"
    low, high = int(scale[1]), int(scale[2])
    response = _section(prompt, "\n\nResponse:\n", "\n\nAnswer with the score only")
    support = _section(prompt, "\nPassages:\n", "\n\nResponse:\n") + "\n" + \
        _section(prompt, "\nReference answer:\n", "\n\nResponse:\n")
    share = 0.0 if declines(response) else rm.covered(response, support) if support.strip() else 0.0
    return str(round(low + (high - low) * share))


# -- the benches' judges -----------------------------------------------------------------------------------------

def _dialsim(request: Request) -> str:
    prompt = request.last_user
    truth = _section(prompt, "<true answer>\n", "\n\n<prediction>")
    prediction = prompt.rsplit("<prediction>\n", 1)[1]
    correct = rm.covered(truth, prediction) >= 0.5
    return json.dumps({"correct": correct, "wrong": not correct})


def _articles(text: str) -> str:
    return "" if text.strip() == "(none)" else text


def _cxm_answer_class(request: Request) -> str:
    prompt = request.last_user
    reply = _section(prompt, "[Agent reply to classify]\n", "\n[Reference reply", "\n[Gold articles")
    gold = _articles(_section(prompt, "[Gold articles: the authoritative sources for this turn]\n",
                              "[Other retrieved articles"))
    other = _articles(_section(prompt, "[Other retrieved articles: may be related, outdated or conflicting]\n",
                               "Categories:"))
    if declines(reply):
        category, why = "Refusal", "it declines"
    elif rm.covered(reply, gold) >= 0.6:
        category, why = "Correct", "the gold articles hold most of its words"
    elif rm.covered(reply, other) >= 0.6:
        category, why = "Incorrect", "another article holds most of its words"
    else:
        category, why = "Hallucination", "no article holds most of its words"
    return json.dumps({"reasoning": why, "category": category})


def _cxm_intent_match(request: Request) -> str:
    prompt = request.last_user
    gold = _section(prompt, "[Reference intent]\n", "\n\n[Predicted intent]").split(":")[0]
    predicted = _section(prompt, "[Predicted intent]\n", "\n\n[Conversation]").split(":")[0]
    same = rm.covered(gold, predicted) >= 0.5 and rm.covered(predicted, gold) >= 0.5
    return f"The two labels {'share' if same else 'do not share'} most of their words.\nVerdict: {'yes' if same else 'no'}"


def _cxm_contradiction(request: Request) -> str:
    texts = re.split(r"\n\[Article [^\]\n]*\]\n", request.last_user)
    a, b = (texts[1], texts[2].split("\n\nName the conflicting", 1)[0]) if len(texts) >= 3 else ("", "")
    numbers = re.compile(r"\d+(?:[.,]\d+)?")
    same_topic = rm.covered(a, b) >= 0.5 or rm.covered(b, a) >= 0.5
    conflict = same_topic and set(numbers.findall(a)) != set(numbers.findall(b))
    return f"{'They give different figures for the same thing.' if conflict else 'No conflicting figures.'}\n" \
           f"Verdict: {'yes' if conflict else 'no'}"


@lru_cache(maxsize=1)
def _rules() -> tuple[tuple[re.Pattern[str], Callable[[Request], str]], ...]:
    """(instruction, responder) for every built-in judge prompt; the first instruction the prompt holds answers."""
    from ragjudge.judges.criterion import SCORE_PROMPT, STEPS_PROMPT
    from ragjudge.judges.registry import JudgeRegistry

    specs = JudgeRegistry().specs
    answer = judge_panel()  # the MTRAG judges' own stand-ins: IDK and RB_llm

    def panel(request: Request) -> str:
        reply = answer(request)
        if reply == "OK":  # judge_panel's answer to a prompt it cannot read
            raise ValueError("the prompt lacks the sections the judge fills in")
        return str(reply)

    ours = [
        (instruction(specs["idk"]), panel),
        (instruction(specs["rb_llm"]), panel),
        (instruction(specs["underspecified"]), _underspecified),
        (marker(STEPS_PROMPT.split("{criterion}", 1)[1]), lambda _: STEPS),
        (marker(SCORE_PROMPT.split("{sample}", 1)[1]), _criterion_score),
        (instruction(specs["dialsim_judge"]), _dialsim),
        (instruction(specs["cxm_answer_classification"]), _cxm_answer_class),
        (instruction(specs["cxm_intent_match"]), _cxm_intent_match),
        (instruction(specs["cxm_contradiction"]), _cxm_contradiction),
    ]
    return tuple((re.compile(pattern, re.DOTALL), responder)
                 for pattern, responder in [*rm.rules(), *((re.escape(text), r) for text, r in ours)])


def lexical_judge(first: Callable[[Request], str | Reply | None] | None = None) -> Callable[[Request], str | Reply]:
    """The responder of `--judge-mode lexical` (see the module's docstring); `first` (scripted replies of your own)
    answers before it, and passes a request on by returning None."""
    rules = _rules()

    def respond(request: Request) -> str | Reply:
        if first is not None and (answer := first(request)) is not None:
            return answer
        prompt = request.prompt
        for pattern, responder in rules:
            if pattern.search(prompt):
                try:
                    return responder(request)
                except Exception as exc:  # noqa: BLE001 - a prompt reworded or cut short: an error the judge records
                    return Reply(status=400, content=f"the lexical judge recognised this prompt "
                                 f"({pattern.pattern[:60]!r}) but could not read it: {exc!r}")
        opening = " ".join(prompt.split()[:12])
        return Reply(status=400, content=f"the lexical judge does not recognise this prompt: {opening!r}...")

    return respond

"""A deterministic stand-in for real judge models, for demos and tests that need *realistic* judge output offline.

`judge_panel` answers the MTRAG judges' prompts from the texts in them: IDK yes/partial/no by how the response
declines; RB_llm a rationale and a rating by word overlap with the reference, each panel model with its own bias
(panels disagree like real ones); RL_F ragas's JSON, a statement supported when most of its words are in the
passages. `flaky_model` fails now and then, so reports and tests see unparsable answers recorded as errors.
"""

from __future__ import annotations

import hashlib
import json
import re

from ragjudge.testing.replies import Request

STATEMENTS_MARK = "Break down each sentence into one or more fully understandable statements"
NLI_MARK = "Your task is to judge the faithfulness of a series of statements"
DECLINES = ("do not have", "don't have", "cannot answer", "can't answer", "no information", "not sure",
            "unable to", "i don't know")
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset("a an the of to in on and or is are was were be it its for with as by at that this from".split())


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def _overlap(answer: str, reference: str) -> float:
    ref = _words(reference)
    return len(_words(answer) & ref) / len(ref) if ref else 0.0


def _stable(*parts: str) -> int:
    return int(hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:8], 16)


def _between(prompt: str, start: str, end: str) -> str:
    found = re.search(re.escape(start) + r"\n(.*?)\n" + re.escape(end), prompt, re.S)
    return found.group(1) if found else ""


def _ragas_input(request: Request) -> dict:
    tail = request.last_user.rsplit("Now perform the same with the following input\ninput: ", 1)[-1]
    return json.loads(tail.rsplit("\nOutput: ", 1)[0])


def _idk(prompt: str) -> str:
    response = prompt.rsplit("[Response]\n", 1)[1].split("\n\n[Output]", 1)[0].lower()
    declines = any(d in response for d in DECLINES)
    if declines and len(response.split()) > 25:
        return "partial"
    return "yes" if declines else "no"


def _rb_llm(prompt: str, model: str, bias: int) -> str:
    reference = _between(prompt, "[The Start of Reference Answer]", "[The End of Reference Answer]")
    answer = _between(prompt, "[The Start of Assistant's Answer]", "[The End of Assistant's Answer]")
    overlap = _overlap(answer, reference)
    declines = any(d in answer.lower() for d in DECLINES)
    rating = 2 if declines else round(2 + 8 * overlap)
    rating = max(1, min(10, rating + bias))
    missing = sorted(_words(reference) - _words(answer))[:6]
    gaps = f" It leaves out: {', '.join(missing)}." if missing else " It covers every point of the reference."
    tone = "declines to answer although the reference answers the question" if declines else \
        f"shares {overlap:.0%} of the reference answer's content words"
    return (f"The assistant's answer {tone}.{gaps} Judged by {model} for completeness and faithfulness to the "
            f"document.\nRating: [[{rating}]]")


def _statements(request: Request) -> str:
    answer = _ragas_input(request)["answer"]
    sentences = [s.strip() + "." for s in re.split(r"(?<=[.!?])\s+", answer) if len(s.strip()) > 3]
    return json.dumps({"statements": [s.rstrip(".") + "." for s in sentences]})


def _nli(request: Request) -> str:
    data = _ragas_input(request)
    context = _words(data["context"])
    verdicts = []
    for statement in data["statements"]:
        words = _words(statement)
        share = len(words & context) / len(words) if words else 0.0
        verdicts.append({"statement": statement, "verdict": int(share >= 0.6),
                         "reason": f"{share:.0%} of its words are in the context"})
    return "```json\n" + json.dumps({"statements": verdicts}) + "\n```"


def judge_panel(biases: dict[str, int] | None = None, *, flaky_model: str | None = None,
                flaky_every: int = 9) -> object:
    """A responder for OpenAIServer playing the IDK, RB_llm and RL_F judge models.

    `biases` maps a model's last name part (`openai/strict` → `strict`) to a rating offset; `flaky_model`
    answers one RB_llm prompt in `flaky_every` (chosen by a hash of the prompt) without a rating."""
    biases = biases or {}

    def respond(request: Request) -> str:
        prompt = request.prompt
        model = (request.model or "").split("/")[-1]
        if STATEMENTS_MARK in prompt:
            return _statements(request)
        if NLI_MARK in prompt:
            return _nli(request)
        if "[The Start of Reference Answer]" in prompt:
            if model == flaky_model and _stable(prompt) % flaky_every == 0:
                return "I would rather not put a number on this answer."
            return _rb_llm(prompt, model, biases.get(model, 0))
        if "[Response]\n" in prompt:
            return _idk(prompt)
        return "OK"

    return respond

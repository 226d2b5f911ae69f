"""A deterministic judge model answering RAGAS's prompts by word overlap, for tests and benchmarks of the
RAGAS-backed judges (each metric's rule: docs/testing-offline.md, the `--judge-mode lexical` table). Prompts are
recognised by ragas's own instruction text, so a ragas upgrade that rewords one fails loudly instead of matching
nothing. NVIDIA's two context-relevance prompts use different thresholds, so they disagree now and then, as models do.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from ragjudge.judges.ragas_adapter import (  # noqa: E402
    ContextPrecisionPrompt,
    ContextRecallClassificationPrompt,
    ContextRelevance,
    CorrectnessClassifier,
    NLIStatementPrompt,
    ResponseRelevancePrompt,
    StatementGeneratorPrompt,
)

from ragjudge.testing.replies import Reply, Request, scripted  # noqa: E402

STATEMENTS = StatementGeneratorPrompt.instruction
NLI = NLIStatementPrompt.instruction
QUESTION = ResponseRelevancePrompt.instruction
PRECISION = ContextPrecisionPrompt.instruction
RECALL = ContextRecallClassificationPrompt.instruction
CORRECTNESS = CorrectnessClassifier.instruction
RELEVANCE_1 = ContextRelevance.template_relevance1.split("{query}")[0]
RELEVANCE_2 = ContextRelevance.template_relevance2.split("{query}")[0]
DECLINES = ("i don't know", "i do not know", "i'm not sure", "i am not sure", "i do not have", "i don't have",
            "cannot answer", "can't answer", "no information")

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset("a an the of to in on and or is are was were be it its for with as by at that this from what "
                  "which who how do does did i you he she they we".split())
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def covered(part: str, whole: str) -> float:
    """Share of `part`'s words found in `whole` (1.0 for a part without words)."""
    mine = words(part)
    return len(mine & words(whole)) / len(mine) if mine else 1.0


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(" ".join(text.split())) if s.strip()]


def prompt_input(request: Request) -> dict:
    """The item's JSON input that ragas puts after its few-shot examples."""
    tail = request.last_user.rsplit("Now perform the same with the following input\ninput: ", 1)[1]
    return json.loads(tail.rsplit("\nOutput: ", 1)[0])


def _statements(request: Request) -> str:
    answer = prompt_input(request)["answer"]
    return json.dumps({"statements": [] if "NOSTATEMENTS" in answer else sentences(answer)[:8]})


def _nli(request: Request) -> str:
    data = prompt_input(request)
    return json.dumps({"statements": [
        {"statement": s, "reason": "the context states it" if covered(s, data["context"]) >= 0.6
         else "the context does not say this", "verdict": int(covered(s, data["context"]) >= 0.6)}
        for s in data["statements"]]})


def _question(request: Request) -> str:
    response = prompt_input(request)["response"]
    first = (sentences(response) or [response])[0].rstrip(".!?")
    noncommittal = int(any(d in response.lower() for d in DECLINES))
    return json.dumps({"question": f"What can you tell me about {first[:1].lower()}{first[1:]}?",
                       "noncommittal": noncommittal})


def _precision(request: Request) -> str:
    data = prompt_input(request)
    useful = covered(data["answer"], data["context"]) >= 0.3
    return json.dumps({"reason": "the context holds what the answer says" if useful
                       else "the context is about something else", "verdict": int(useful)})


def _recall(request: Request) -> str:
    data = prompt_input(request)
    return json.dumps({"classifications": [
        {"statement": s, "reason": "found in the context" if covered(s, data["context"]) >= 0.6
         else "not in the context", "attributed": int(covered(s, data["context"]) >= 0.6)}
        for s in sentences(data["answer"])]})


def _correctness(request: Request) -> str:
    data = prompt_input(request)
    truth, answer = " ".join(data["ground_truth"]), " ".join(data["answer"])
    tp = [s for s in data["answer"] if covered(s, truth) >= 0.5]
    fp = [s for s in data["answer"] if covered(s, truth) < 0.5]
    fn = [s for s in data["ground_truth"] if covered(s, answer) < 0.5]
    return json.dumps({
        "TP": [{"statement": s, "reason": "the ground truth supports it"} for s in tp],
        "FP": [{"statement": s, "reason": "the ground truth does not support it"} for s in fp],
        "FN": [{"statement": s, "reason": "the answer misses it"} for s in fn]})


def _between(text: str, start: str, end: str) -> str:
    return text.split(start, 1)[1].split(end, 1)[0]


def _relevance(thresholds: tuple[float, float], suffix: str) -> Callable[[Request], str]:
    def rate(request: Request) -> str:
        prompt = request.last_user
        question = _between(prompt, "### Question: ", "\n\n### Context: ")
        context = _between(prompt, "\n\n### Context: ", "\n\nDo not try to explain.")
        share = covered(question, context)
        return f"{2 if share >= thresholds[0] else 1 if share >= thresholds[1] else 0}{suffix}"

    return rate


def rules() -> list[tuple[str, Callable[[Request], str]]]:
    """(regex, responder) for every RAGAS prompt the judges send: put test-specific rules before these."""
    return [(re.escape(STATEMENTS), _statements), (re.escape(NLI), _nli), (re.escape(QUESTION), _question),
            (re.escape(PRECISION), _precision), (re.escape(RECALL), _recall),
            (re.escape(CORRECTNESS), _correctness), (re.escape(RELEVANCE_1), _relevance((0.5, 0.2), "")),
            (re.escape(RELEVANCE_2), _relevance((0.6, 0.32), "]"))]


def ragas_model(before: list | None = None) -> Callable[[Request], str | Reply]:
    """The responder: `before` rules first (bad answers a test scripts), then RAGAS's prompts; anything else 400."""
    return scripted([*(before or []), *rules()], default=Reply(status=400, content="unexpected prompt"))

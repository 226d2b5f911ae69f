"""The official LLM judge for natural-language answers, from the `dialsim_judge` spec.

The official `json.loads(reply)["correct"]` has no error handling (not JSON: the run crashes; neither: retried, then
wrong). Here a reply not JSON with boolean `correct` and `wrong`, or saying both or neither, is an error keeping the
raw text: reported, never a verdict, retried on the next run.
"""

from __future__ import annotations

from typing import Any

from ragjudge.engine.bench import fingerprint
from ragjudge.formats.samples import Score
from ragjudge.judges.base import Judge, JudgeContext, JudgedItem
from ragjudge.judges.json_parse import parse_json_output
from ragjudge.judges.llm_judge import render
from ragjudge.judges.registry import JudgeRegistry
from ragjudge.judges.spec import JudgeSpec
from ragjudge.llm import LLMError, LLMGateway

SPEC_NAME = "dialsim_judge"


class DialSimJudgeSpec(Judge):
    """What the judge registry builds for the spec: it judges DialSim answers only, so asked to judge
    MTRAG answers it declines, item by item."""

    async def judge(self, items: list[JudgedItem], ctx: JudgeContext) -> list[Score]:
        message = (f"{self.name} judges DialSim answers: run `ragjudge eval --bench dialsim -T format=open "
                   "--judge-models MODEL` or `ragjudge dialsim score LOG --judge-models MODEL`")
        ctx.on_progress(len(items))
        return [self.result(error=message) for _ in items]


class AnswerJudge:
    def __init__(self, spec: JudgeSpec, model: str, gateway: LLMGateway | None):
        assert spec.prompt is not None and spec.parse is not None and spec.parse.kind == "json"
        self.spec = spec
        self.model = model
        self.gateway = gateway
        self.identity = fingerprint(spec.model_dump(mode="json", exclude={"source"}), model)

    @classmethod
    def load(cls, model: str, gateway: LLMGateway | None, judge_dirs: list[str] | None = None) -> AnswerJudge:
        return cls(JudgeRegistry(judge_dirs, bench="dialsim").spec(SPEC_NAME), model, gateway)

    def messages(self, question: str, true_answer: str, prediction: str) -> list[dict[str, str]]:
        assert self.spec.prompt is not None
        variables = {"question": question, "true_answer": true_answer, "prediction": prediction}
        out = [{"role": "system", "content": render(self.spec.prompt.system, variables)}] if self.spec.prompt.system \
            else []
        return out + [{"role": "user", "content": render(self.spec.prompt.user, variables)}]

    async def judge(self, question: str, true_answer: str, prediction: str) -> dict[str, Any]:
        """{"verdict": "correct"|"wrong", "raw", "model"} or {"error", "raw", "model"}."""
        assert self.gateway is not None and self.spec.parse is not None
        try:
            response = await self.gateway.complete(self.model, self.messages(question, true_answer, prediction),
                                                   **self.spec.params)
        except LLMError as exc:
            return {"error": f"judge call failed: {exc}", "model": self.model}
        parsed = parse_json_output(response.text, self.spec.parse)
        base = {"raw": response.text, "model": self.model}
        if not parsed.ok:
            detail = (parsed.error or "").removeprefix("unparsable output: ")
            return {**base, "error": f"the judge's reply is unparsable: {detail}"}
        correct, wrong = parsed.value["correct"], parsed.value["wrong"]
        if correct == wrong:
            return {**base, "error": f"judge output says correct={str(correct).lower()} and wrong="
                                     f"{str(wrong).lower()}: exactly one must be true"}
        return {**base, "verdict": "correct" if correct else "wrong"}

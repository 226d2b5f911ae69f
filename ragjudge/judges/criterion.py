"""A criterion in one line (G-Eval, Liu et al. 2023): "Does the answer cite the policy number?" becomes a judge.

As G-Eval: the first judge model writes the evaluation steps once per criterion (auto chain-of-thought; the same
request every time, so the response cache answers it on reruns); then a prompt with the criterion, the steps and the
sample asks for one whole number on the scale. Where the provider gives log-probabilities the score is G-Eval's
`sum p(s_i) * s_i` over the scale's tokens at the answer's first token, renormalised; else the number written. A reply
with no number on the scale is an error with its raw text. Several judge models: the median (as RB_llm).
The value is `(score - low) / (high - low)` in [0, 1], so a criterion is a score like every other metric; the score on
the criterion's own scale is in `details.score`.
"""

from __future__ import annotations

import asyncio
import math
import re
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

from ragjudge.formats.samples import Score
from ragjudge.judges.base import JudgeContext, JudgedItem
from ragjudge.judges.llm_judge import LLMJudge
from ragjudge.judges.spec import JudgeSpec
from ragjudge.llm import LLMError

IMPLEMENTATION = "ragjudge.judges.criterion:CriterionJudge"
NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
TOP_LOGPROBS = 20

STEPS_PROMPT = """You will evaluate responses of an assistant that answers a user's questions, often from passages \
it was given, on one criterion.

Evaluation criterion ({low} to {high}): {criterion}

Write the evaluation steps: a short numbered list of what a careful evaluator checks, in order, to decide the score \
on this criterion. Write only the steps."""

SCORE_PROMPT = """You will be given a conversation between a user and an assistant, the passages the assistant was \
given{reference_note}, and the assistant's last response. Rate the response on one criterion.

Evaluation criterion ({low} to {high}): {criterion}

Evaluation steps:
{steps}

{sample}

Answer with the score only: one whole number from {low} to {high}.
Score:"""


class Criterion(BaseModel):
    """A criterion judge: its name (the metric's), the criterion in one sentence, the scale, and (optionally) the
    evaluation steps, when you would rather write them than have the judge model write them."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    criterion: str = Field(min_length=1)
    scale: tuple[int, int] = (1, 5)
    steps: str | None = None

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not NAME.match(value):
            raise ValueError(f"must be a name of letters, digits and _ (starting with a letter), got {value!r}")
        return value

    @model_validator(mode="after")
    def _scale(self) -> Criterion:
        low, high = self.scale
        if high <= low:
            raise ValueError(f"scale must go from a lower to a higher whole number, got {self.scale}")
        return self

    @classmethod
    def parse(cls, text: str) -> Criterion:
        """`NAME=criterion text` (the command line's `--criterion`), scale 1 to 5."""
        name, sep, criterion = text.partition("=")
        if not sep or not name.strip() or not criterion.strip():
            raise ValueError(f"expected NAME=\"criterion in one sentence\", got {text!r}")
        return cls(name=name.strip(), criterion=criterion.strip())

    def spec(self) -> JudgeSpec:
        """The judge spec this criterion is, like a YAML spec of the judges folder (a panel over every judge
        model; the metric is the criterion's name)."""
        low, high = self.scale
        return JudgeSpec(name=self.name, description=f"{self.criterion} (a criterion judged G-Eval's way, {low} to "
                         f"{high}, mapped onto 0-1)", metric=self.name, kind="python", implementation=IMPLEMENTATION,
                         panel=True, params={"max_tokens": 5},
                         options={"criterion": self.criterion, "scale": [low, high], "steps": self.steps})


def _from_text(value: Any) -> Any:
    return Criterion.parse(value) if isinstance(value, str) else value


CriterionOption = Annotated[Criterion, BeforeValidator(_from_text)]
"""A bench option's criterion: a Criterion, its dict, or `NAME=criterion text` as typed after `--criterion`."""


class CriterionJudge(LLMJudge):
    """G-Eval over one criterion (see the module's docstring)."""

    def __init__(self, spec: JudgeSpec):  # no prompt template: the prompts are G-Eval's, built here
        self.spec = spec
        scale = spec.options.get("scale") or [1, 5]
        self.criterion = Criterion(name=spec.name, criterion=str(spec.options.get("criterion") or ""),
                                   scale=(int(scale[0]), int(scale[1])), steps=spec.options.get("steps"))
        self._steps: dict[str, asyncio.Future[str]] = {}

    async def steps(self, ctx: JudgeContext) -> str:
        """The evaluation steps: given, or written once by the first judge model (cached like every answer)."""
        if self.criterion.steps:
            return self.criterion.steps
        model = ctx.judge_models[0]
        if model not in self._steps:  # the first sample asks; the others wait for the same answer
            self._steps[model] = asyncio.ensure_future(self._write_steps(model, ctx))
        return await self._steps[model]

    async def _write_steps(self, model: str, ctx: JudgeContext) -> str:
        assert ctx.gateway is not None
        low, high = self.criterion.scale
        prompt = STEPS_PROMPT.format(low=low, high=high, criterion=self.criterion.criterion)
        response = await ctx.gateway.complete(model, [{"role": "user", "content": prompt}], max_tokens=400)
        if not response.text.strip():
            raise LLMError(f"{model} wrote no evaluation steps for criterion {self.name!r}")
        return response.text.strip()

    async def _judge_one(self, item: JudgedItem, ctx: JudgeContext) -> Score:
        try:
            steps = await self.steps(ctx)
        except LLMError as exc:
            return self.result(error=f"evaluation steps: {exc}")
        messages = [{"role": "user", "content": self.prompt(item, steps)}]
        members = await asyncio.gather(*(self._score(m, messages, ctx) for m in self.models(ctx)))
        combined = self._combine(list(members), ctx.min_panel)
        combined.details["steps"] = steps
        if combined.ok:
            low, high = self.criterion.scale
            combined.details["score"] = low + combined.value * (high - low)  # type: ignore[operator]
        return combined

    def prompt(self, item: JudgedItem, steps: str) -> str:
        low, high = self.criterion.scale
        parts = ["Conversation:\n" + "\n".join(f"{t.speaker}: {t.text}" for t in item.messages)]
        if item.contexts:
            parts.append("Passages:\n" + "\n\n".join(f"[{i}] {p.text}" for i, p in enumerate(item.contexts, 1)))
        if item.reference:
            parts.append(f"Reference answer:\n{item.reference}")
        parts.append(f"Response:\n{item.answer}")
        return SCORE_PROMPT.format(low=low, high=high, criterion=self.criterion.criterion, steps=steps,
                                   sample="\n\n".join(parts),
                                   reference_note=", a reference answer" if item.reference else "")

    async def _score(self, model: str, messages: list[dict[str, str]], ctx: JudgeContext) -> Score:
        assert ctx.gateway is not None
        try:
            response = await ctx.gateway.complete(model, messages, logprobs=True, top_logprobs=TOP_LOGPROBS,
                                                  **self.spec.params)
        except LLMError as exc:
            return self.result(error=str(exc), model=model)
        score, how = weighted_score(response.top_logprobs, self.criterion.scale) if response.top_logprobs else \
            (None, "")
        if score is None:
            score, how = written_score(response.text, self.criterion.scale), "the number written"
        common: dict[str, Any] = dict(raw=response.text, model=model, prompt_tokens=response.prompt_tokens,
                                      completion_tokens=response.completion_tokens, latency=response.latency)
        low, high = self.criterion.scale
        if score is None:
            return self.result(error=f"unparsable judge output: no whole number from {low} to {high}", **common)
        return self.result(value=(score - low) / (high - low), label=f"{score:g}", rationale=how,
                           details={"score": score, "cached": response.cached}, **common)


def weighted_score(top_logprobs: list[dict[str, float]], scale: tuple[int, int]) -> tuple[float | None, str]:
    """G-Eval's probability-weighted score at the first generated token that is a scale value (None when no token
    of the scale is among its alternatives)."""
    low, high = scale
    for position in top_logprobs:
        probs: dict[int, float] = {}
        for token, logprob in position.items():
            text = token.strip()
            if text.isdigit() and low <= int(text) <= high:
                probs[int(text)] = probs.get(int(text), 0.0) + math.exp(logprob)
        if probs:  # else a word (or a space) before the number: the next position
            total = sum(probs.values())
            score = sum(s * p for s, p in probs.items()) / total
            shown = ", ".join(f"{s}: {p / total:.2f}" for s, p in sorted(probs.items()))
            return score, f"probability-weighted ({shown})"
    return None, ""


def written_score(text: str, scale: tuple[int, int]) -> float | None:
    """The first whole number on the scale in the reply."""
    low, high = scale
    for match in re.finditer(r"(?<![\d.])(\d+)(?![\d.])", text):
        if low <= int(match.group(1)) <= high:
            return float(match.group(1))
    return None

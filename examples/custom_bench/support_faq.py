"""A complete ragjudge benchmark in one file: answer support-chat questions from a company FAQ.

Score: the share of the facts a good answer must mention (`must_mention`) that the answer contains. The
system under test is `--gen lookup` (offline: the FAQ answer sharing most words with the question) or any
litellm model, given the FAQ. Registered through the `ragjudge.benches` entry point (see pyproject.toml).
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, Field

from ragjudge.bench import Bench, BenchOptions, EachScorer, EachSolver, Loaded, MetricInfo, Scorer, Summary, Table
from ragjudge.errors import InputError
from ragjudge.formats.jsonl import read_models
from ragjudge.llm import LLMError

HERE = Path(__file__).resolve().parent


class Options(BenchOptions):
    data: str = Field(str(HERE), description="Folder with faq.jsonl and questions.jsonl.")
    gen: str = Field("lookup", description="'lookup' (offline word overlap) or a litellm model.")


class Entry(BaseModel):
    id: str
    question: str
    answer: str


class Question(BaseModel):
    id: str
    question: str
    must_mention: list[str] = Field(min_length=1)


STOP = set("a an and are by can do does for how i if in is it my of on the that to what when where will you".split())


def words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower())) - STOP


class Answerer(EachSolver[Question]):
    def __init__(self, gen: str, faq: list[Entry], gateway=None):
        self.name, self.faq, self.gateway = gen, faq, gateway

    def fingerprint(self, sample: Question) -> str:
        return self.name

    async def solve_one(self, q: Question, ctx) -> dict:
        if self.gateway is None:
            best = max(self.faq, key=lambda e: len(words(e.question + " " + e.answer) & words(q.question)))
            return {"answer": best.answer}
        faq = "\n".join(f"Q: {e.question}\nA: {e.answer}" for e in self.faq)
        prompt = f"Answer the customer from this FAQ only; say 'I do not know' otherwise.\n\n{faq}\n\nCustomer: {q.question}"
        try:
            reply = await self.gateway.complete(self.name, [{"role": "user", "content": prompt}])
        except LLMError as exc:
            return {"error": str(exc)}
        return {"answer": reply.text}


class Mentions(EachScorer[Question]):
    name = "mentions"

    def fingerprint(self, sample: Question, output: dict) -> str:
        return output["answer"]

    async def score_one(self, q: Question, output: dict, ctx) -> dict:
        found = [m for m in q.must_mention if m.lower() in output["answer"].lower()]
        return {"value": len(found) / len(q.must_mention), "missing": sorted(set(q.must_mention) - set(found))}


class SupportFaqBench(Bench[Options, Question]):
    name = "support-faq"
    description = "Answer support-chat questions from a company FAQ; share of required facts mentioned."
    Options = Options
    llm = "optional"
    data_help = "examples/custom_bench: faq.jsonl ({id, question, answer}) and questions.jsonl ({id, question, must_mention})."
    metrics = (MetricInfo("mentions", "share of the required facts the answer mentions"),)
    unit = "questions"

    def load(self) -> Loaded[Question, list[Entry]]:
        """The questions, with the FAQ beside them: what the run reads besides the samples is its `ctx.data`."""
        folder = Path(self.options.data)  # a bad line: one error naming file, line and field
        faq = read_models(folder / "faq.jsonl", Entry)
        questions = read_models(folder / "questions.jsonl", Question)
        for name, rows in (("faq.jsonl", faq), ("questions.jsonl", questions)):
            if not rows:
                raise InputError("is empty", file=str(folder / name))
        return Loaded(questions, faq)

    def llm_models(self) -> list[str]:
        return [] if self.options.gen == "lookup" else [self.options.gen]

    def solver(self, ctx) -> Answerer:
        return Answerer(self.options.gen, ctx.data, None if self.options.gen == "lookup" else ctx.gateway)

    def scorers(self, ctx) -> list[Scorer[Question]]:
        return [Mentions()]

    def summarize(self, results, ctx) -> Summary:
        """The default summary (each scorer's mean, the headline) and a table of what each answer missed."""
        missed = [[r.sample.id, ", ".join(r.scores["mentions"]["missing"])] for r in results
                  if r.scores["mentions"].get("missing")]
        return self.summary(results, self.mean_metrics(results),
                            tables=[Table(title="Missed facts", columns=["question", "missing"], rows=missed)])

    def out_slug(self) -> list[str]:
        return [self.options.gen]

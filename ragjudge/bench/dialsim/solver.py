"""The simulation as a solver: memories are built once, then every planned question is answered concurrently (an
answer never changes the dialogue; the gateway bounds the requests in flight). An answer's latency is retrieval plus
the agent's reply, waiting for a free request slot included, as a deployed agent would wait; a cached reply has none
(`cached`). memory=summary: sessions are summarised when the solver prepares, and it writes `summaries.jsonl` itself.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any

from ragjudge.bench.dialsim.agents import Agent
from ragjudge.bench.dialsim.memory import MemoryUnavailable, ShowMemory
from ragjudge.bench.dialsim.plan import PlannedQuestion
from ragjudge.bench.dialsim.prompts import PARAMS, SYSTEM, AnswerFormat, agent_prompt, summary_prompt
from ragjudge.bench.dialsim.timeline import Timeline
from ragjudge.engine.bench import Record, Solver
from ragjudge.engine.parallel import each_as_completed
from ragjudge.formats.files import atomic_output
from ragjudge.formats.jsonl import dumps
from ragjudge.llm import LLMError, LLMGateway

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext


class SimulationSolver(Solver[PlannedQuestion]):
    def __init__(self, agent: Agent, fmt: AnswerFormat, memories: dict[str, ShowMemory], identity: str,
                 *, time_limit: float | None = None, summary_model: str | None = None):
        self.agent = agent
        self.name = agent.name
        self.fmt = fmt
        self.memories = memories
        self.identity = identity
        self.time_limit = time_limit
        self.summary_model = summary_model

    def fingerprint(self, sample: PlannedQuestion) -> str:
        return self.identity

    async def prepare(self, samples: Sequence[PlannedQuestion], ctx: RunContext) -> None:
        last: dict[str, int] = {}
        for q in samples:
            last[q.show] = max(last.get(q.show, 0), q.session)
        summarised: dict[str, dict[int, str | Exception]] = {}
        for show, memory in self.memories.items():
            if show not in last:
                continue
            if memory.kind == "summary":
                assert self.summary_model is not None
                memory.summaries = summarised[show] = await summarize(
                    memory.timeline, last[show], self.summary_model, ctx.require_gateway(), ctx)
            await asyncio.to_thread(memory.build, ctx.bars, last[show])
        if summarised:
            write_artifact(ctx, "summaries.jsonl", summaries_text(self.memories, summarised))

    async def solve(self, samples: Sequence[PlannedQuestion], ctx: RunContext) -> AsyncIterator[tuple[str, Record]]:
        async for q, output in each_as_completed(list(samples), self._answer):
            yield q.id, output

    async def _answer(self, q: PlannedQuestion) -> Record:
        started = time.perf_counter()
        memory = self.memories[q.show]
        try:
            recall = memory.recall(q)
        except MemoryUnavailable as exc:
            return {"error": str(exc)}
        retrieval = time.perf_counter() - started
        history = recall.block()
        prompt = agent_prompt(q, self.fmt, memory.kind, history)
        out: dict[str, Any] = {"memory": recall.record(), "memory_sessions": recall.sessions(),
                               "memory_chars": len(history), "retrieval_seconds": round(retrieval, 4)}
        if recall.scores is not None:
            out["memory_scores"] = recall.scores
        replying = time.perf_counter()
        try:
            if self.time_limit is None:
                answer = await self.agent.answer(q, self.fmt, recall, prompt)
            else:
                answer = await asyncio.wait_for(self.agent.answer(q, self.fmt, recall, prompt),
                                                max(self.time_limit - retrieval, 1e-3))
        except TimeoutError:
            elapsed = time.perf_counter() - started
            return {**out, "answer": "", "timed_out": True, "latency": round(elapsed, 4), "cached": False}
        except LLMError as exc:
            return {**out, "error": str(exc)}
        reply = time.perf_counter() - replying
        out.update({"answer": answer.text, "timed_out": False, "answer_seconds": round(reply, 4),
                    "latency": round(retrieval + reply, 4), "cached": answer.cached})
        if answer.model:
            out["model"] = answer.model
        return out


async def summarize(timeline: Timeline, upto: int, model: str, gateway: LLMGateway,
                    ctx: RunContext) -> dict[int, str | Exception]:
    """Summaries of the sessions before `upto`, one LLM call each with the official prompt (the response
    cache makes a rerun free); a failed one is kept as its error, so the questions after it report it."""
    sessions = timeline.sessions[:upto]
    advance = ctx.bars.bar(f"summaries ({timeline.show})", total=len(sessions))

    async def one(index: int) -> str | Exception:
        prompt = summary_prompt(timeline.history(timeline.sessions[index]))
        try:
            response = await gateway.complete(model, [{"role": "system", "content": SYSTEM},
                                                      {"role": "user", "content": prompt}], **PARAMS)
            return response.text
        except LLMError as exc:
            return exc
        finally:
            advance(1)

    done: dict[int, str | Exception] = {}
    async for index, summary in each_as_completed([s.index for s in sessions], one):
        done[index] = summary
    return done


def summaries_text(memories: dict[str, ShowMemory], summarised: dict[str, dict[int, str | Exception]]) -> str:
    """summaries.jsonl: one line per session summarised (a failed summary keeps its error)."""
    lines = []
    for show, found in summarised.items():
        for index, text in sorted(found.items()):
            session = memories[show].timeline.sessions[index]
            lines.append(dumps({"show": show, "session": index, "label": session.label,
                                "summary": text if isinstance(text, str) else None,
                                "error": None if isinstance(text, str) else str(text)}))
    return "".join(line + "\n" for line in lines)


def write_artifact(ctx: RunContext, name: str, text: str) -> None:
    """A file of the run folder written now (the engine writes the others at the end): nothing when the run writes
    no files."""
    if ctx.paths is not None:
        with atomic_output(ctx.paths.artifact(name)) as tmp:
            tmp.write_text(text, encoding="utf-8")

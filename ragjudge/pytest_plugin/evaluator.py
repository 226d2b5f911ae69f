"""Run ragjudge's judges on one turn from inside a test: sync API, async judges underneath.

One Evaluator per session: each judge built once (RB_alg's BERT model loads once), one gateway and response cache for
every test, and one event loop on a background thread, so the sync API works from sync and async tests alike.

PYTEST_DONT_REWRITE
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from ragjudge.bench.mtrag.items import judged_item, output_item
from ragjudge.engine.judge_scorer import JudgeScorer
from ragjudge.errors import UsageError
from ragjudge.formats.samples import Score
from ragjudge.judges import Judge, JudgeContext, JudgeRegistry
from ragjudge.llm import LLMGateway, ResponseCache, open_cache
from ragjudge.pytest_plugin.config import RECALL, Settings
from ragjudge.pytest_plugin.inputs import TurnInput
from ragjudge.pytest_plugin.recall import recall_result

T = TypeVar("T")

IDK_FALLBACK = {"idk": "idk_lexical"}
"""When an LLM judge cannot run, its offline stand-in runs instead (and is named as such)."""
API_KEY_ENV = "RAGJUDGE_API_KEY"


class LoopThread:
    """An asyncio loop on a daemon thread; coroutines are submitted from the test's thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="ragjudge-pytest-loop", daemon=True)
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    async def arun(self, coro: Coroutine[Any, Any, T]) -> T:
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self.loop))

    def close(self) -> None:
        """Cancel what libraries left running on the loop (litellm's logging worker), then stop it."""
        with contextlib.suppress(Exception):  # shutting down: a stuck task must not hide the test results
            asyncio.run_coroutine_threadsafe(self._drain(), self.loop).result(timeout=10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=10)
        if not self._thread.is_alive():
            self.loop.close()

    @staticmethod
    async def _drain() -> None:
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await asyncio.get_running_loop().shutdown_asyncgens()


class Evaluator:
    def __init__(self, settings: Settings):
        self.settings = settings
        self.registry = JudgeRegistry(list(settings.judge_dirs))
        self._judges: dict[str, Judge] = {}
        self._gateway: LLMGateway | None = None
        self._cache: ResponseCache | None = None
        self._loop: LoopThread | None = None

    @property
    def judge_names(self) -> list[str]:
        return [*self.registry.names, RECALL]

    # -- judges ------------------------------------------------------------------------------
    def judge(self, name: str) -> Judge:
        if name not in self._judges:
            # a turn without passages is not scored by RB_alg ("not scored: no passages"), not failed with a 0
            options = {"bertscore_model": self.settings.bertscore_model, "backend": self.settings.encoder_backend,
                       "no_passages": "not_applicable"}
            self._judges[name] = self.registry.build(name, options)
        return self._judges[name]

    def name_of(self, judge: Any) -> str:
        """A judge as the test named it: a name, or a criterion in one line (`ragjudge.criterion`), added here."""
        from ragjudge.judges.criterion import Criterion

        if isinstance(judge, Criterion):
            self.registry.add(judge.spec())
            return judge.name
        if not isinstance(judge, str):
            raise TypeError(f"judges= takes judge names and criteria (ragjudge.criterion), got {type(judge).__name__}")
        return judge

    def metric(self, name: str) -> str:
        return self.registry.spec(name).metric

    def needs_llm(self, name: str) -> bool:
        if name == RECALL:
            return False
        spec = self.registry.spec(name)
        return spec.kind == "llm" or self.judge(name).needs_llm

    def unavailable(self, name: str) -> str | None:
        """Why `name` cannot run in this session (an LLM judge without a model, or offline), or None."""
        return self.settings.llm_unavailable if self.needs_llm(name) else None

    def check_names(self, names: list[str]) -> None:
        unknown = [n for n in names if n != RECALL and n not in self.registry.specs]
        if unknown:
            raise UsageError(f"unknown judge(s) {', '.join(map(repr, unknown))} "
                             f"(available: {', '.join(self.judge_names)})")

    def default_judges(self, turn: TurnInput) -> list[str]:
        """Every built-in judge that applies to what the test gave (LLM ones skip without a model)."""
        names = ["idk"]
        if turn.task.reference:
            names += ["rb_alg", "rb_llm"]
        if turn.passages:
            names.append("rl_f")
        if turn.expected_passage_ids is not None:
            names.append(RECALL)
        return [n for n in names if n == RECALL or n in self.registry.specs]

    def plan(self, names: list[str]) -> list[str]:
        """The judges to run for `names`: offline stand-ins added, each judge built before any runs."""
        self.check_names(names)
        planned = list(dict.fromkeys(names))
        for name in list(planned):
            fallback = IDK_FALLBACK.get(name)
            if fallback and self.unavailable(name) and fallback not in planned and fallback in self.registry.specs:
                planned.append(fallback)
        for name in planned:
            if name != RECALL and not self.unavailable(name):
                self.judge(name)  # build errors (a bad spec) surface here, in the test's thread
        return planned

    # -- LLM access --------------------------------------------------------------------------
    def validate_models(self) -> None:
        from ragjudge.llm.gateway import validate_model

        for model in self.settings.judge_models:
            validate_model(model, self.settings.api_base)

    def gateway(self) -> LLMGateway | None:
        if self.settings.llm_unavailable:
            return None
        if self._gateway is None:
            run = dict(self.settings.run)
            self._cache = open_cache(self.settings.cache_dir) if run.pop("use_cache", True) else None
            run.pop("retry_errors", None)  # the judges' (JudgeContext), every other one the gateway's
            self._gateway = LLMGateway(cache=self._cache, api_base=self.settings.api_base,
                                       api_key=os.environ.get(API_KEY_ENV) or None, **run)
        return self._gateway

    @property
    def usage(self) -> dict[str, Any]:
        """LLM calls of this session: sent to a provider vs answered from the cache."""
        if self._gateway is None:
            return {"requests_sent": 0, "calls": 0, "cached": 0, "by_model": {}}
        total = self._gateway.usage.total
        return {"requests_sent": self._gateway.requests_sent, "calls": total.calls, "cached": total.cached,
                "by_model": self._gateway.usage.as_dict()}

    # -- running -----------------------------------------------------------------------------
    def _skipped(self, name: str, reason: str) -> Score:
        return Score(judge=name, metric=self.metric(name), details={"skipped": reason, "llm_unavailable": True})

    async def _run_one(self, name: str, turn: TurnInput, k: int) -> Score:
        if name == RECALL:
            return recall_result(turn.expected_passage_ids, turn.retrieved_ids, k)
        if (reason := self.unavailable(name)) is not None:
            return self._skipped(name, reason)
        judge = self.judge(name)
        ctx = JudgeContext(gateway=self.gateway(), judge_models=list(self.settings.judge_models),
                           cache_dir=self.settings.cache_dir, retry_errors=self.settings.run.get("retry_errors", False),
                           use_cache=self.settings.run.get("use_cache", True))
        scorer = JudgeScorer(judge, ctx, item_of=output_item)
        try:
            [(_, result)] = [judged async for judged in scorer.judged([judged_item(turn.task, turn.prediction)])]
        except Exception as exc:  # a judge that breaks its contract must not take the test session down
            return Score(judge=name, metric=judge.metric, error=f"{type(exc).__name__}: {exc}")
        return result

    async def _run(self, names: list[str], turn: TurnInput, k: int) -> dict[str, Score]:
        results = await asyncio.gather(*(self._run_one(n, turn, k) for n in names))
        return dict(zip(names, results, strict=True))

    def _thread(self) -> LoopThread:
        if self._loop is None:
            self._loop = LoopThread()
        return self._loop

    def run(self, names: list[str], turn: TurnInput, k: int) -> dict[str, Score]:
        planned = self.plan(names)
        return self._thread().run(self._run(planned, turn, k))

    async def arun(self, names: list[str], turn: TurnInput, k: int) -> dict[str, Score]:
        planned = self.plan(names)
        return await self._thread().arun(self._run(planned, turn, k))

    def close(self) -> None:
        if self._loop is not None:
            self._loop.close()
            self._loop = None
        if self._cache is not None:
            self._cache.close()
            self._cache = None

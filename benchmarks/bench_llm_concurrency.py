"""LLM judging of 200 tasks against the local test server with 200 ms latency: concurrent vs sequential.

Prints the timings sequential (1 in flight, fixed), at a fixed concurrency (8: target >= 6x sequential) and at the
default (16 at the start, adapting: the in-flight limit it reached is printed). No cache, so every call is made.
Run: python benchmarks/bench_llm_concurrency.py [--tasks 200] [--latency 0.2] [--concurrency 8]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from ragjudge.judges import JudgeContext, JudgedItem, JudgeRegistry  # noqa: E402
from ragjudge.llm import LLMGateway  # noqa: E402
from ragjudge.defaults import DEFAULT_CONCURRENCY  # noqa: E402
from ragjudge.models import Turn  # noqa: E402
from ragjudge.testing.openai_server import OpenAIServer  # noqa: E402


def items(n: int) -> list[JudgedItem]:
    return [JudgedItem(id=f"t{i}::1", messages=[Turn(speaker="user", text=f"Question {i}: what is an index fund?")],
                       answer=f"An index fund tracks a market index ({i}).") for i in range(n)]


async def judge_all(base_url: str, batch: list[JudgedItem], **settings: Any) -> tuple[float, int]:
    """Seconds to judge `batch`, and the highest in-flight limit the endpoint reached."""
    judge = JudgeRegistry().build("idk")
    gateway = LLMGateway(cache=None, api_base=base_url, api_key="sk-bench", **settings)
    started = time.perf_counter()
    results = await judge.judge(batch, JudgeContext(gateway=gateway, judge_models=["openai/bench-judge"]))
    elapsed = time.perf_counter() - started
    assert all(r.value == 0.0 for r in results), [r.error for r in results if r.error][:3]
    [limiter] = gateway.limiters.values()
    return elapsed, limiter.stats.in_flight_limit_peak or 0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    batch = items(args.tasks)
    with OpenAIServer(lambda request: "no", latency=args.latency) as server:
        asyncio.run(judge_all(server.base_url, batch[:2], concurrency=1))  # warm up litellm's client
        concurrent, _ = asyncio.run(judge_all(server.base_url, batch, concurrency=args.concurrency,
                                              fixed_concurrency=True))
        default, peak = asyncio.run(judge_all(server.base_url, batch))
        sequential, _ = asyncio.run(judge_all(server.base_url, batch, concurrency=1, fixed_concurrency=True))
    print(f"{args.tasks} IDK judgements, {args.latency * 1000:.0f} ms server latency")
    print(f"sequential: {sequential:.2f}s   concurrency {args.concurrency} (fixed): {concurrent:.2f}s   "
          f"speed-up: {sequential / concurrent:.1f}x (target >= 6x)")
    print(f"default (from {DEFAULT_CONCURRENCY}, adaptive; its limit reached {peak}): {default:.2f}s   "
          f"speed-up: {sequential / default:.1f}x, {concurrent / default:.1f}x fixed {args.concurrency}")


if __name__ == "__main__":
    main()

"""RB_alg on 200 tasks: ragjudge's batched scoring vs one BERTScore call per pair (the benchmark scripts' pattern).

Same model, same pairs; prints both timings, the speed-up (target >= 5x) and the largest score difference
(must be < 1e-4). Run: python benchmarks/bench_rb_alg.py [--tasks 200] [--bertscore-model bundled]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from ragjudge.formats.mtrag import read_tasks  # noqa: E402
from ragjudge.judges import JudgeContext, JudgeItem, JudgeRegistry  # noqa: E402
from ragjudge.metrics.rb_alg import rb_agg  # noqa: E402
from ragjudge.metrics.rouge import rouge_l_f  # noqa: E402
from ragjudge.models import Prediction  # noqa: E402

MINI = Path(__file__).resolve().parents[1] / "examples" / "mini"


def make_items(n: int) -> list[JudgeItem]:
    """n answerable tasks from the mini set, each answered with a different slice of its passages."""
    tasks = [t for t in read_tasks(MINI) if t.contexts and t.reference]
    items = []
    for i in range(n):
        task = tasks[i % len(tasks)]
        words = " ".join(p.text for p in task.contexts).split()
        start = (i // len(tasks)) * 7 % max(1, len(words) - 40)
        items.append(JudgeItem(task, Prediction(task_id=task.task_id, text=" ".join(words[start:start + 40]))))
    return items


def pairwise(judge, items: list[JudgeItem]) -> list[float]:
    """The official scripts' loop: one scorer call per (response, reference) and per (response, passage)."""
    scorer = judge.scorer
    scores = []
    for item in items:
        _, recall, _ = scorer.score([item.prediction.text], [item.task.reference])
        kprec = max(scorer.score([item.prediction.text], [p.text])[0][0] for p in item.passages)
        scores.append(rb_agg(recall[0], rouge_l_f(item.prediction.text, item.task.reference), kprec))
    return scores


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--bertscore-model", default="bundled")
    args = parser.parse_args()
    judge = JudgeRegistry().build("rb_alg", {"bertscore_model": args.bertscore_model})
    items = make_items(args.tasks)
    judge.scorer.score(["warm up"], ["warm up"])  # load the model outside both timings

    started = time.perf_counter()
    batched = [r.value for r in asyncio.run(judge.judge(items, JudgeContext()))]
    t_batched = time.perf_counter() - started

    started = time.perf_counter()
    single = pairwise(judge, items)
    t_single = time.perf_counter() - started

    diff = max(abs(a - b) for a, b in zip(batched, single, strict=True))
    print(f"model: {judge.config.describe()}")
    print(f"tasks: {len(items)}, pairs: {sum(1 + len(i.passages) for i in items)}")
    print(f"one pair at a time: {t_single:.2f}s   batched: {t_batched:.2f}s   speed-up: {t_single / t_batched:.1f}x "
          f"(target >= 5x)")
    print(f"max |score difference|: {diff:.2e} (must be < 1e-4)")


if __name__ == "__main__":
    main()

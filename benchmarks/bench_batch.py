"""`--batch` on a realistic judging workload: how many batches, what it costs, what it takes on the client.

832 MTRAG tasks (the 208 real ClapNQ conversations with their real top-5 passages from 4 retrieval runs: bm25, bge
and elser with rewritten queries, elser with last turns; each "system" answers with the first sentences of its
top passage) judged with IDK + a 3-model RB_llm panel + RL_F (statements, then NLI verdicts): 4,992 requests.
Run once through the provider's batch interface (`--batch`) and once with direct calls, against the local test
server (which answers every judge prompt, in batches after `--batch-delay` seconds, directly after `--latency`).

Prints: requests, batches, direct chat calls made, HTTP 429s, wall time, client CPU time (the ragjudge process),
and the cost at litellm's prices for the three judge models (gpt-4o-mini, gpt-4.1-mini, gpt-4o), batch / direct.
Run: python benchmarks/bench_batch.py [--systems 4] [--latency 0.3] [--concurrency 64] [--batch-delay 5]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from ragjudge.testing.openai_server import OpenAIServer, Request

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "mtrag"
RUNS = ["bm25_rewrite", "bge_rewrite", "elser_rewrite", "elser_lastturn"]
MODELS = ["openai/gpt-4o-mini", "openai/gpt-4.1-mini", "openai/gpt-4o"]
STATEMENTS = "Break down each sentence into one or more fully understandable statements"
NLI = "Your task is to judge the faithfulness of a series of statements"


def sentences(text: str, n: int) -> str:
    return " ".join(re.split(r"(?<=[.!?])\s+", " ".join(text.split()))[:n])


def build_tasks(path: Path, systems: int) -> int:
    conversations = {}
    for line in (DATA / "retrieval" / "clapnq" / "questions.jsonl").read_text().splitlines():
        row = json.loads(line)
        conversations[row["_id"]] = [t.removeprefix("|user|: ") for t in row["text"].split("\n") if t.strip()]
    n = 0
    with path.open("w") as out:
        for run in RUNS[:systems]:
            for line in (DATA / "runs" / f"clapnq_{run}.jsonl").read_text().splitlines():
                row = json.loads(line)
                conversation, turn = row["task_id"].split("<::>")
                passages = row["contexts"][:5]
                out.write(json.dumps({
                    "task_id": f"{conversation}-{run}::{turn}",
                    "input": [{"speaker": "user", "text": t} for t in conversations[row["task_id"]]],
                    "contexts": [{"document_id": p["document_id"], "text": p["text"], "score": p["score"]}
                                 for p in passages],
                    "targets": [{"speaker": "agent", "text": sentences(passages[-1]["text"], 3)}],
                    "answerability": ["ANSWERABLE"],
                    "predictions": [{"text": sentences(passages[0]["text"], 2)}],
                }) + "\n")
                n += 1
    return n


def ragas_input(request: Request) -> dict:
    tail = request.last_user.rsplit("Now perform the same with the following input\ninput: ", 1)[1]
    return json.loads(tail.rsplit("\nOutput: ", 1)[0])


def judge(request: Request) -> str:
    """Every judge prompt of the workload, answered as a competent judge would (in its expected format)."""
    prompt = request.prompt
    if STATEMENTS in prompt:
        answer = ragas_input(request)["answer"]
        return json.dumps({"statements": [s for s in re.split(r"(?<=[.!?])\s+", answer) if s][:6]})
    if NLI in prompt:
        data = ragas_input(request)
        return json.dumps({"statements": [{"statement": s, "reason": "checked against the context",
                                           "verdict": int(s[:40] in data["context"])} for s in data["statements"]]})
    if "[The Start of Reference Answer]" in prompt:
        return "The answer covers the main point of the reference, with some detail missing.\nRating: [[7]]"
    return "no"


def run(source: Path, out: Path, server: OpenAIServer, cache: Path, extra: list[str]
        ) -> tuple[float, float, dict, dict]:
    """(wall seconds, CPU seconds of the ragjudge process, run.json, summary)."""
    env = {**os.environ, "RAGJUDGE_CACHE_DIR": str(cache), "OPENAI_API_KEY": "sk-bench"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "ragjudge", "judge", str(source), "--judges", "idk,rb_llm,rl_f",
                           "--judge-models", ",".join(MODELS), "--api-base", server.base_url, "--out", str(out),
                           "--format", "json", *extra], capture_output=True, text=True, env=env, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"ragjudge failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu, json.loads(out.with_name(out.name.removesuffix(".jsonl") + ".run.json").read_text()), \
        json.loads(proc.stdout)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--systems", type=int, default=4, help="retrieval runs answering the 208 tasks (1-4)")
    parser.add_argument("--latency", type=float, default=0.3, help="seconds per direct answer")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--batch-delay", type=float, default=5.0, help="seconds a batch stays in progress")
    args = parser.parse_args()
    if not DATA.is_dir():
        raise SystemExit(f"needs the shared MTRAG data at {DATA}")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        n = build_tasks(tmp / "tasks.jsonl", args.systems)
        with OpenAIServer(judge, latency=args.latency, batch_delay=args.batch_delay) as server:
            b_wall, b_cpu, b_run, b_summary = run(tmp / "tasks.jsonl", tmp / "batch.jsonl", server,
                                                  tmp / "cache-b", ["--batch"])
            b_calls, b_429 = server.chat_count(), server.rate_limited
            d_wall, d_cpu, d_run, d_summary = run(tmp / "tasks.jsonl", tmp / "direct.jsonl", server,
                                                  tmp / "cache-d", ["--concurrency", str(args.concurrency)])
            d_calls = server.chat_count() - b_calls
            distinct = len({(r.model, json.dumps(r.messages, sort_keys=True)) for r in server.requests})
            submitted, batches = len(server.batches.submitted), len(server.batches.batches)
    b_cost = sum(u["cost"] for u in b_run["usage"].values())
    d_cost = sum(u["cost"] for u in d_run["usage"].values())
    requests = sum(u["requests"] for u in d_run["usage"].values())
    asked = requests + sum(u["cached"] for u in d_run["usage"].values())
    print(f"{n} tasks x (IDK + RB_llm panel of 3 + RL_F statements and NLI) = {asked} judge requests, "
          f"{distinct} distinct")
    same = "identical" if b_summary["metrics"] == d_summary["metrics"] else "DIFFERENT"
    print(f"both ways send each distinct request once (an identical one is answered by the same call or line): "
          f"direct {requests} calls, batch {submitted} lines; judgements of both runs: {same}")
    print(f"--batch: {submitted} requests in {batches} batches, {b_calls} direct calls, {b_429} HTTP 429; "
          f"wall {b_wall:.1f} s (of which {args.batch_delay * 2:.0f} s the two stages' batch delay), "
          f"client CPU {b_cpu:.1f} s")
    print(f"direct:  {d_calls} calls at concurrency {args.concurrency}, {args.latency * 1000:.0f} ms each; "
          f"wall {d_wall:.1f} s, client CPU {d_cpu:.1f} s")
    print(f"cost at litellm's prices: batch ${b_cost:.4f} vs direct ${d_cost:.4f}: "
          f"**{b_cost / d_cost:.3f}x** (half the price per request), "
          f"client CPU batch/direct {b_cpu / d_cpu:.2f}x")
    print(f"for scale: at 600 RPM the direct calls alone need >= {requests / 600:.1f} min; a batch waits for "
          "no rate limit (providers answer within 24 h)")


if __name__ == "__main__":
    main()

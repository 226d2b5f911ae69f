"""LLM judging under a provider's rate limit: how much of the limit a run uses, and how often it is refused.

Workload: MTRAG judging, IDK + a 3-member RB_llm panel (4 requests a task; `--judges idk,rb_llm,rl_f` adds RL_F's
statement and NLI requests, 2 more a task, as in the issue's 842-task workload), `ragjudge judge` in-process, on
real MTRAG tasks and responses (`../shared/data/mtrag/generation/responses-10.jsonl`, repeated with distinct
ids to the task count). The local OpenAI-compatible server enforces the limit like a provider: at most
RPM/6 requests in any 10 seconds, 429 with Retry-After beyond it. Three ways to meet it, in one run:

- `hammer`:  no limit given and none announced (the server sends no x-ratelimit headers): the run finds the
             limit from 429s (the endpoint pauses on each, and retries go oldest first);
- `learnt`:  no limit given, the server announces it in x-ratelimit-limit-requests (as OpenAI does);
- `--rpm`:   the limit given (`--rpm` / a models file).

Each way runs in a fresh process, so each pays the same start-up (whatever the run imports and loads before its
first request). Printed per way and latency: seconds, the requests the server accepted, the share of the limit
they used over the whole run, start-up included (accepted requests a minute, from the start of the run to the last
accepted request: the last answer's own latency is no pacing's to shorten), where the rest went (`start s`: from
the run's start to its first request; `paced %`: the share from the first accepted request to the last, the pace
once started), the share of requests answered 429, failed items, CPU seconds. Targets (issue 16, issue 44):
>= 95 % of the RPM over the whole run with 0 429s and 0 failed items with pacing.

Run: python benchmarks/bench_llm_pacing.py [--tasks 300] [--rpm 600] [--latency 0.3,3] [--concurrency 16]
           [--fixed-concurrency] [--judges idk,rb_llm[,rl_f]] [--ways hammer,learnt,--rpm]
(the issue's full workload: --tasks 842 --judges idk,rb_llm,rl_f; at 600 RPM that is 4,884 requests, about 8.5
minutes per way; --tasks 842 alone is 3,368 requests, about 6 minutes per way.)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("OPENAI_API_KEY", "sk-bench")

from ragjudge.bench.mtrag.bench import MtragBench, MtragOptions  # noqa: E402
from ragjudge.engine import EngineOptions, OutputPaths, run  # noqa: E402
from ragjudge.defaults import DEFAULT_CONCURRENCY  # noqa: E402
from ragjudge.testing.openai_server import OpenAIServer, Request  # noqa: E402
from ragjudge.testing.scripted_judges import NLI_MARK, STATEMENTS_MARK, judge_panel  # noqa: E402

RESPONSES = Path(__file__).resolve().parents[2] / "shared" / "data" / "mtrag" / "generation" / "responses-10.jsonl"
PANEL = ["openai/judge-a", "openai/judge-b", "openai/judge-c"]


def tasks_file(folder: Path, n: int) -> Path:
    """Real MTRAG tasks with their responses, repeated under new ids (a few thousand characters a prompt)."""
    if not RESPONSES.exists():
        sys.exit(f"needs {RESPONSES} (the shared MTRAG data)")
    real = [json.loads(line) for line in RESPONSES.read_text().splitlines()]
    path = folder / "responses.jsonl"
    with path.open("w") as fh:
        for i in range(n):
            record = dict(real[i % len(real)])
            record["task_id"] = f"bench{i}::{record['turn']}"
            record["conversation_id"] = f"bench{i}"
            record["predictions"] = [{"text": f"{record['predictions'][0]['text']} (system {i})"}]
            fh.write(json.dumps(record) + "\n")
    return path


_RAGAS = judge_panel()


def judge_answer(request: Request) -> str:
    if STATEMENTS_MARK in request.prompt or NLI_MARK in request.prompt:  # RL_F: ragas's two prompts, as JSON
        return str(_RAGAS(request))
    if "[The Start of Reference Answer]" in request.prompt:
        return "The answer covers the reference.\nRating: [[7]]"
    return "no"


def one_way(way: str, source: str, rpm: float, latency: float, concurrency: int, folder: str,
            judges: list[str], fixed: bool = False) -> dict:
    """One way in this process (a fresh one: `--child`); the clock starts as the run does."""
    window = 10.0
    server = OpenAIServer(judge_answer, latency=latency, rate_limit=(int(rpm * window / 60), window))
    server.announce_limits = way == "learnt"
    with server:
        options = MtragOptions(predictions=source, judges=judges, judge_models=PANEL)
        engine = EngineOptions(api_base=server.base_url, concurrency=concurrency, fixed_concurrency=fixed,
                               use_cache=False,
                               rpm=rpm if way == "--rpm" else None, show_progress=False, preflight=False)
        cpu, wall, began = time.process_time(), time.perf_counter(), time.monotonic()
        outcome = run(MtragBench(options), engine, OutputPaths.beside(Path(folder) / "out.jsonl"))
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        accepted = sorted(set(server.arrivals) - set(server.refused_at))
    failed = sum(1 for r in outcome.results if r.errors)
    sent = len(server.arrivals)
    span = accepted[-1] - began if accepted else float("nan")
    return {"way": way, "latency": latency, "seconds": wall, "requests": len(accepted), "sent": sent,
            "share_of_limit": len(accepted) / span * 60 / rpm, "start": accepted[0] - began,
            "paced_share": (len(accepted) - 1) / (accepted[-1] - accepted[0]) * 60 / rpm,
            "refused": server.rate_limited / max(1, sent), "failed": failed, "cpu": cpu}


def in_fresh_process(**kw) -> dict:
    done = subprocess.run([sys.executable, __file__, "--child", json.dumps(kw)], capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"{kw['way']} at {kw['latency']:g} s failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        print(json.dumps(one_way(**json.loads(sys.argv[2]))))
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=300)
    parser.add_argument("--rpm", type=float, default=600)
    parser.add_argument("--latency", default="0.3,3")
    parser.add_argument("--concurrency", type=int, default=DEFAULT_CONCURRENCY)
    parser.add_argument("--fixed-concurrency", action="store_true", help="--concurrency as a hard cap, not a start")
    parser.add_argument("--ways", default="hammer,learnt,--rpm")
    parser.add_argument("--judges", default="idk,rb_llm", help="idk,rb_llm,rl_f: the issue's workload (with RL_F)")
    args = parser.parse_args()
    latencies = [float(x) for x in args.latency.split(",")]
    ways = [w.strip() for w in args.ways.split(",")]
    judges = [j.strip() for j in args.judges.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        source = tasks_file(folder, args.tasks)
        print(f"{args.tasks} tasks x {'+'.join(judges)} (RB_llm: a panel of {len(PANEL)}) against a server allowing "
              f"{args.rpm:g} RPM; concurrency {args.concurrency}{' (fixed)' if args.fixed_concurrency else ''}")
        print(f"{'way':<8} {'latency':>7} {'seconds':>8} {'requests':>8} {'% of RPM':>9} {'start s':>8} "
              f"{'paced %':>8} {'429 share':>10} {'failed':>7} {'CPU s':>7}")
        rows = []
        for latency in latencies:
            for way in ways:
                sub = folder / f"{re.sub('[^a-z]', '', way)}-{latency:g}"
                sub.mkdir()
                row = in_fresh_process(way=way, source=str(source), rpm=args.rpm, latency=latency,
                                       concurrency=args.concurrency, folder=str(sub), judges=judges,
                                       fixed=args.fixed_concurrency)
                rows.append(row)
                print(f"{way:<8} {latency:>7g} {row['seconds']:>8.1f} {row['requests']:>8} "
                      f"{row['share_of_limit']:>9.1%} {row['start']:>8.2f} {row['paced_share']:>8.1%} "
                      f"{row['refused']:>10.2%} {row['failed']:>7} {row['cpu']:>7.1f}", flush=True)
        for latency in latencies:
            base = next(r for r in rows if r["latency"] == latency and r["way"] == ways[0])
            for r in rows:
                if r["latency"] == latency and r is not base:
                    if r["refused"] == 0:
                        fewer = "no 429 at all"
                    elif base["refused"] == 0:
                        fewer = f"{r['refused']:.2%} 429s against none"
                    else:
                        fewer = f"{base['refused'] / r['refused']:.1f}x fewer 429s"
                    print(f"latency {latency:g}: {r['way']} vs {base['way']}: {base['seconds'] / r['seconds']:.2f}x "
                          f"faster, {fewer}, {base['cpu'] / max(r['cpu'], 1e-9):.2f}x less CPU")


if __name__ == "__main__":
    main()

"""The standard RAG judges against `ragas.evaluate` on the same 50 samples: requests per sample and wall time.

50 real MTRAG ClapNQ tasks (their conversations' user turns; the top-5 passages of the ELSER rewrite run; as the
answer the first two sentences of the top passage, as the reference the first three of the second: real text
lengths) judged by faithfulness, answer_relevancy, context_precision, context_recall, context_relevance and
answer_correctness: once by `ragjudge.evaluate` (a fresh cache, then again on it), once by `ragas.evaluate` with the
same six RAGAS metrics in one call (LangChain's ChatOpenAI). Both against the local test server answering RAGAS's
prompts (`ragjudge.testing.ragas_model`) with the same latency per request, both with 16 workers (ragjudge:
`concurrency`, requests in flight; ragas: `RunConfig.max_workers`, metric jobs in flight), the bundled MiniLM for
embeddings on both sides (ragjudge's encoder; for ragas the same model through the same adapter, as the equality
tests do). Each tool runs in a fresh process of its own (`--child`), the server in this one, so a tool's CPU time is
its own: prints requests (chat and embeddings), requests per sample, wall time of the evaluation, CPU time of the
evaluation and per request, the time from starting the process to its first request, the ratios, and how many
samples got the same score from both. ragjudge then runs again on its cache in a fresh process (no request). The
embedding model's ONNX export is made once before any timing and shared (`share_model_export`).

Run: python benchmarks/bench_rag_judges.py [--samples 50] [--latency 0.2] [--workers 16]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")

if TYPE_CHECKING:
    from ragjudge.testing.openai_server import OpenAIServer

DATA = Path(os.environ.get("RAGJUDGE_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")) / "mtrag"
JUDGES = ["faithfulness", "answer_relevancy", "context_precision", "context_recall", "context_relevance",
          "answer_correctness"]
EMBEDDING_JUDGES = {"answer_relevancy", "answer_correctness"}


def first_sentences(text: str, n: int) -> str:
    return " ".join(re.split(r"(?<=[.!?])\s+", " ".join(text.split()))[:n])


def build_samples(n: int) -> list[dict]:
    """MTRAG prediction records: conversation, passages, reference (targets), answer (predictions)."""
    conversations = {}
    for line in (DATA / "retrieval" / "clapnq" / "questions.jsonl").read_text().splitlines():
        row = json.loads(line)
        conversations[row["_id"]] = [t.removeprefix("|user|: ") for t in row["text"].split("\n") if t.strip()]
    records = []
    for line in (DATA / "runs" / "clapnq_elser_rewrite.jsonl").read_text().splitlines()[:n]:
        row = json.loads(line)
        passages = row["contexts"][:5]
        records.append({
            "task_id": row["task_id"].replace("<::>", "::"),
            "input": [{"speaker": "user", "text": t} for t in conversations[row["task_id"]]],
            "contexts": [{"document_id": p["document_id"], "text": p["text"]} for p in passages],
            "targets": [{"speaker": "agent", "text": first_sentences(passages[1]["text"], 3)}],
            "predictions": [{"text": first_sentences(passages[0]["text"], 2)}],
        })
    return records


def run_ragjudge(path: Path, cache: Path, base_url: str, workers: int) -> tuple[float, float, dict[str, dict]]:
    """(wall seconds, CPU seconds of this process, scores by sample id)."""
    import ragjudge

    started, cpu = time.perf_counter(), time.process_time()
    result = ragjudge.evaluate(path, judges=JUDGES, judge_models=["openai/gpt-4o-mini"], api_base=base_url,
                               concurrency=workers, cache_dir=cache, show_progress=False)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    frame = result.to_pandas()
    return wall, cpu, {name: dict(zip(frame["sample_id"], frame[name], strict=True)) for name in JUDGES}


def ragas_samples(records: list[dict]) -> list:
    from ragas.dataset_schema import SingleTurnSample

    samples = []
    for r in records:
        turns = r["input"]
        question = turns[0]["text"] if len(turns) == 1 else "\n".join(f"{t['speaker']}: {t['text']}" for t in turns)
        samples.append(SingleTurnSample(user_input=question, response=r["predictions"][0]["text"],
                                        retrieved_contexts=[c["text"] for c in r["contexts"]],
                                        reference=r["targets"][0]["text"]))
    return samples


def run_ragas(records: list[dict], base_url: str, workers: int) -> tuple[float, float, dict[str, dict]]:
    from langchain_openai import ChatOpenAI
    from ragas import EvaluationDataset, RunConfig, evaluate
    from ragas.metrics._answer_correctness import AnswerCorrectness
    from ragas.metrics._answer_relevance import ResponseRelevancy
    from ragas.metrics._context_precision import LLMContextPrecisionWithReference
    from ragas.metrics._context_recall import LLMContextRecall
    from ragas.metrics._faithfulness import Faithfulness
    from ragas.metrics._nv_metrics import ContextRelevance

    from ragjudge.judges.ragas_embeddings import EncoderRagasEmbeddings
    from ragjudge.retrieval.encoders import SentenceTransformerEncoder

    metrics = {"faithfulness": Faithfulness(), "answer_relevancy": ResponseRelevancy(),
               "context_precision": LLMContextPrecisionWithReference(), "context_recall": LLMContextRecall(),
               "context_relevance": ContextRelevance(), "answer_correctness": AnswerCorrectness()}
    encoder = SentenceTransformerEncoder("minilm")
    encoder.encode(["warm up"])  # the model loads outside the timing, as ragjudge's does in its warm-up
    llm = ChatOpenAI(model="gpt-4o-mini", base_url=base_url, api_key="sk-bench", temperature=0)
    dataset = EvaluationDataset(samples=ragas_samples(records))
    started, cpu = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = evaluate(dataset, metrics=list(metrics.values()), llm=llm,
                          embeddings=EncoderRagasEmbeddings(encoder), run_config=RunConfig(max_workers=workers),
                          show_progress=False)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    frame = result.to_pandas()
    ids = [r["task_id"] for r in records]
    return wall, cpu, {name: dict(zip(ids, frame[metric.name], strict=True)) for name, metric in metrics.items()}


def mean(values: dict) -> float:
    kept = [float(v) for v in values.values() if v is not None and not math.isnan(float(v))]
    return sum(kept) / len(kept) if kept else math.nan


def agree(name: str, a: float, b: float) -> bool:
    """Embedding-derived scores: as close as a float32 model allows; the others exactly."""
    return math.isclose(a, b, rel_tol=1e-4) if name in EMBEDDING_JUDGES else a == b


def child(args: argparse.Namespace) -> None:
    """One tool's evaluation in this fresh process: (wall, CPU, scores) as JSON on stdout's last line."""
    records = [json.loads(line) for line in Path(args.source).read_text().splitlines()]
    if args.child == "ragas":
        wall, cpu, scores = run_ragas(records, args.base_url, args.workers)
    else:
        wall, cpu, scores = run_ragjudge(Path(args.source), Path(args.cache), args.base_url, args.workers)
    clean = {name: {k: (None if v is None or math.isnan(float(v)) else float(v)) for k, v in by_id.items()}
             for name, by_id in scores.items()}
    print(json.dumps({"wall": wall, "cpu": cpu, "scores": clean}))


def fresh(tool: str, source: Path, cache: Path, server: OpenAIServer, workers: int) -> dict:
    """`tool` evaluated in a fresh process against `server`: the child's own figures (the evaluation's wall and CPU
    time), the whole process's wall and CPU time (start-up, imports and model loads included), the requests it sent,
    and the seconds from starting the process to its first request (None: it sent none). The child's default cache
    folder is `cache/home`, new for each tool: ragas's embeddings (ragjudge's encoder, outside any run) read and
    write the default embedding store, which earlier runs of this benchmark had filled with these very texts (it
    encoded nothing, so its embedding cost went unmeasured), while ragjudge's first run encodes into a new store."""
    before_requests, before_chat, before_cpu = len(server.requests), server.chat_count(), os.times()
    started = time.monotonic()
    done = subprocess.run([sys.executable, __file__, "--child", tool, "--source", str(source), "--cache",
                           str(cache), "--base-url", server.base_url, "--workers", str(workers)],
                          capture_output=True, text=True,
                          env={**os.environ, "PYTHONWARNINGS": "ignore", "RAGJUDGE_CACHE_DIR": str(cache / "home")})
    process_wall, after_cpu = time.monotonic() - started, os.times()
    if done.returncode != 0:
        raise SystemExit(f"{tool} failed:\n{done.stderr[-3000:]}")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    figures["process_wall"] = process_wall
    figures["process_cpu"] = (after_cpu.children_user - before_cpu.children_user
                              + after_cpu.children_system - before_cpu.children_system)
    figures["requests"] = len(server.requests) - before_requests
    figures["chat"] = server.chat_count() - before_chat
    arrivals = server.arrivals[before_requests:]
    figures["first"] = arrivals[0] - started if arrivals else None
    return figures


def share_model_export(folder: Path) -> None:
    """Both tools' MiniLM runs on ONNX Runtime from one export, made here before any timing: an install-time cost
    (made once per machine, kept in `$RAGJUDGE_ONNX_DIR` or the user's cache), not a cost of either evaluation.
    Without it ragjudge's child, whose response cache is new for every run, exported the model again inside its
    timed run (about 5 s of CPU) while ragas's child read the export kept in the user's cache. The export folder
    also keeps the tokenizer as transformers loads it, which both children then read without transformers."""
    os.environ["RAGJUDGE_ONNX_DIR"] = str(folder)
    from ragjudge.retrieval.encoders import SentenceTransformerEncoder

    encoder = SentenceTransformerEncoder("minilm")
    encoder.forward_pass()  # loads the model: its export (encode() may find its text stored)
    encoder.batch_tokenizer()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=50)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds the server takes per request")
    parser.add_argument("--workers", type=int, default=16)
    parser.add_argument("--child", choices=["ragjudge", "ragas"], help=argparse.SUPPRESS)
    parser.add_argument("--source", help=argparse.SUPPRESS)
    parser.add_argument("--cache", help=argparse.SUPPRESS)
    parser.add_argument("--base-url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:  # nothing imported before the tool's own imports: its first request is timed from the start
        return child(args)
    from ragjudge.testing.openai_server import OpenAIServer
    from ragjudge.testing.ragas_model import ragas_model  # imports ragas: the server's side only
    if not DATA.is_dir():
        raise SystemExit(f"needs the shared MTRAG data at {DATA} (or $RAGJUDGE_SHARED_DATA)")
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench")
    records = build_samples(args.samples)
    n = len(records)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        source = tmp / "samples.jsonl"
        source.write_text("".join(json.dumps(r) + "\n" for r in records))
        share_model_export(tmp / "onnx")
        with OpenAIServer(ragas_model(), latency=args.latency) as server:
            ours = fresh("ragjudge", source, tmp / "cache", server, args.workers)
            again = fresh("ragjudge", source, tmp / "cache", server, args.workers)
        with OpenAIServer(ragas_model(), latency=args.latency) as server:
            theirs = fresh("ragas", source, tmp / "unused", server, args.workers)

    print(f"{n} MTRAG ClapNQ samples x {len(JUDGES)} judges ({', '.join(JUDGES)}), {args.latency * 1000:.0f} ms "
          f"per request, {args.workers} workers; each tool in a fresh process; {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.1f}")
    print("MiniLM (both tools' embeddings) runs on ONNX Runtime from one export and the tokenizer kept beside it, made "
          "before timing (an install-time cost, in $RAGJUDGE_ONNX_DIR); each tool's first run starts with an empty "
          "embedding store")
    print("evaluation: the tool's evaluate call (ragas's imports and model load before it, ragjudge's inside it); "
          "process: from starting the fresh process to its exit")
    print(f"{'':24}{'requests':>9}{'(chat)':>7}{'/sample':>8}{'eval s':>8}{'eval CPU':>9}{'ms/req':>7}"
          f"{'process s':>10}{'proc CPU':>9}{'ms/req':>7}{'1st req s':>10}")
    for label, f in [("ragas.evaluate", theirs), ("ragjudge", ours), ("ragjudge, rerun (cache)", again)]:
        per = f"{f['cpu'] / f['requests'] * 1000:.1f}" if f["requests"] else "-"
        proc = f"{f['process_cpu'] / f['requests'] * 1000:.1f}" if f["requests"] else "-"
        first = f"{f['first']:.2f}" if f["first"] is not None else "-"
        print(f"{label:24}{f['requests']:>9}{f['chat']:>7}{f['requests'] / n:>8.2f}{f['wall']:>8.1f}{f['cpu']:>9.1f}"
              f"{per:>7}{f['process_wall']:>10.1f}{f['process_cpu']:>9.1f}{proc:>7}{first:>10}")
    print(f"ratio ragjudge / ragas: process wall {ours['process_wall'] / theirs['process_wall']:.2f}x (target <= 0.6), "
          f"process CPU per request {(ours['process_cpu'] / ours['requests']) / (theirs['process_cpu'] / theirs['requests']):.2f}x "
          f"(target <= 1), requests {ours['requests'] / theirs['requests']:.2f}x")
    print(f"{'mean score':24}{'ragas':>10}{'ragjudge':>10}  samples with the same score")
    for name in JUDGES:
        mine, other = ours["scores"][name], theirs["scores"][name]
        same = sum(other[k] is not None and mine.get(k) is not None and agree(name, other[k], mine[k]) for k in other)
        print(f"{name:24}{mean(other):>10.4f}{mean(mine):>10.4f}  {same}/{n}")


if __name__ == "__main__":
    main()

"""The standard RAG judges against `ragas.evaluate` on the same 50 samples: requests per sample and wall time.

50 real MTRAG ClapNQ tasks (their conversations' user turns; the top-5 passages of the ELSER rewrite run; as the
answer the first two sentences of the top passage, as the reference the first three of the second: real text
lengths) judged by faithfulness, answer_relevancy, context_precision, context_recall, context_relevance and
answer_correctness: once by `ragjudge.evaluate` (a fresh cache, then again on it), once by `ragas.evaluate` with the
same six RAGAS metrics in one call (LangChain's ChatOpenAI). Both against the local test server answering RAGAS's
prompts (`ragjudge.testing.ragas_model`) with the same latency per request, both with 16 workers (ragjudge:
`concurrency`, requests in flight; ragas: `RunConfig.max_workers`, metric jobs in flight), the bundled MiniLM for
embeddings on both sides (ragjudge's encoder; for ragas the same model through the same adapter, as the equality
tests do). Prints requests, requests per sample, wall time, CPU time of the process (the test server's threads
included, on both sides) and the ratios, and how many samples got the same score from both.

Run: python benchmarks/bench_rag_judges.py [--samples 50] [--latency 0.2] [--workers 16]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import tempfile
import time
import warnings
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")

from ragjudge.testing.openai_server import OpenAIServer  # noqa: E402
from ragjudge.testing.ragas_model import ragas_model  # noqa: E402

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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=50)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds the server takes per request")
    parser.add_argument("--workers", type=int, default=16)
    args = parser.parse_args()
    if not DATA.is_dir():
        raise SystemExit(f"needs the shared MTRAG data at {DATA} (or $RAGJUDGE_SHARED_DATA)")
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench")
    records = build_samples(args.samples)
    n = len(records)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        source = tmp / "samples.jsonl"
        source.write_text("".join(json.dumps(r) + "\n" for r in records))
        with OpenAIServer(ragas_model(), latency=args.latency) as warm:  # imports, model loads, litellm's client
            run_ragjudge(source, tmp / "warm-cache", warm.base_url, args.workers)
        with OpenAIServer(ragas_model(), latency=args.latency) as server:
            ours_wall, ours_cpu, ours = run_ragjudge(source, tmp / "cache", server.base_url, args.workers)
            ours_requests = server.chat_count()
            again_wall, again_cpu, _ = run_ragjudge(source, tmp / "cache", server.base_url, args.workers)
            again_requests = server.chat_count() - ours_requests
        with OpenAIServer(ragas_model(), latency=args.latency) as server:
            ragas_wall, ragas_cpu, theirs = run_ragas(records, server.base_url, args.workers)
            ragas_requests = server.chat_count()

    print(f"{n} MTRAG ClapNQ samples x {len(JUDGES)} judges ({', '.join(JUDGES)}), {args.latency * 1000:.0f} ms "
          f"per request, {args.workers} workers")
    print(f"{'':24}{'requests':>10}{'per sample':>12}{'wall s':>10}{'CPU s':>10}")
    for label, requests, wall, cpu in [("ragas.evaluate", ragas_requests, ragas_wall, ragas_cpu),
                                       ("ragjudge", ours_requests, ours_wall, ours_cpu),
                                       ("ragjudge, rerun (cache)", again_requests, again_wall, again_cpu)]:
        print(f"{label:24}{requests:>10}{requests / n:>12.2f}{wall:>10.1f}{cpu:>10.1f}")
    print(f"ratio ragas / ragjudge: requests {ragas_requests / ours_requests:.2f}x, wall time "
          f"{ragas_wall / ours_wall:.2f}x")
    print(f"{'mean score':24}{'ragas':>10}{'ragjudge':>10}  samples with the same score")
    for name in JUDGES:
        same = sum(agree(name, float(theirs[name][k]), float(ours[name][k])) for k in theirs[name])
        print(f"{name:24}{mean(theirs[name]):>10.4f}{mean(ours[name]):>10.4f}  {same}/{n}")


if __name__ == "__main__":
    main()

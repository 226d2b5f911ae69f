"""The GPU against the CPU, in one run on one machine: RB_alg on MTRAG-length responses and dense indexing of the
50,000-passage corpus, the same scores either side. A short prepared script, for whenever a CUDA GPU is at hand.

    python benchmarks/bench_gpu.py [--gpu cuda] [--tasks 100] [--systems 5] [--passages 50000] [--cpu-passages 2000]
                                   [--precisions auto,tf32,fp32,fp16] [--batch-size N] [--model-alone 10000]
                                   [--profile 0]

RB_alg: bench_rb_alg.py's workload (real MTRAG passages, 5 systems on the same tasks), each system a fresh judge on a
cold embedding store, on the CPU (the backend `auto` picks there) and on the GPU (PyTorch, fp32: RB_alg's scores
must stay within 1e-5). Dense: bench_embedding_store.py's corpus (the 9,702 real pool passages, then real-sentence
recombinations); the GPU indexes all of it in each of --precisions (`auto` first: bf16x3 on a GPU that has bf16
tensor cores and a PyTorch that runs it as one matmul, then tf32, fp32 and fp16; bf16x3 may be named too); the CPU
indexes the first --cpu-passages (its rate is per passage: the whole would take half an hour on a few cores), and the
GPU's vectors of those passages in each precision are compared with the CPU's (lowest cosine, and identical top-10
of the domain's 208 queries). Beside each precision's index, its forward pass alone on --model-alone of the same
texts, batched as indexing batches them and launched one ahead as the pipeline launches them (what the index's
rate is a share of: the rest is the host side); with --profile N, PyTorch's profiler's top kernels over N texts.
Model loads and the ONNX export are timed apart. Without a CUDA GPU it says so and stops (exit 2); `--gpu cpu` runs
every step on the CPU, to check the script itself. Put the figures in docs/performance.md with the card named.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_dense import floor_batches, index_texts, padding, per_call_batches, pipeline_batches  # noqa: E402
from bench_embedding_store import corpus  # noqa: E402
from bench_rb_alg import COMPONENTS, SHARED, build_workload  # noqa: E402

from ragjudge.embeddings.pipeline import encoded_batches  # noqa: E402
from ragjudge.embeddings.scope import embedding_store_scope  # noqa: E402
from ragjudge.formats.beir import read_corpus, read_queries  # noqa: E402
from ragjudge.judges import JudgeContext, JudgeRegistry  # noqa: E402
from ragjudge.models import JudgedItem  # noqa: E402
from ragjudge.retrieval.dense import DenseRetriever  # noqa: E402


def rb_alg(model: str, device: str, systems: list[list[JudgedItem]], cache: Path
           ) -> tuple[float, float, list[list[dict[str, float]]]]:
    """(load seconds, scoring seconds, scores) for every system in turn, a fresh judge each (a new run), one store."""
    load = seconds = 0.0
    scores = []
    for items in systems:
        judge = JudgeRegistry().build("rb_alg", {"bertscore_model": model, "device": device})
        ctx = JudgeContext(cache_dir=cache)
        started = time.perf_counter()
        _ = judge.scorer_for(ctx).encoder.model
        load += time.perf_counter() - started
        started = time.perf_counter()
        results = asyncio.run(judge.judge(items, ctx))
        seconds += time.perf_counter() - started
        scores.append([{c: float(r.details[c]) if c != "RB_agg" else float(r.value) for c in COMPONENTS}
                       for r in results])
    return load, seconds, scores


@dataclass
class DenseRun:
    """One dense index on a fresh store: load seconds, passages/s, vectors, top-10 ids per query; with `alone`, the
    model's own rate on the same batches, and with `profile`, its top kernels."""

    load: float
    rate: float
    vectors: np.ndarray
    tops: list[list[str]]
    alone: float | None = None
    profile: str | None = None


def model_alone(retriever: DenseRetriever, passages: list, n: int) -> float:
    """The forward pass and pooling alone, passages/s: every k-th of the pipeline's own batches (tokenized before,
    length-sorted as indexing sorts them) up to about `n` texts, each launched before the previous one is fetched, as
    the pipeline launches them; nothing tokenized, copied to the store or written while timed."""
    batches = floor_batches(pipeline_batches(retriever, index_texts(retriever, passages)), n)
    forward = retriever.encoder.forward_pass()  # type: ignore[union-attr]
    for _ in encoded_batches(batches[:2], forward):  # warm-up: first-call allocations are not the model's pace
        pass
    started = time.perf_counter()
    for _ in encoded_batches(batches, forward):  # each fetch waits for its batch: the last one ends the timing
        pass
    return sum(len(b.texts) for b in batches) / (time.perf_counter() - started)


def kernel_profile(retriever: DenseRetriever, passages: list, n: int, cuda: bool) -> str:
    """PyTorch's profiler over the forward pass on about `n` texts' batches: the 8 operations that take the most of
    the device's (or, on the CPU, the host's) own time."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    batches = floor_batches(pipeline_batches(retriever, index_texts(retriever, passages)), n)
    forward = retriever.encoder.forward_pass()  # type: ignore[union-attr]
    with profile(activities=[ProfilerActivity.CUDA if cuda else ProfilerActivity.CPU]) as prof:
        for _ in encoded_batches(batches, forward):
            pass
    averages = prof.key_averages()
    if not len(averages):
        backend = retriever.encoder.backend  # type: ignore[union-attr]
        return f"(no PyTorch operation to profile: the model ran on {backend})"
    for key in (("self_device_time_total", "self_cuda_time_total") if cuda else ("self_cpu_time_total",)):
        try:
            return str(averages.table(sort_by=key, row_limit=8, max_name_column_width=60))
        except (AttributeError, KeyError, ValueError):  # an older PyTorch names the device's time `cuda`
            continue
    return "(no profile: this PyTorch sorts by neither self_device_time_total nor self_cuda_time_total)"


def dense(passages: list, device: str, precision: str, queries: list[str], batch_size: int | None = None,
          alone: int = 0, profile_texts: int = 0, backend: str = "auto") -> DenseRun:
    """`DenseRun` on a fresh store (`alone`: texts the model alone is timed on, 0: not; `profile_texts`: likewise for
    the kernel profile)."""
    with tempfile.TemporaryDirectory() as cache, embedding_store_scope(cache):
        retriever = DenseRetriever({"model": "minilm", "device": device, "precision": precision,
                                    "batch_size": batch_size, "backend": backend})
        started = time.perf_counter()
        encoder = retriever.encoder
        _ = encoder._load_onnx() if encoder.backend == "onnx" else encoder._load()  # type: ignore[union-attr]
        load = time.perf_counter() - started
        started = time.perf_counter()
        retriever.index(passages)
        rate = len(passages) / (time.perf_counter() - started)
        tops = [[p.document_id for p in hits] for hits in retriever.search_many(queries, k=10)]
        run = DenseRun(load, rate, np.asarray(retriever.matrix), tops)
        if alone:
            run.alone = model_alone(retriever, passages, alone)
        if profile_texts:
            run.profile = kernel_profile(retriever, passages, profile_texts, device.startswith("cuda"))
        return run


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpu", default="cuda", help="the GPU device (cuda, cuda:N); cpu checks the script")
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--systems", type=int, default=5)
    parser.add_argument("--passages", type=int, default=50_000)
    parser.add_argument("--cpu-passages", type=int, default=2_000)
    parser.add_argument("--bertscore-model", default="bundled")
    parser.add_argument("--precisions", default="auto,tf32,fp32,fp16",
                        help="the GPU's dense precisions to run, in order (those the card cannot run are skipped)")
    parser.add_argument("--batch-size", type=int, help="texts per forward pass on the GPU (default: the encoder's)")
    parser.add_argument("--model-alone", type=int, default=10_000,
                        help="texts the GPU's forward pass alone is timed on, per precision (0: not timed)")
    parser.add_argument("--profile", type=int, default=0,
                        help="texts PyTorch's profiler runs the GPU's forward pass on, per precision: its top "
                             "kernels (0: none)")
    args = parser.parse_args()
    for name in ("passages", "cpu_passages", "model_alone", "profile"):
        if getattr(args, name) < 0:
            parser.error(f"--{name.replace('_', '-')} must be 0 or more, not {getattr(args, name)}")
    import torch

    if args.gpu.startswith("cuda") and not torch.cuda.is_available():
        print("no CUDA GPU here: nothing to compare (--gpu cpu runs the steps on the CPU to check the script)",
              file=sys.stderr)
        return 2
    card = torch.cuda.get_device_name(args.gpu) if args.gpu.startswith("cuda") else "none (--gpu cpu)"
    print(f"GPU: {card}; CPU: {torch.get_num_threads()} threads; torch {torch.__version__}")

    _, systems = build_workload(args.tasks, args.systems, seed=0)
    with tempfile.TemporaryDirectory() as work:
        cpu_load, cpu_s, cpu_scores = rb_alg(args.bertscore_model, "cpu", systems, Path(work) / "cpu")
        gpu_load, gpu_s, gpu_scores = rb_alg(args.bertscore_model, args.gpu, systems, Path(work) / "gpu")
        worst = max(abs(a[c] - b[c]) for sa, sb in zip(cpu_scores, gpu_scores, strict=True)
                    for a, b in zip(sa, sb, strict=True) for c in COMPONENTS)
        pairs = sum(1 + len(i.contexts) for i in systems[0])
        print(f"RB_alg, {len(systems)} systems x {len(systems[0])} tasks ({pairs} pairs each), cold store, a fresh "
              f"judge per system: CPU {cpu_s:.1f} s (+{cpu_load:.1f} s loads), GPU {gpu_s:.1f} s (+{gpu_load:.1f} s "
              f"loads): {cpu_s / gpu_s:.1f}x; max |GPU - CPU| {worst:.1e} (must be <= 1e-5)", flush=True)

        texts = corpus(args.passages, Path(work) / "corpus.jsonl")
        passages = list(read_corpus(texts))
        queries = [q.text for q in read_queries(SHARED / "retrieval" / "clapnq" / "lastturn.jsonl")]
        subset = passages[: args.cpu_passages]
        cpu = dense(subset, "cpu", "fp32", queries)
        print(f"dense, CPU (auto backend) on {len(subset):,} passages: {cpu.rate:.1f} passages/s "
              f"(load {cpu.load:.1f} s)", flush=True)
        from ragjudge.embeddings.torch_pooling import tf32_available
        from ragjudge.retrieval.encoders import SentenceTransformerEncoder

        probe = DenseRetriever({"model": "minilm", "device": args.gpu, "batch_size": args.batch_size,
                                "backend": "torch"})
        texts = index_texts(probe, passages)
        now, before = padding(pipeline_batches(probe, texts)), padding(per_call_batches(probe, texts))
        print(f"the index's batches of {probe.encoder.batch_size}: padding {now[0]:.1%} of the tokens, "  # type: ignore
              f"{now[1]:.1%} of the attention work (each tokenizer call sorted alone, as before its sorting windows: "
              f"{before[0]:.1%}, {before[1]:.1%})", flush=True)
        for precision in args.precisions.split(","):
            if precision not in ("auto", "fp32") and not args.gpu.startswith("cuda") or \
                    precision in ("tf32", "bf16x3") and not tf32_available(args.gpu):
                continue
            if precision == "auto":
                precision = f"auto ({SentenceTransformerEncoder(device=args.gpu, backend='torch').precision})"
            asked = precision.split()[0]
            # PyTorch, what `auto` runs on a GPU, named so that `--gpu cpu` checks the same path
            whole = dense(passages, args.gpu, asked, queries, args.batch_size, args.model_alone, args.profile, "torch")
            first = dense(subset, args.gpu, asked, queries, args.batch_size, backend="torch")
            cosine = float(np.min((first.vectors * cpu.vectors).sum(axis=1)))
            same = sum(a == b for a, b in zip(cpu.tops, first.tops, strict=True))
            alone = (f"; the model alone {whole.alone:.1f}/s on the same batches (the index: "
                     f"{whole.rate / whole.alone:.0%} of it)" if whole.alone else "")
            print(f"dense, GPU {precision} on {len(passages):,} passages: {whole.rate:.1f} passages/s "
                  f"({len(passages) / whole.rate:.0f} s; load {whole.load:.1f} s), {whole.rate / cpu.rate:.1f}x the "
                  f"CPU{alone}; on the {len(subset):,}: lowest cosine to the CPU's vectors {cosine:.6f}, identical "
                  f"top-10 for {same}/{len(queries)} queries", flush=True)
            if whole.profile:
                print(whole.profile, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

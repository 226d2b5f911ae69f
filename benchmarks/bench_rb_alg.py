"""RB_alg on MTRAG-length data: the official scripts' pattern vs ragjudge on PyTorch and on ONNX Runtime, cold and
warm, each beside the model's forward pass alone on the same texts (the floor).

Workload: several systems' answers to the same tasks (comparing generators), each task with its real MTRAG
passages (up to 512 tokens) from ../shared/data/mtrag: the real generation tasks that have passages (their real
prediction as system 1's answer) and then retrieval turns of clapnq and fiqa conversations, in conversation
order, with their relevant pool passages. References and the systems' answers are made of real passage
sentences, trimmed and perturbed per system style, at MTRAG's lengths (10-130 words).

Measurements, in one run, same model, model loading timed apart (printed):
  baseline  one bert-score call per (answer, reference) and per (answer, passage), model loaded once
  cold      `rb_alg` on system 1 with an empty embedding cache, per backend (--backends)
  warm      `rb_alg` on each further system, a fresh judge (a new run) reusing that backend's cache
  floor     the backend's forward pass alone over the texts the cold run encoded, batched as it batches them
Targets (issue 34): cold >= 8x and warm >= 30x the baseline, cold within 1.3x of its floor; scores within 1e-5.

Run: python benchmarks/bench_rb_alg.py [--tasks 60] [--systems 5] [--baseline-systems 2] [--backends torch,onnx]
(about 5 min on 2 cores at the default 60 tasks; the slow baseline is most of it)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from ragjudge.embeddings.store import EmbeddingStore  # noqa: E402
from ragjudge.formats.mtrag import read_predictions  # noqa: E402
from ragjudge.judges import JudgeContext, JudgeRegistry  # noqa: E402
from ragjudge.bench.mtrag.items import judged_item  # noqa: E402
from ragjudge.models import JudgedItem  # noqa: E402
from ragjudge.embeddings.bertscore import BertScorer  # noqa: E402
from ragjudge.embeddings.cached_bertscore import EmbeddingStats  # noqa: E402
from ragjudge.metrics.rb_alg import rb_agg  # noqa: E402
from ragjudge.metrics.rouge import rouge_l_f  # noqa: E402
from ragjudge.models import Passage, Prediction, Task, Turn  # noqa: E402

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "mtrag"
STYLES = ["extractive", "paraphrase", "verbose", "concise", "hedged"]
COMPONENTS = ["RB_agg", "BertscoreR", "BertKPrec"]


# -- workload ---------------------------------------------------------------------------------------------
def sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+", " ".join(text.split())) if len(s.split()) >= 4]


def clip(words: list[str], lo: int, hi: int, rng: random.Random) -> str:
    return " ".join(words[: rng.randint(lo, hi)])


def reference_for(passages: list[str], rng: random.Random) -> str:
    """One to five consecutive passage sentences, 10-130 words, like MTRAG's agent turns."""
    sents = sentences(" ".join(passages)) or [" ".join(passages)]
    start = rng.randrange(len(sents))
    return clip(" ".join(sents[start:start + rng.randint(1, 5)]).split(), 10, 130, rng)


def answer(style: str, passages: list[str], reference: str, rng: random.Random) -> str:
    sents = sentences(" ".join(passages)) or [" ".join(passages)]
    pick = sents[rng.randrange(len(sents)):]
    if style == "extractive":
        return clip(" ".join(pick[:4]).split(), 15, 110, rng)
    if style == "paraphrase":  # the reference with words dropped and a passage sentence added
        words = [w for w in reference.split() if rng.random() > 0.15] + pick[0].split()
        return clip(words, 10, 120, rng)
    if style == "verbose":
        return clip(("Based on the documents, " + " ".join(pick[:6])).split(), 60, 130, rng)
    if style == "concise":
        return clip(pick[0].split(), 8, 30, rng)
    if rng.random() < 0.2:  # hedged: sometimes declines, as generators do
        return "I'm sorry, but I could not find the answer to that question in the provided documents."
    return clip(("It seems that " + " ".join(reference.split()[:40] + pick[0].split())).split(), 15, 80, rng)


def qrels_tasks(domain: str, rng: random.Random) -> list[tuple[Task, list[str]]]:
    """Retrieval turns whose relevant passages are all in the pool, in conversation order."""
    pool = {}
    with open(SHARED / "corpus" / f"{domain}_pool.jsonl") as handle:
        for line in handle:
            row = json.loads(line)
            pool[row["_id"]] = row
    relevant: dict[str, list[str]] = defaultdict(list)
    for line in (SHARED / "retrieval" / domain / "qrels.tsv").read_text().splitlines()[1:]:
        qid, pid, _ = line.split("\t")
        relevant[qid].append(pid)
    questions = {json.loads(line)["_id"]: json.loads(line)["text"]
                 for line in (SHARED / "retrieval" / domain / "lastturn.jsonl").read_text().splitlines()}
    out = []
    for qid, pids in relevant.items():
        if not all(p in pool for p in pids) or qid not in questions:
            continue
        conv, _, turn = qid.partition("<::>")
        passages = [Passage(id=p, text=pool[p]["text"], title=pool[p].get("title")) for p in pids]
        ref = reference_for([p.text for p in passages], rng)
        task = Task(task_id=f"{conv}::{turn}", conversation_id=conv, turn=int(turn), collection=domain,
                    input=[Turn(speaker="user", text=questions[qid].removeprefix("|user|: "))], contexts=passages,
                    targets=[Turn(speaker="agent", text=ref)])
        out.append((task, []))
    return out


def build_workload(n_tasks: int, n_systems: int, seed: int) -> tuple[list[Task], list[list[JudgedItem]]]:
    rng = random.Random(seed)
    real = [(t, [p.text]) for t, p in read_predictions(SHARED / "generation" / "responses-10.jsonl")
            if t.contexts and t.reference]
    clapnq, fiqa = qrels_tasks("clapnq", rng), qrels_tasks("fiqa", rng)
    mixed = [x for pair in zip(clapnq, fiqa) for x in pair]  # both domains, conversations stay in order
    chosen = (real + [x for x in mixed])[:n_tasks]
    tasks = [t for t, _ in chosen]
    systems = []
    for s in range(n_systems):
        style = STYLES[s % len(STYLES)]
        items = []
        for task, real_answers in chosen:
            text = real_answers[0] if s == 0 and real_answers else answer(
                style, [p.text for p in task.contexts], task.reference or "", rng)
            items.append(judged_item(task, Prediction(task_id=task.task_id, text=text, model=f"system-{s + 1}")))
        systems.append(items)
    return tasks, systems


# -- the two ways of scoring ---------------------------------------------------------------------------------
def per_pair(scorer: BertScorer, items: list[JudgedItem]) -> list[dict[str, float]]:
    """The official scripts' loop: one bert-score call per (answer, reference) and per (answer, passage)."""
    out = []
    for item in items:
        answer_text, ref = item.answer, item.reference or ""
        recall = scorer.score([answer_text], [ref])[1][0]
        kprec = max(scorer.score([answer_text], [p.text])[0][0] for p in item.contexts)
        out.append({"RB_agg": rb_agg(recall, rouge_l_f(answer_text, ref), kprec), "BertscoreR": recall,
                    "BertKPrec": kprec})
    return out


@dataclass(frozen=True)
class Took:
    """Wall and process CPU seconds: CPU time is less sensitive to other jobs sharing the machine."""

    wall: float
    cpu: float

    @staticmethod
    def since(wall0: float, cpu0: float) -> Took:
        return Took(time.perf_counter() - wall0, time.process_time() - cpu0)

    def __str__(self) -> str:
        return f"{self.wall:.2f}s (cpu {self.cpu:.1f}s)"


def clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def ragjudge_run(model: str, backend: str, items: list[JudgedItem], cache: Path
                 ) -> tuple[list[dict[str, float]], float, Took, EmbeddingStats]:
    """A fresh judge, as in a new `ragjudge judge` run: (scores, model load seconds, scoring time, stats)."""
    judge = JudgeRegistry().build("rb_alg", {"bertscore_model": model, "backend": backend})
    ctx = JudgeContext(cache_dir=cache)
    started = time.perf_counter()
    _ = judge.scorer_for(ctx).encoder.model  # loading is outside the timing, as for the baseline
    loaded = time.perf_counter() - started
    t0 = clock()
    results = asyncio.run(judge.judge(items, ctx))
    took = Took.since(*t0)
    scores = [{c: float(r.details[c]) if c != "RB_agg" else float(r.value) for c in COMPONENTS} for r in results]
    return scores, loaded, took, judge.scorer_for(ctx).stats


def forward_floor(model: str, backend: str, items: list[JudgedItem]) -> Took:
    """The model's forward pass alone over every distinct text of `items` (what a cold run encodes), tokenised and
    batched beforehand exactly as the cold run batches them."""
    judge = JudgeRegistry().build("rb_alg", {"bertscore_model": model, "backend": backend})
    encoder = judge.scorer_for(JudgeContext(use_cache=False)).encoder
    texts = list(dict.fromkeys(t for i in items for t in (i.answer, i.reference or "",
                                                           *(p.text for p in i.contexts))))
    batches = [(tokens, mask) for _, _, tokens, mask in encoder.padded_batches(texts)]
    encoder.forward(*batches[0])  # loads the model, outside the timing
    t0 = clock()
    for tokens, mask in batches:
        encoder.forward(tokens, mask)
    return Took.since(*t0)


def ratio(base: list[Took], ours: list[Took]) -> str:
    wall = sum(t.wall for t in base) / sum(t.wall for t in ours)
    cpu = sum(t.cpu for t in base) / sum(t.cpu for t in ours)
    return f"{wall:.1f}x (cpu {cpu:.1f}x)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=60, help="README figures: --tasks 100 (~7 min)")
    parser.add_argument("--systems", type=int, default=5)
    parser.add_argument("--baseline-systems", type=int, default=2, help="systems also scored the slow way (>= 2)")
    parser.add_argument("--bertscore-model", default="bundled")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--backends", default="torch,onnx", help="comma-separated: torch, onnx")
    args = parser.parse_args()
    if not SHARED.is_dir():
        raise SystemExit(f"shared MTRAG data not found at {SHARED}")
    if not 2 <= args.baseline_systems <= args.systems:
        raise SystemExit("--baseline-systems must be between 2 and --systems")

    tasks, systems = build_workload(args.tasks, args.systems, args.seed)
    judge = JudgeRegistry().build("rb_alg", {"bertscore_model": args.bertscore_model, "backend": "torch"})
    started = time.perf_counter()
    baseline_scorer = BertScorer(judge.config)
    baseline_scorer.score(["warm up"], ["warm up"])
    base_load = time.perf_counter() - started
    print(f"model: {judge.config.describe()} (bert-score load {base_load:.1f}s)")
    tokenizer = judge.scorer_for(JudgeContext(use_cache=False)).encoder.tokenizer
    n_tok: dict[str, int] = {}
    for items in systems:
        for item in items:
            for text in (item.answer, item.reference or "", *(p.text for p in item.contexts)):
                if text not in n_tok:
                    n_tok[text] = len(tokenizer.encode(text, truncation=True, max_length=512))
    lengths = sorted(n_tok[p] for p in {p.text for t in tasks for p in t.contexts})
    print(f"workload: {len(tasks)} tasks x {len(systems)} systems, {sum(1 + len(i.contexts) for i in systems[0])} "
          f"pairs per system; {len(lengths)} distinct passages, tokens median {lengths[len(lengths) // 2]}, "
          f"max {lengths[-1]}")

    def baseline_tokens(items: list[JudgedItem]) -> int:
        """Tokens bert-score runs per pair: both texts, padded to the longer one (once if they are equal)."""
        texts = [(i.answer, t) for i in items for t in (i.reference or "", *(p.text for p in i.contexts))]
        return sum(n_tok[a] if a == b else 2 * max(n_tok[a], n_tok[b]) for a, b in texts)

    backends = args.backends.split(",")
    base: list[Took] = []
    ours: dict[str, list[Took]] = {b: [] for b in backends}
    loads: dict[str, list[float]] = {b: [] for b in backends}
    diffs = {b: {c: 0.0 for c in COMPONENTS} for b in backends}
    with tempfile.TemporaryDirectory(prefix="bench-rb-alg-") as cache_dir:
        caches = {b: Path(cache_dir) / b for b in backends}
        for s, items in enumerate(systems):
            if s < args.baseline_systems:  # interleaved with ours: the machine's load hits all alike
                t0 = clock()
                expected = per_pair(baseline_scorer, items)
                base.append(Took.since(*t0))
            for backend in backends:
                scores, loaded, took, stats = ragjudge_run(args.bertscore_model, backend, items, caches[backend])
                ours[backend].append(took)
                loads[backend].append(loaded)
                if s < args.baseline_systems:
                    for want, got in zip(expected, scores, strict=True):
                        for c in COMPONENTS:
                            diffs[backend][c] = max(diffs[backend][c], abs(want[c] - got[c]))
                answers = len({i.answer for i in items})
                print(f"system {s + 1} ({STYLES[s % len(STYLES)]}): baseline {base[s] if s < len(base) else '-'} | "
                      f"{backend:5} {'cold' if s == 0 else 'warm'} {took} (+{loaded:.1f}s model load) | encoded "
                      f"{stats.texts_encoded} texts ({answers} distinct answers), {stats.cache_hits} from the cache | "
                      f"model tokens: baseline {baseline_tokens(items)}, ragjudge {stats.tokens_encoded} "
                      f"+ {stats.padding_tokens} padding", flush=True)
        for backend in backends:
            info = EmbeddingStore(caches[backend]).info()
            print(f"embedding store ({backend}): {info.file_bytes / 2**20:.0f} MiB for "
                  f"{sum(sp.entries for sp in info.spaces)} texts")
    floors = {b: forward_floor(args.bertscore_model, b, systems[0]) for b in backends}

    n_base = args.baseline_systems
    warm = "system 2" if n_base == 2 else f"systems 2-{n_base}"
    mean_base = Took(sum(t.wall for t in base) / n_base, sum(t.cpu for t in base) / n_base)
    for backend in backends:
        mine = ours[backend]
        print(f"\n{backend}: cold (system 1) {ratio(base[:1], mine[:1])} the baseline (target >= 8x)")
        whole_base, whole_ours = base[0].wall + base_load, mine[0].wall + loads[backend][0]
        print(f"{backend}: cold, model load included on both sides: baseline {whole_base:.1f}s, ragjudge "
              f"{whole_ours:.1f}s, {whole_base / whole_ours:.1f}x")
        print(f"{backend}: forward pass alone over the cold run's texts {floors[backend]}: the cold run is "
              f"{mine[0].wall / floors[backend].wall:.2f}x its floor (target <= 1.3x); no implementation on this "
              f"model and machine can beat the baseline cold by more than {base[0].wall / floors[backend].wall:.1f}x "
              f"(baseline / floor)")
        print(f"{backend}: warm ({warm}, also timed the slow way): {ratio(base[1:], mine[1:n_base])} (target >= 30x)")
        print(f"{backend}: all {len(systems)} systems, one cold then warm runs: "
              f"{ratio([mean_base] * len(systems), mine)} (baseline: mean of {n_base} systems x {len(systems)})")
        print(f"{backend}: max |ragjudge - baseline|: " + ", ".join(f"{c} {d:.1e}" for c, d in diffs[backend].items())
              + " (must be <= 1e-5)")
    if "torch" in ours and "onnx" in ours:
        print(f"\nonnx vs torch, cold: {ours['torch'][0].wall / ours['onnx'][0].wall:.2f}x; forward pass alone: "
              f"{floors['torch'].wall / floors['onnx'].wall:.2f}x")


if __name__ == "__main__":
    main()

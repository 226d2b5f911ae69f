"""CDR at full size: ingestion and query time and peak memory for BM25 and MiniLM, for every retrieval unit.

    python benchmarks/bench_cdr.py [--conversations 9146] [--queries 1583] [--dense-fraction 0.1]
                                   [--retrievers bm25,dense] [--units session,message,exchange,window:3,user]

The corpus has CDR's shape (Table 2 of the paper): 9,146 conversations of 5.4 messages on average and about
350 words (the paper's 464 GPT-4o tokens), 1,583 queries. Text is real where it can be: user messages are
MTRAG user questions and assistant messages are slices of MTRAG passages (`../shared/data/mtrag`, read in
place), and queries are built from the paper's query templates and placeholder values (its Tables 6 and 7);
without the shared data, examples/cdr-mini's messages are recombined instead.

Each (retriever, unit) runs in its own process, so its peak resident memory (ru_maxrss: model weights,
torch buffers, index) is its own, with a new embedding store (MiniLM's ingestion encodes every unit). Everything
goes through the bench's own code: unit splitting, the unit file, `Pipeline.open` (ingestion: build and save the
index), a second `Pipeline.open` (the reuse every later run gets), and the max-passage search that fills the top
20 with distinct conversations (inference: all queries).

MiniLM encodes ~55 passages/s on 2 cores, so at full size its window units alone take over ten minutes: it
runs on `--dense-fraction` of the conversations (with every query), and its ingestion time is also printed
extrapolated linearly to the full corpus (encoding time is linear in the number of units), labelled as such.
Baselines in the same run: each unit against `session` (ratio), and loading a saved index against building it.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from itertools import product
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data" / "mtrag"
CDR_SIZE = (9146, 1583)

TEMPLATES = {  # the paper's Table 6, with its Table 7 placeholders
    "Emotion & Feedback": ["Conversation ending in {emotion}.", "Conversation reflecting {emotion} in {user_role}'s "
                           "feedback.", "Conversation where {user_role} finds {assistant_role}'s answers inadequate, "
                           "leading to {emotion}."],
    "Intent & Purpose": ["Conversation where {user_role} seeks advice on {intent}.",
                         "Conversation expressing gratitude to {assistant_role} for resolving {intent}.",
                         "Conversation where {user_role} repeatedly asks for clarification on {intent}."],
    "Conversation Dynamics": ["Conversation where {user_role} becomes more frustrated over time.", "Conversation "
                              "where {user_role} shifts from skepticism to trust.", "Conversation where {user_role} "
                              "feels a sense of accomplishment after resolving an issue with {assistant_role}."],
    "Trust, Safety & Ethics": ["Conversation expressing distrust to {assistant_role}.", "Conversation where "
                               "{user_role} raises a {concern_type} issue.", "Conversation where {user_role} "
                               "questions the ethics of {assistant_role}."],
    "Linguistic Style & Expression": ["Conversation using {linguistic_style} in {user_role}'s questions.",
                                      "Conversation highlighting {expression_type} in {assistant_role}'s feedback.",
                                      "Conversation where {assistant_role} uses {linguistic_style} to simplify "
                                      "concepts."],
}
VALUES = {
    "emotion": ["anger", "happiness", "fear", "sadness", "disgust", "surprise"],
    "user_role": ["user", "human"], "assistant_role": ["assistant", "bot", "agent"],
    "intent": ["Technical Troubleshooting", "Payment Processing", "Return and Refund Assistance", "How-to Query",
               "Recommendation Request", "Account Recovery and Access Issues", "Health and Wellness",
               "Skill Development", "Content Editing", "Reservation and Booking", "Comparison Query"],
    "concern_type": ["privacy issue", "ethical issue", "health concern", "financial problem", "safety concern",
                     "data security risk", "discrimination concern", "misinformation problem"],
    "linguistic_style": ["formal", "informal", "technical", "sarcastic", "empathetic", "metaphorical", "concise"],
    "expression_type": ["rhetorical", "humorous", "skeptical", "apologetic", "enthusiastic", "critical"],
}


def peak_rss_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def text_pools() -> tuple[list[str], list[str], str]:
    """User questions and assistant text to build conversations from."""
    if SHARED.is_dir():
        from ragjudge.retrieval.queries import strip_speaker_tags

        questions = []
        for path in sorted((SHARED / "retrieval").glob("*/lastturn.jsonl")):
            questions += [strip_speaker_tags(json.loads(line)["text"]) for line in path.open()]
        passages = []
        for path in sorted((SHARED / "corpus").glob("*_pool.jsonl")):
            passages += [json.loads(line)["text"] for line in path.open()]
        return questions, passages, "MTRAG questions and passages (../shared/data/mtrag)"
    from ragjudge.bench.cdr.units import split_messages  # the bench's own reading: a message may span lines

    corpus = json.loads((REPO / "examples" / "cdr-mini" / "corpus.json").read_text())
    users, replies = [], []
    for conversation in corpus.values():
        for message in split_messages(conversation)[0]:
            text = " ".join((message.text.split(":", 1)[1] if message.role else message.text).split())
            (users if message.role == "user" else replies).append(text)
    return users, replies * 20, "examples/cdr-mini messages, recombined"


def synthetic_cdr(n_conversations: int, n_queries: int, seed: int = 0) -> tuple[dict[str, str], list[str], str]:
    rng = np.random.default_rng(seed)
    questions, passages, source = text_pools()
    stream = " ".join(passages).split()  # slices may run on into the next passage, never come up short
    corpus = {}
    for c in range(n_conversations):
        n_messages = int(np.clip(rng.poisson(3.4) + 2, 2, 12))  # mean 5.4, as in CDR
        lines = []
        for m in range(n_messages):
            if m % 2 == 0:
                lines.append("user: " + questions[int(rng.integers(len(questions)))])
            else:
                length = int(np.clip(rng.normal(130, 45), 30, 260))
                start = int(rng.integers(len(stream) - length))
                lines.append("assistant: " + " ".join(stream[start : start + length]))
        corpus[f"corpus_{c}"] = "\n".join(lines)
    queries = []
    categories = list(TEMPLATES)
    weights = np.array([0.201, 0.361, 0.134, 0.146, 0.159])  # Table 2's category shares
    for _ in range(n_queries):
        template = rng.choice(TEMPLATES[categories[int(rng.choice(5, p=weights / weights.sum()))]])
        queries.append(template.format(**{k: rng.choice(v) for k, v in VALUES.items()}))
    return corpus, queries, source


def worker(retriever: str, unit: str, n_conversations: int, n_queries: int, index_dir: Path) -> dict:
    """One (retriever, unit) measurement, in this process."""
    from ragjudge.bench.cdr.ranking import search_conversations
    from ragjudge.bench.cdr.truncation import truncation
    from ragjudge.bench.cdr.units import build_units, parse_unit, write_units
    from ragjudge.retrieval.pipeline import Pipeline
    from ragjudge.retrieval.spec import load_pipeline

    corpus, queries, _ = synthetic_cdr(n_conversations, n_queries)
    rss_data = peak_rss_mb()
    started = time.perf_counter()
    table = build_units(corpus, parse_unit(unit))
    units_file = write_units(table, index_dir / "units", f"{n_conversations:016d}")
    split_s = time.perf_counter() - started
    pipeline = Pipeline(load_pipeline(retriever), index_dir=index_dir)
    if retriever == "dense":  # load the model (and its tokenizer) first: their load time is not ingestion
        pipeline.retriever.encoder.forward_pass()
        pipeline.retriever.encoder.batch_tokenizer()
    started = time.perf_counter()
    info = pipeline.open(units_file)
    ingest_s = time.perf_counter() - started
    rss_index = peak_rss_mb()
    reopened = Pipeline(load_pipeline(retriever), index_dir=index_dir)
    started = time.perf_counter()
    assert reopened.open(units_file).reused
    reuse_s = time.perf_counter() - started
    n_conv = len(set(table.conversation_of.values()))
    started = time.perf_counter()
    ranked, searched = search_conversations(pipeline.search, queries, table.conversation_of, 20, len(table), n_conv)
    query_s = time.perf_counter() - started
    filled = sum(1 for r in ranked if len(r) == 20)
    trunc = truncation(pipeline.retriever, [u.text for u in table.units])
    return {"retriever": retriever, "unit": unit, "conversations": n_conversations, "queries": n_queries,
            "units": len(table), "split_s": split_s, "ingest_s": ingest_s, "reuse_s": reuse_s, "query_s": query_s,
            "filled": filled, "mean_units_ranked": float(np.mean(searched)), "built": not info.reused,
            "peak_rss_mb": peak_rss_mb(), "rss_after_data_mb": rss_data, "rss_after_index_mb": rss_index,
            "truncated": trunc[0]["truncated"] if trunc else None}


def run_worker(args: list[str], cache: Path) -> dict:
    """One measurement in a fresh process whose embedding store is new (`cache`): the user's default store, filled
    by earlier runs or by another unit's run of the same texts, made dense ingestion look cold when it was not. The
    model's ONNX export stays where the user keeps it (made once per machine: an install-time cost)."""
    from ragjudge.embeddings.onnx_export import ONNX_DIR_ENV
    from ragjudge.llm.cache import default_cache_dir

    exports = os.environ.get(ONNX_DIR_ENV) or str(default_cache_dir() / "onnx")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONPATH": str(REPO),
           "RAGJUDGE_CACHE_DIR": str(cache), ONNX_DIR_ENV: exports}
    done = subprocess.run([sys.executable, __file__, "--worker", *args], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"worker {args} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=CDR_SIZE[0])
    parser.add_argument("--queries", type=int, default=CDR_SIZE[1])
    parser.add_argument("--dense-fraction", type=float, default=0.1, help="share of the conversations MiniLM indexes")
    parser.add_argument("--retrievers", default="bm25,dense")
    parser.add_argument("--units", default="session,message,exchange,window:3,user")
    parser.add_argument("--worker", nargs=5, metavar=("RETRIEVER", "UNIT", "CONVERSATIONS", "QUERIES", "INDEX_DIR"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        retriever, unit, n_conv, n_queries, index_dir = args.worker
        print(json.dumps(worker(retriever, unit, int(n_conv), int(n_queries), Path(index_dir))))
        return

    corpus, queries, source = synthetic_cdr(args.conversations, args.queries)
    texts = list(corpus.values())
    words = np.mean([len(t.split()) for t in texts])
    messages = np.mean([t.count("\nuser: ") + t.count("\nassistant: ") + 1 for t in texts])
    print(f"synthetic CDR: {len(corpus):,} conversations ({messages:.1f} messages, {words:.0f} words on average; CDR: "
          f"5.4 messages, 464 GPT-4o tokens ~ 350 words), {len(queries):,} queries from the paper's templates; "
          f"text: {source}; {os.cpu_count()} cores")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for retriever, unit in product(args.retrievers.split(","), args.units.split(",")):
            n_conv = args.conversations if retriever != "dense" else max(1, round(args.conversations *
                                                                                 args.dense_fraction))
            index_dir = Path(tmp) / f"{retriever}-{unit.replace(':', '_')}"
            row = run_worker([retriever, unit, str(n_conv), str(args.queries), str(index_dir)], index_dir / "cache")
            row["scale"] = args.conversations / n_conv
            rows.append(row)
            print(f"  {retriever:5s} {unit:9s} {row['units']:>7,} units: ingestion {row['ingest_s']:7.1f} s, "
                  f"reuse {row['reuse_s']:5.2f} s, {row['queries']:,} queries {row['query_s']:6.1f} s "
                  f"({row['mean_units_ranked']:.0f} units ranked per query), peak RSS "
                  f"{row['peak_rss_mb']:,.0f} MB" + (f" ({n_conv:,} conversations)" if row["scale"] != 1 else ""),
                  flush=True)
    print()
    print("| retriever | unit | conversations | units | ingestion s | vs session | index reuse s (build/reuse) | "
          "queries s | peak RSS MB | truncated units |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        base = next(r for r in rows if r["retriever"] == row["retriever"] and r["unit"] == "session")
        trunc = "-" if row["truncated"] is None else f"{row['truncated']:,} of {row['units']:,}"
        print(f"| {row['retriever']} | {row['unit']} | {row['conversations']:,} | {row['units']:,} | "
              f"{row['ingest_s']:.1f} | {row['ingest_s'] / base['ingest_s']:.2f}x | {row['reuse_s']:.2f} "
              f"({row['ingest_s'] / max(row['reuse_s'], 1e-9):.0f}x) | {row['query_s']:.1f} | "
              f"{row['peak_rss_mb']:,.0f} | {trunc} |")
    scaled = [r for r in rows if r["scale"] != 1]
    if scaled:
        print()
        print(f"MiniLM at full size (EXTRAPOLATED: ingestion measured on {scaled[0]['conversations']:,} conversations, "
              f"x{scaled[0]['scale']:.1f}, linear in units; query time as measured, all queries):")
        for row in scaled:
            print(f"  dense {row['unit']:9s} ~{row['units'] * row['scale']:,.0f} units: ingestion ~"
                  f"{row['ingest_s'] * row['scale'] / 60:.1f} min ({row['units'] / row['ingest_s']:.0f} units/s), "
                  f"queries {row['query_s']:.1f} s")


if __name__ == "__main__":
    main()

"""Synthetic MTRAG run folders with realistic sizes and repetition, for report benchmarks and tests, made by the
MTRAG bench's own code so they have exactly the shape `ragjudge eval --bench mtrag` writes. Sizes follow MTRAG (the
figures: docs/performance.md): agent turns of 60-140 words; passages drawn from a per-conversation pool, so later
turns repeat earlier ones; words from the examples/mini corpus with Zipf-like frequencies.
"""

from __future__ import annotations

import json
import random
import statistics
from collections import Counter
from pathlib import Path

from ragjudge.bench.mtrag.bench import MtragBench
from ragjudge.bench.mtrag.metrics import assemble
from ragjudge.bench.mtrag.records import official_records
from ragjudge.bench.mtrag.samples import outcome_sample
from ragjudge.bench.mtrag.summary import HEADLINE, summarize
from ragjudge.engine.summary import MetricCatalog, Summary, headline_of
from ragjudge.formats.jsonl import write_jsonl
from ragjudge.formats.samples import Score, write_samples
from ragjudge.models import Passage, Prediction, Task, Turn

MINI_CORPUS = Path(__file__).resolve().parents[2] / "examples" / "mini" / "corpus.jsonl"
PANEL = ("openai/gpt-4o-mini", "anthropic/claude-3-5-haiku", "watsonx/llama-3-3-70b")
ANSWERABILITY = ["ANSWERABLE"] * 7 + ["PARTIAL", "UNANSWERABLE", "CONVERSATIONAL"]
DOMAINS = ("mt-rag-clapnq-elser-512-100", "mt-rag-fiqa-beir-elser-512-100", "mt-rag-govt-elser-512-100",
           "mt-rag-ibmcloud-elser-512-100")
METRICS = ["idk_eval", "RB_agg", "RB_llm", "RL_F", "RougeL_stemFalse", "BertscoreR", "BertKPrec", "RB_agg_idk",
           "RB_llm_idk", "RL_F_idk", "answerability_acc"]


class Words:
    def __init__(self) -> None:
        vocab = Counter(word for line in MINI_CORPUS.read_text(encoding="utf-8").splitlines()
                        for word in json.loads(line)["text"].split())
        self.words = sorted(vocab, key=lambda w: -vocab[w])
        self.weights = [1 / (rank + 1) for rank in range(len(self.words))]

    def text(self, rng: random.Random, n: int) -> str:
        words = rng.choices(self.words, self.weights, k=n)
        return " ".join(words).capitalize() + "."


def judge_results(rng: random.Random, words: Words, answer_declines: bool) -> dict[str, Score]:
    idk = 1.0 if answer_declines else rng.choice([0.0, 0.0, 0.0, 0.5])
    label = {1.0: "yes", 0.5: "partial", 0.0: "no"}[idk]
    members = []
    for model in PANEL:
        rating = rng.randint(1, 10)
        text = f"{words.text(rng, rng.randint(40, 90))}\nRating: [[{rating}]]"
        members.append(Score(judge="rb_llm", metric="RB_llm", value=rating / 10, label=str(rating),
                                   rationale=text, raw=text, model=model, prompt_tokens=rng.randint(900, 2600),
                                   completion_tokens=rng.randint(60, 160), latency=rng.uniform(0.5, 4)))
    if rng.random() < 0.03:  # an unparsable answer: an error with its raw text, as real panels give
        bad = members[2]
        members[2] = bad.model_copy(update={"value": None, "label": None, "error": "unparsable rating",
                                            "raw": "I would rather not rate this answer."})
    values = sorted(m.value for m in members if m.value is not None)
    median = statistics.median(values)
    statements = [words.text(rng, rng.randint(8, 18)) for _ in range(rng.randint(2, 6))]
    supported = rng.randint(0, len(statements))
    rouge, recall, kprec = rng.random(), rng.random(), rng.random()
    rb_agg = 3 / (1 / max(rouge, 1e-3) + 1 / max(recall, 1e-3) + 1 / max(kprec, 1e-3))
    return {
        "idk": Score(judge="idk", metric="idk_eval", value=idk, label=label, rationale=label, raw=label,
                           model=PANEL[0], prompt_tokens=rng.randint(800, 2000), completion_tokens=1, latency=0.4),
        "rb_alg": Score(judge="rb_alg", metric="RB_agg", value=rb_agg, label=f"{rb_agg:.4f}",
                              model="microsoft/deberta-xlarge-mnli",
                              details={"RougeL_stemFalse": rouge, "BertscoreR": recall, "BertKPrec": kprec}),
        "rb_llm": Score(judge="rb_llm", metric="RB_llm", value=median, label=str(median),
                              rationale="\n\n".join(f"[{m.model}] {m.rationale or m.raw}" for m in members),
                              model=",".join(PANEL), members=members),
        "rl_f": Score(judge="rl_f", metric="RL_F", value=supported / len(statements),
                            label=f"{supported / len(statements):.4f}",
                            rationale="\n".join(f"[{int(k < supported)}] {s}" for k, s in enumerate(statements)),
                            raw=json.dumps({"statements": statements}), model=PANEL[0],
                            details={"statements": len(statements), "supported": supported}),
    }


def write_run(folder: Path, n_tasks: int = 1000, *, seed: int = 0, system: int = 0,
              turns_per_conversation: int = 8) -> Path:
    """A run folder (samples.jsonl, results.jsonl, summary.json, run.json) of `n_tasks` synthetic MTRAG tasks.

    `seed` makes the tasks (conversations, passages, references), `system` the answers and judgements: runs
    with the same seed and different systems are two systems on the same tasks."""
    rng = random.Random(seed)
    answers = random.Random(f"{seed}/{system}")
    words = Words()
    outcomes = []
    conversation: list[Turn] = []
    pool: list[Passage] = []
    for k in range(n_tasks):
        c, turn = divmod(k, turns_per_conversation)
        if turn == 0:
            conversation = []
            pool = [Passage(id=f"doc{c}-{p}_{p * 1000}-{p * 1000 + 2300}", title=words.text(rng, 6),
                            text=words.text(rng, rng.randint(360, 420)), score=round(rng.uniform(5, 25), 2))
                    for p in range(6)]
        question = words.text(rng, rng.randint(8, 20)).rstrip(".") + "?"
        conversation.append(Turn(speaker="user", text=question))
        answerability = rng.choice(ANSWERABILITY)
        contexts = [] if answerability in ("UNANSWERABLE", "CONVERSATIONAL") else rng.sample(pool, rng.randint(1, 3))
        reference = words.text(rng, rng.randint(50, 130))
        raw = {"conversation_id": f"conv{c:04d}", "task_id": f"conv{c:04d}::{turn + 1}", "turn": turn + 1,
               "Collection": DOMAINS[c % len(DOMAINS)], "input": [t.model_dump() for t in conversation],
               "contexts": [p.to_record() for p in contexts], "targets": [{"speaker": "agent", "text": reference}],
               "answerability": [answerability], "Question Type": [rng.choice(["Factoid", "Explanation", "Summary"])],
               **({"Multi-Turn": [rng.choice(["Follow-up", "Clarification"])]} if turn else {})}
        task = Task(task_id=raw["task_id"], conversation_id=raw["conversation_id"], turn=turn + 1,
                    collection=raw["Collection"], input=list(conversation), contexts=contexts,
                    targets=[Turn(speaker="agent", text=reference)], answerability=answerability,
                    question_types=raw["Question Type"], multi_turn=(raw.get("Multi-Turn") or [None])[0], raw=raw)
        declines = answerability == "UNANSWERABLE" and answers.random() < 0.6
        answer = "I do not have specific information about that." if declines else \
            words.text(answers, answers.randint(60, 140))
        outcomes.append(assemble(task, Prediction(task_id=task.task_id, text=answer),
                                 judge_results(answers, words, declines)))
        conversation.append(Turn(speaker="agent", text=reference))
    folder.mkdir(parents=True, exist_ok=True)
    write_jsonl(folder / "results.jsonl", official_records(outcomes, "reference"))
    write_samples(folder / "samples.jsonl", [outcome_sample(o, METRICS, "reference") for o in outcomes])
    metrics, breakdowns = summarize(outcomes, METRICS, {}, MetricCatalog(MtragBench.metrics, "mtrag"))
    judges = {"idk": [PANEL[0]], "rb_alg": ["microsoft/deberta-xlarge-mnli"], "rb_llm": list(PANEL), "rl_f": [PANEL[0]]}
    summary = Summary(bench="mtrag", title=f"mtrag: {n_tasks} tasks", unit="tasks", n_samples=n_tasks, n_errors=0,
                      metrics=metrics, breakdowns=breakdowns, headline=headline_of(metrics, HEADLINE, "tasks"),
                      details={"judges": judges})
    (folder / "summary.json").write_text(json.dumps(summary.to_dict(), indent=2))
    run = {"ragjudge_version": "synthetic", "bench": "mtrag", "options": {"gen": f"system-{system}"},
           "generator": f"system-{system}",
           "setting": "reference", "n_samples": n_tasks, "data_hash": f"synthetic-{seed}-{n_tasks}",
           "usage": {m: {"calls": n_tasks, "cached": 0, "retries": 0, "failures": 0, "prompt_tokens": 1500 * n_tasks,
                         "completion_tokens": 100 * n_tasks, "cost": 0.0003 * n_tasks} for m in PANEL}}
    (folder / "run.json").write_text(json.dumps(run, indent=2))
    return folder

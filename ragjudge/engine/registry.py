"""Benches by name: the built-in ones and third-party ones from the `ragjudge.benches` entry-point group.

A package adds a bench with, in its pyproject.toml:

    [project.entry-points."ragjudge.benches"]
    support-chat = "my_package.bench:SupportChatBench"

Classes are imported only when a bench is used or shown; the built-ins' cards below are what listing them reads.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragjudge.errors import UsageError

if TYPE_CHECKING:
    from ragjudge.engine.bench import Bench, LLMUse

ENTRY_POINT_GROUP = "ragjudge.benches"


@dataclass(frozen=True)
class BenchCard:
    """What `ragjudge benches` lists of a built-in bench, read without importing it (the bench modules take a
    second to import in all); each bench class takes its description, llm and data_source from its card."""

    target: str
    """`module:Class`."""
    description: str
    llm: LLMUse
    data: str
    """Where the data comes from, in a few words."""


CARDS: dict[str, BenchCard] = {
    "mtrag": BenchCard(
        "ragjudge.bench.mtrag.bench:MtragBench",
        "MTRAG multi-turn RAG generation: answers judged by IDK, RB_alg, RB_llm, RL_F, with the paper's breakdowns.",
        "optional", 'IBM/mt-rag-benchmark human tasks, downloaded on first use (or --data)'),
    "mtrag-un": BenchCard(
        "ragjudge.bench.mtrag.un.bench:MtragUnBench",
        "MTRAG-UN / SemEval-2026 MTRAGEval generation: the clarification judge and the official *_idk_underspecified conditioning over every task, with MTRAG's judges and breakdowns.",
        "optional", 'IBM/mt-rag-benchmark MTRAG-UN human tasks, downloaded on first use (or --data)'),
    "mtrag-retrieval": BenchCard(
        "ragjudge.bench.mtrag.retrieval.bench:MtragRetrievalBench",
        'MTRAG retrieval per domain: last-turn / rewritten / all-question queries through a pipeline.',
        "optional", 'IBM/mt-rag-benchmark retrieval tasks and corpora (--data, --corpus)'),
    "mtrag-un-retrieval": BenchCard(
        "ragjudge.bench.mtrag.un_retrieval.bench:MtragUnRetrievalBench",
        "MTRAG-UN retrieval per domain (MTRAGEval task A data): queries built from the conversations (last turn, all questions, LLM rewrite) through a pipeline, beside the paper's Tables 2-3.",
        "optional", 'IBM/mt-rag-benchmark MTRAG-UN qrels and tasks (--data), MTRAG corpora (--corpus)'),
    "dialsim": BenchCard(
        "ragjudge.bench.dialsim.bench:DialSimBench",
        "DialSim: an agent plays a TV show's main character and answers questions about the long, multi-party dialogue so far; memory strategies, IDK precision/recall, the paper's Table 3.",
        "optional", 'LongDialQA (github.com/jiho283/Simulator or Hugging Face jiho283/dialsim-*; --data, not downloaded by ragjudge)'),
    "cxm-intent": BenchCard(
        "ragjudge.bench.cxm.intent.bench:IntentBench",
        'CXMArena intent prediction: one intent per conversation from a flat or two-level taxonomy.',
        "optional", 'Hugging Face sprinklr-huggingface/CXM_Arena (`ragjudge cxm fetch`), or plain JSONL'),
    "cxm-quality": BenchCard(
        "ragjudge.bench.cxm.quality.bench:QualityBench",
        'CXMArena agent quality adherence: True/False/NA answers to quality questions, with evidence.',
        "optional", 'Hugging Face sprinklr-huggingface/CXM_Arena (`ragjudge cxm fetch`), or plain JSONL'),
    "cxm-tool-calls": BenchCard(
        "ragjudge.bench.cxm.tool_calls.bench:ToolCallsBench",
        'CXMArena tool calling: pick the right tools (and arguments) among 16 to 128 offered.',
        "optional", 'Hugging Face sprinklr-huggingface/CXM_Arena (`ragjudge cxm fetch`), or plain JSONL'),
    "cxm-answer-classification": BenchCard(
        "ragjudge.bench.cxm.answer_classification.bench:AnswerClassificationBench",
        'CXMArena multi-turn RAG: replies from retrieved articles, labelled Correct / Incorrect / Hallucination / Refusal by an LLM judge.',
        "required", 'Hugging Face sprinklr-huggingface/CXM_Arena (`ragjudge cxm fetch`), or plain JSONL'),
    "cxm-kb-refinement": BenchCard(
        "ragjudge.bench.cxm.kb_refinement.bench:KbRefinementBench",
        'CXMArena KB refinement: similar pairs by embeddings (k nearest neighbours, fixed threshold), contradictory pairs by an LLM pair judge.',
        "optional", 'Hugging Face sprinklr-huggingface/CXM_Arena (`ragjudge cxm fetch`), or plain JSONL'),
    "cxm-article-search": BenchCard(
        "ragjudge.bench.cxm.article_search.bench:ArticleSearchBench",
        'CXMArena article search: rank KB articles for a question; P@k, R@k, hit@k, MRR.',
        "optional", 'Hugging Face sprinklr-huggingface/CXM_Arena (`ragjudge cxm fetch`), or plain JSONL'),
    "sentence-retrieval": BenchCard(
        "ragjudge.bench.sentence_retrieval.bench:SentenceRetrievalBench",
        'Sentence retrieval for open-ended dialogues (Harel et al., SIGIR 2022): rerank 50 Wikipedia sentences per Reddit dialogue; MAP, nDCG@5, MRR over 50 tuned splits, permutation tests.',
        "optional", "the dataset's three JSON files from its GitHub repository (--data, not downloaded by ragjudge)"),
    "cdr": BenchCard(
        "ragjudge.bench.cdr.bench:CdrBench",
        "CDR conversational data retrieval: find conversations for analytical queries (hit (the paper's ACC), P, R, nDCG, MRR @1/5/10/20), any retrieval pipeline and unit, beside the paper's 16 models.",
        "no", 'the CDR-Benchmark release (github.com/l-yohai/CDR-Benchmark; --data, not downloaded by ragjudge)'),
    "rag": BenchCard(
        "ragjudge.bench.rag.bench:RagBench",
        "Your own RAG app's records (question, answer, contexts, reference), judged",
        "optional", 'your own records: JSONL, JSON, CSV or Parquet (--data or -T data=)'),
    "cxm-multiturn-retrieval": BenchCard(
        "ragjudge.bench.cxm.multiturn_retrieval.bench:MultiTurnRetrievalBench",
        'CXMArena multi-turn retrieval (Table 8): conversation → query (last turn, all user turns or an LLM) → chunked KB search; Recall@k.',
        "optional", 'Hugging Face sprinklr-huggingface/CXM_Arena (`ragjudge cxm fetch`), or plain JSONL'),
}


@dataclass(frozen=True)
class BenchEntry:
    name: str
    target: str
    """`module:Class`."""
    origin: str
    """`built-in` or the distribution that registered it."""
    card: BenchCard | None = None
    """A built-in's card; a plug-in is described by its class."""

    def load(self) -> type[Bench[Any, Any]]:
        from ragjudge.engine.bench import Bench

        module_name, _, attr = self.target.partition(":")
        try:
            cls = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError) as exc:
            raise UsageError(f"bench {self.name} ({self.origin}) cannot be loaded from {self.target}: {exc}") from None
        if not (isinstance(cls, type) and issubclass(cls, Bench)):
            raise UsageError(f"bench {self.name} ({self.origin}): {self.target} is not a ragjudge Bench class")
        return cls


def entries() -> dict[str, BenchEntry]:
    """Every bench by name; a third-party bench may not take a built-in name."""
    found = {name: BenchEntry(name, card.target, "built-in", card) for name, card in CARDS.items()}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in CARDS:
            continue
        dist = getattr(getattr(ep, "dist", None), "name", None) or "a plugin"
        found.setdefault(ep.name, BenchEntry(ep.name, ep.value, dist))
    return dict(sorted(found.items()))


def get(name: str) -> BenchEntry:
    known = entries()
    if name not in known:
        raise UsageError(f"unknown bench {name!r} (available: {', '.join(known)}; or a path to MTRAG-format "
                         f"tasks; `ragjudge benches` lists them)")
    return known[name]


def resolve(bench: str) -> tuple[type[Bench[Any, Any]], str, dict[str, Any]]:
    """`--bench VALUE` → (bench class, label for default output folders, options the value implies).

    A registered name wins; otherwise an existing path is MTRAG-format tasks (`--bench PATH`, as before)."""
    if bench in entries():
        return get(bench).load(), bench, {}
    path = Path(bench)
    if path.exists():
        return get("mtrag").load(), path.name, {"data": str(path)}
    if bench == "cxm":
        cxm = [n for n in entries() if n.startswith("cxm-")]
        raise UsageError(f"CXMArena tasks are separate benches: {', '.join(cxm)}")
    return get(bench).load(), bench, {}  # raises the unknown-bench error

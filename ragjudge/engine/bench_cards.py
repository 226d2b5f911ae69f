"""The built-in benches' cards: where each class is and what `ragjudge benches` says of it, read without importing
any bench (the fifteen take a second to import in all). Each class named here takes its description, LLM use and
data source from its card (`Bench.__init_subclass__`), so this is their one source. A plug-in needs no card: it
registers through the `ragjudge.benches` entry point (`registry.py`) and is described by its class."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

LLMUse = Literal["no", "optional", "required"]
"""Whether a bench's runs call an LLM: never, depending on options, or always."""


@dataclass(frozen=True)
class BenchCard:
    """What `ragjudge benches` lists of a built-in bench."""

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


def card_of(target: str) -> BenchCard | None:
    """The card of the built-in bench class `module:Class`, if it is one."""
    return next((card for card in CARDS.values() if card.target == target), None)

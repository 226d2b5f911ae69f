"""The paper's Table 7: how to run it as the paper did (`SETUP`, shown by `ragjudge benches show`) and its figures
beside a run measured under the same conditions (`beside`; the rule: `cxm.references`)."""

from __future__ import annotations

from typing import Any

from ragjudge.bench.cxm import paper as T
from ragjudge.bench.cxm.references import (FILE, NO_LIMIT, QueryFormation, Shown, chunk_size, chunk_words, none_shown,
                                           not_reported, paper_row, query_why, reference, retriever_of, shown_not,
                                           side_by_side)
from ragjudge.retrieval.corpus import ChunkingSpec
from ragjudge.retrieval.spec import PipelineSpec

COMMAND = ("ragjudge eval --bench cxm-answer-classification --data FOLDER --gen openai/gpt-4o --judge-models "
                  "openai/gpt-4o --pipeline dense_ada002 --rewrite-model gemini/gemini-2.0-flash")
SETUP = (
    "The paper's Table 7 (GPT-4o's or Gemini 2.0 Flash's replies from the top 10 articles retrieved with "
    "text-embedding-ada-002 over chunks of 1000 characters, queries written by an LLM with CXMArena's "
    f"query-formation prompt, GPT-4o as the judge): `{COMMAND}` (-T chunk=1000, -T k=10 and, with "
    "--rewrite-model, -T query=llm are the defaults; Gemini's row: --gen gemini/gemini-2.0-flash). The paper does "
    f"not name its query writer: gemini-2.0-flash is CXMArena's predictor's. {NO_LIMIT}")


def beside(gen: str | None, judge: str | None, spec: PipelineSpec, chunking: ChunkingSpec | None, k: int,
           query: QueryFormation, from_file: bool, partial: bool, metrics: dict[str, Any]) -> Shown:
    """Table 7: the class shares of GPT-4o's and Gemini 2.0 Flash's replies from ada-002 retrieval over chunks of
    1000 (top 10, LLM-formed queries), judged by GPT-4o."""
    if from_file:
        return none_shown(FILE)
    if gen is None:
        return none_shown("this run classifies the data's own replies; Table 7 classifies the replies of "
                          f"{' and '.join(T.TABLE7_CLASSES)} (--gen)")
    setup = T.TABLE7_SETUP
    row = paper_row(gen, T.TABLE7_CLASSES)
    why = [] if row else [not_reported(7, T.TABLE7_CLASSES, "replier", gen)]
    if paper_row(judge, [setup["judge"]]) is None:
        why.append(f"the paper's judge is {setup['judge']}; this run's is {judge}")
    retriever, described = retriever_of(spec)
    if retriever != setup["retriever"]:
        why.append(f"the paper retrieves with {setup['retriever']}; this run with {described}")
    if chunk_size(chunking) != setup["chunk"]:
        why.append(f"the paper splits articles into chunks of {setup['chunk']} characters (overlap "
                   f"{T.OFFICIAL_OVERLAP}); this run: {chunk_words(chunking)}")
    if k != setup["k"]:
        why.append(f"CXMArena's predictor gives the replier the top {setup['k']}; this run -T k={k}")
    why += query_why(query)
    if stop := shown_not(why, partial):
        return stop
    assert row is not None
    names = ["Correct", "Incorrect", "Hallucination", "Refusal"]
    rows = side_by_side([f"{n} share" for n in names], T.TABLE7_CLASSES[row], metrics, [f"{n} share" for n in names])
    return Shown([reference(7, f"multi-turn RAG answer classes, {row} replies", rows,
                            f"this run: {row} replies from the top {setup['k']} articles by {setup['retriever']} "
                            f"over chunks of {setup['chunk']} characters, queries written by an LLM with CXMArena's "
                            f"prompt, labelled by {setup['judge']}; still different: ragjudge's reply and "
                            f"classification prompts (judges/cxm_agent_response.yaml, "
                            f"cxm_answer_classification.yaml), not CXMArena's; the replier sees {setup['k']} distinct "
                            f"articles (CXMArena's predictor: the articles of the top {setup['k']} passages)")])

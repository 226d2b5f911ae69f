"""How to run each CXMArena bench under the conditions of the paper's table (shown by `ragjudge benches show`):
one command each. Only then is the paper's row printed beside the run (`reference`); otherwise one note says which
condition differs. Models are matched by exact name (`paper.ALIASES`): any litellm route works (`openai/`,
`azure/` with that deployment name, `gemini/`, `hosted_vllm/Qwen/...`)."""

from __future__ import annotations

from ragjudge.bench.cxm.base import DATA_HELP

NO_LIMIT = "Add no --limit: the paper's figures are over the whole release."

TABLE2 = (
    "The paper's Table 2 (similar pairs by an embedding model; the paper gives neither threshold nor k, so "
    "CXMArena's predictor's -T threshold=0.9 -T k=4, the defaults): `ragjudge eval --bench cxm-kb-refinement --data "
    "FOLDER -T encoder=litellm --gen openai/text-embedding-3-large` (or text-embedding-ada-002); the table's "
    "sentence-transformers models: --gen sentence-transformers/all-mpnet-base-v2, jinaai/jina-embeddings-v3 or "
    "intfloat/multilingual-e5-large.")

TABLE4 = (
    "The paper's Table 4 (accuracy on each of the release's taxonomies taxonomy_1, _2, _3 = the paper's A, B, C): "
    "`ragjudge eval --bench cxm-intent --data FOLDER --gen openai/gpt-4.1` (or gpt-4.1-mini, gpt-4.1-nano, "
    "gemini/gemini-2.0-flash, Qwen2.5-14B-Instruct, Qwen2.5-7B-Instruct); the paper's figure is set beside our "
    f"accuracy under the paper protocol (both protocols are always computed). {NO_LIMIT}")

TABLE5 = (
    "The paper's Table 5 (case- and question-level accuracy): `ragjudge eval --bench cxm-quality --data FOLDER --gen "
    "openai/gpt-4.1` (or the table's other models, as for cxm-intent); the question level is set beside ours under "
    f"the paper protocol (an unanswered question skipped). {NO_LIMIT}")

TABLE6 = (
    "The paper's Table 6 (\"retrieval precision\": a relevant article among the articles of the top 10 passages): "
    "`ragjudge eval --bench cxm-article-search --data FOLDER --pipeline dense_ada002 -T chunk=1000`; its other cells: "
    "--pipeline bm25 -T chunk=500, --pipeline intfloat/multilingual-e5-large-instruct -T chunk=500 or 1000 (the "
    "paper's e5-large-instruct), a copy of pipelines/dense_ada002.yaml with model openai/text-embedding-3-large and "
    f"-T chunk=1000. Keep 10 in -T ks. {NO_LIMIT}")

TABLE7_COMMAND = ("ragjudge eval --bench cxm-answer-classification --data FOLDER --gen openai/gpt-4o --judge-models "
                  "openai/gpt-4o --pipeline dense_ada002 --rewrite-model gemini/gemini-2.0-flash")
TABLE7 = (
    "The paper's Table 7 (GPT-4o's or Gemini 2.0 Flash's replies from the top 10 articles retrieved with "
    "text-embedding-ada-002 over chunks of 1000 characters, queries written by an LLM with CXMArena's "
    f"query-formation prompt, GPT-4o as the judge): `{TABLE7_COMMAND}` (-T chunk=1000, -T k=10 and, with "
    "--rewrite-model, -T query=llm are the defaults; Gemini's row: --gen gemini/gemini-2.0-flash). The paper does "
    f"not name its query writer: gemini-2.0-flash is CXMArena's predictor's. {NO_LIMIT}")

TABLE8 = (
    "The paper's Table 8 (average recall at 10 and 20, chunks of 500 characters, LLM-formed queries): `ragjudge eval "
    "--bench cxm-multiturn-retrieval --data FOLDER --pipeline dense_ada002 --rewrite-model gemini/gemini-2.0-flash` "
    "(-T chunk=500 and -T ks=10,20 are the defaults); its other rows: a copy of pipelines/dense_ada002.yaml with "
    "openai/text-embedding-3-large, --pipeline intfloat/multilingual-e5-large-instruct. The paper does not name its "
    f"query writer: gemini-2.0-flash is CXMArena's predictor's. {NO_LIMIT}")

TABLE9 = (
    "The paper's Table 9 (tool-selection accuracy with 16 to 128 offered tools, the tool choice left to the model): "
    "`ragjudge eval --bench cxm-tool-calls --data FOLDER --gen openai/gpt-4o` (or gpt-4o-mini, "
    "gemini/gemini-2.0-flash, gemini/gemini-1.5-pro) on the release, whose tool_candidatesN are the tools offered; "
    f"not -T force_tool_call. {NO_LIMIT}")


def data_help(setup: str) -> str:
    """The data help of a CXMArena bench, then how to run it as the paper did."""
    return f"{DATA_HELP}\n\n{setup}"

"""The CXMArena paper's published figures (Garg et al., 2025, Tables 2 and 4 to 9), printed beside ours.

Only figures the paper states; what it leaves out (e.g. which k Table 6's "precision" uses, taken as 10 from
the official evaluator's default) is said in the table's title. Each says its unit (the paper prints some tables
as percentages, ours are fractions) and when one of our figures can be compared with its rows (`comparable`).
"""

from __future__ import annotations

from ragjudge.engine.summary import Reference

PAPER = "CXMArena (Garg et al., 2025)"

def _paper(table: int, title: str, columns: list[str], rows: list[list[object]], unit: str,
           comparable: str) -> Reference:
    return Reference(title=title, columns=columns, rows=rows, source=f"{PAPER}, Table {table}", unit=unit,
                     comparable=comparable)


TABLE2_KB = _paper(
    2, "Paper, Table 2: KB refinement, similar pairs (embeddings + threshold)",
    ["model", "precision", "recall", "F1"],
    [["text-embedding-3-large", 0.85, 0.18, 0.29], ["jina-embeddings-v3", 0.13, 0.23, 0.17],
     ["text-embedding-ada-002", 0.10, 0.31, 0.15], ["all-mpnet-base-v2", 0.16, 0.13, 0.15],
     ["multilingual-e5-large", 0.06, 0.47, 0.11]],
    "fraction",
    "a run on the release's KB_Refinement pairs and KB_refinement_articles with the same embedding model "
    "(-T encoder=litellm --gen MODEL for an API model): similar precision, recall and F1; the paper gives neither "
    "its threshold nor k (ours: CXMArena's predictor's 0.9 and 4 neighbours)")

TABLE4_INTENT = _paper(
    4, "Paper, Table 4: intent prediction accuracy (%) by taxonomy (A = taxonomy_1, B = taxonomy_2, "
    "C = taxonomy_3)",
    ["model", "A (95 intents)", "B (208, two levels)", "C (37)"],
    [["GPT-4.1", 30.13, 70.89, 46.88], ["Gemini 2.0 Flash", 30.23, 61.90, 45.45],
     ["GPT-4.1 mini", 29.11, 62.21, 44.84], ["Qwen-2.5-14B-Instruct", 25.64, 49.95, 34.83],
     ["GPT-4.1 nano", 15.22, 17.57, 30.44], ["Qwen-2.5-7B-Instruct", 20.53, 25.84, 28.7]],
    "percent",
    "a run on the release's Intent_Prediction with the same model: each taxonomy's accuracy (the taxonomy "
    "breakdown, or -T taxonomy=taxonomy_N), the paper protocol's mapping answers as the paper's evaluator does")

TABLE5_QUALITY = _paper(
    5, "Paper, Table 5: agent quality adherence accuracy (%)",
    ["model", "case level", "question level"],
    [["Qwen-2.5-7B-Instruct", 15.1, 77.8], ["Qwen-2.5-14B-Instruct", 22.5, 82.5], ["GPT-4.1 nano", 22.6, 78.4],
     ["Gemini 2.0 Flash", 26.3, 83.7], ["GPT-4.1 mini", 27.3, 83.1], ["GPT-4.1", 32.4, 86.1]],
    "percent",
    "a run on the release's Agent_Quality_Adherence with the same model: case accuracy and the paper protocol's "
    "question accuracy")

TABLE6_SEARCH = _paper(
    6, "Paper, Table 6: article search \"retrieval precision\" (a relevant article in the top 10: ragjudge's "
    "hit@10), chunk size in characters",
    ["embedding", "chunk", "precision (hit@10)"],
    [["text-embedding-3-large", 1000, 0.75], ["text-embedding-ada-002 + BM25", 500, 0.68],
     ["text-embedding-ada-002", 1000, 0.67], ["e5-large-instruct", 500, 0.65], ["e5-large-instruct", 1000, 0.63],
     ["BM25", 500, 0.42]],
    "fraction",
    "a run on the release's Article_Search with the same retriever and -T chunk=500 or 1000: hit@10 (and its "
    "official top-10-passages ranking); the paper does not say which k its \"precision\" uses (10 is the official "
    "evaluator's default)")

TABLE7_CLASSES = _paper(
    7, "Paper, Table 7: multi-turn RAG answer classes (%), retrieval text-embedding-ada-002, chunks of 1000",
    ["generator", "Correct", "Incorrect", "Hallucination", "Refusal"],
    [["GPT-4o", 50.0, 4.0, 24.0, 22.0], ["Gemini 2.0 Flash", 61.0, 5.0, 13.0, 21.0]],
    "percent",
    "a run on the release's Multi_Turn with the same generator, text-embedding-ada-002 retrieval over chunks of "
    "1000 characters (-T chunk=1000) and GPT-4o as the judge: the class shares")

TABLE8_RETRIEVAL = _paper(
    8, "Paper, Table 8: multi-turn RAG average recall, chunks of 500 characters, LLM-formed queries",
    ["embedding", "k", "average recall"],
    [["text-embedding-ada-002", 20, 0.35], ["text-embedding-3-large", 20, 0.34],
     ["text-embedding-ada-002", 10, 0.26], ["text-embedding-3-large", 10, 0.26],
     ["multilingual-e5-large-instruct", 20, 0.25], ["multilingual-e5-large-instruct", 10, 0.18]],
    "fraction",
    "a run on the release's Multi_Turn with the same embedding model, chunks of 500 characters (-T chunk=500) and "
    "LLM-formed queries (-T query=llm): R@10 and R@20 (paper protocol)")

TABLE9_TOOLS = _paper(
    9, "Paper, Table 9: tool selection accuracy (%) by number of offered tools",
    ["model", "16", "32", "64", "96", "128"],
    [["Gemini 1.5 Pro", 42.98, 37.06, 34.43, 35.53, 35.31], ["Gemini 2.0 Flash", 47.59, 45.83, 40.57, 41.45, 42.32],
     ["gpt-4o", 52.19, 48.25, 43.20, 41.45, 42.98], ["gpt-4o-mini", 57.46, 52.63, 50.00, 47.81, 44.52]],
    "percent",
    "a run on the release's Tool_Calling (its own tool candidates) with the same model and tool choice left to it "
    "(not -T force_tool_call): tool-selection accuracy @N tools")

"""The CXMArena paper's published figures (Garg et al., 2025, Tables 2 and 4 to 9), as printed, and the explicit names
a run's model may go by for each row. Tables 4, 5, 7 and 9 are in percent; `pct` makes fractions (30.13 → 0.3013),
the unit of every figure ragjudge prints. `reference` decides when one is shown (never a nearby cell).
"""

from __future__ import annotations

PAPER = "CXMArena (Garg et al., 2025)"


def pct(*values: float) -> tuple[float, ...]:
    """Percentages as printed → fractions (rounded to the printed precision plus two digits)."""
    return tuple(round(v / 100, 6) for v in values)


ALIASES: dict[str, tuple[str, ...]] = {
    # the paper's row name → the model names a run may give for it (compared without case, after any litellm route
    # such as `openai/`, `gemini/`, `hosted_vllm/` or an organisation such as `Qwen/`); never a prefix or a nearby
    # name (gpt-4.1-mini is not GPT-4.1, gemini-2.0-flash-lite is not Gemini 2.0 Flash)
    "GPT-4.1": ("gpt-4.1", "gpt-4.1-2025-04-14"),
    "GPT-4.1 mini": ("gpt-4.1-mini", "gpt-4.1-mini-2025-04-14"),
    "GPT-4.1 nano": ("gpt-4.1-nano", "gpt-4.1-nano-2025-04-14"),
    "Gemini 2.0 Flash": ("gemini-2.0-flash", "gemini-2.0-flash-001"),  # the paper's appendix: Gemini 2.0 Flash 001
    "Gemini 1.5 Pro": ("gemini-1.5-pro",),
    "GPT-4o": ("gpt-4o",),
    "gpt-4o": ("gpt-4o",),
    "gpt-4o-mini": ("gpt-4o-mini",),
    "Qwen-2.5-14B-Instruct": ("qwen2.5-14b-instruct",),
    "Qwen-2.5-7B-Instruct": ("qwen2.5-7b-instruct",),
    "text-embedding-3-large": ("text-embedding-3-large",),
    "text-embedding-ada-002": ("text-embedding-ada-002",),
    "jina-embeddings-v3": ("jina-embeddings-v3",),
    "all-mpnet-base-v2": ("all-mpnet-base-v2",),
    "multilingual-e5-large": ("multilingual-e5-large",),
    "multilingual-e5-large-instruct": ("multilingual-e5-large-instruct",),
}

EMBEDDINGS = ("text-embedding-3-large", "text-embedding-ada-002", "jina-embeddings-v3", "all-mpnet-base-v2",
              "multilingual-e5-large", "multilingual-e5-large-instruct")
"""The embedding models of Tables 2, 6 and 8 (rows of `ALIASES`)."""
BM25 = "BM25"
ADA = "text-embedding-ada-002"
ADA_BM25 = "text-embedding-ada-002 + BM25"
OFFICIAL_OVERLAP = 100
"""CXMArena's predictor splits articles with an overlap of 100 characters (the paper gives only the size)."""

KB_THRESHOLD, KB_K = 0.9, 4
"""CXMArena's predictor's KB baseline (the paper gives neither): cosine similarity >= 0.9 among 5 neighbours, the
article itself included (so 4)."""

TABLE2_KB: dict[str, tuple[float, ...]] = {  # similar pairs: precision, recall, F1 (fractions in the paper)
    "text-embedding-3-large": (0.85, 0.18, 0.29), "jina-embeddings-v3": (0.13, 0.23, 0.17),
    "text-embedding-ada-002": (0.10, 0.31, 0.15), "all-mpnet-base-v2": (0.16, 0.13, 0.15),
    "multilingual-e5-large": (0.06, 0.47, 0.11)}

TAXONOMIES = {"taxonomy_1": "Taxonomy A", "taxonomy_2": "Taxonomy B", "taxonomy_3": "Taxonomy C"}
"""The release's taxonomy files and the paper's names for them (Table 3: 95, 208 in two levels, 37 intents)."""

TABLE4_INTENT: dict[str, tuple[float, ...]] = {  # accuracy, Taxonomy A, B, C (percent in the paper)
    "GPT-4.1": pct(30.13, 70.89, 46.88), "Gemini 2.0 Flash": pct(30.23, 61.90, 45.45),
    "GPT-4.1 mini": pct(29.11, 62.21, 44.84), "Qwen-2.5-14B-Instruct": pct(25.64, 49.95, 34.83),
    "GPT-4.1 nano": pct(15.22, 17.57, 30.44), "Qwen-2.5-7B-Instruct": pct(20.53, 25.84, 28.7)}

TABLE5_QUALITY: dict[str, tuple[float, ...]] = {  # case-level, question-level accuracy (percent in the paper)
    "Qwen-2.5-7B-Instruct": pct(15.1, 77.8), "Qwen-2.5-14B-Instruct": pct(22.5, 82.5),
    "GPT-4.1 nano": pct(22.6, 78.4), "Gemini 2.0 Flash": pct(26.3, 83.7), "GPT-4.1 mini": pct(27.3, 83.1),
    "GPT-4.1": pct(32.4, 86.1)}

E5_INSTRUCT = "multilingual-e5-large-instruct"
TABLE6_SEARCH: dict[tuple[str, int], float] = {  # (retriever, chunk characters) → "retrieval precision" (hit@10)
    ("text-embedding-3-large", 1000): 0.75, (ADA_BM25, 500): 0.68, (ADA, 1000): 0.67,
    (E5_INSTRUCT, 500): 0.65, (E5_INSTRUCT, 1000): 0.63, (BM25, 500): 0.42}
TABLE6_LABELS = {E5_INSTRUCT: "e5-large-instruct"}
"""Table 6's own names for its retrievers, where they differ: its "e5-large-instruct" is taken as the model of
Table 8 and CXMArena's predictor, intfloat/multilingual-e5-large-instruct."""

TABLE7_CLASSES: dict[str, tuple[float, ...]] = {  # Correct, Incorrect, Hallucination, Refusal (percent)
    "GPT-4o": pct(50.0, 4.0, 24.0, 22.0), "Gemini 2.0 Flash": pct(61.0, 5.0, 13.0, 21.0)}
TABLE7_SETUP = {"retriever": ADA, "chunk": 1000, "k": 10, "judge": "GPT-4o"}
"""Table 7: "the same Retrieval Policy of text-embedding-ada-002:1000", GPT-4o as the judge (§5.5); the top 10
and the LLM-formed query are CXMArena's predictor's (`predict_multi_turn_rag`)."""

TABLE8_RETRIEVAL: dict[tuple[str, int], float] = {  # (embedding model, k) → average recall; chunks of 500
    (ADA, 20): 0.35, ("text-embedding-3-large", 20): 0.34, (ADA, 10): 0.26, ("text-embedding-3-large", 10): 0.26,
    (E5_INSTRUCT, 20): 0.25, (E5_INSTRUCT, 10): 0.18}
TABLE8_CHUNK = 500

TABLE9_TOOLS: dict[str, dict[int, float]] = {  # tool-selection accuracy by number of offered tools (percent)
    name: dict(zip((16, 32, 64, 96, 128), pct(*row), strict=True)) for name, row in {
        "Gemini 1.5 Pro": (42.98, 37.06, 34.43, 35.53, 35.31), "Gemini 2.0 Flash": (47.59, 45.83, 40.57, 41.45, 42.32),
        "gpt-4o": (52.19, 48.25, 43.20, 41.45, 42.98), "gpt-4o-mini": (57.46, 52.63, 50.00, 47.81, 44.52)}.items()}

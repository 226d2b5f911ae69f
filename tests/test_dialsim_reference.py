"""The paper's figures beside ours: model names matched, the right table and column."""

from __future__ import annotations

from ragjudge.bench.dialsim.reference import paper, paper_model, reference_tables


def test_paper_figures_are_the_published_ones() -> None:
    tables = {(t["show"], t["names"]): t for t in paper()["tables"]}
    assert tables[("friends", "generic")]["rows"]["GPT-4o-mini"][2] == [52.11, 0.52]  # Table 3, BM25 session
    assert tables[("friends", "original")]["rows"]["GPT-4o-mini"][2] == [55.62, 0.45]  # Table 4 agrees
    assert tables[("friends", "swapped")]["rows"]["Gemini 2.5 Flash"][5] == [43.23, 0.19]
    assert tables[("friends", "generic")]["rows"]["Gemini 2.5 Flash"][0] == [53.94, 1.26]
    assert len(tables[("friends", "generic")]["rows"]) == 18 and len(tables[("bigbang", "generic")]["rows"]) == 13


def test_model_names_match_the_paper_rows() -> None:
    assert paper_model("openai/gpt-4o-mini-2024-07-18") == "GPT-4o-mini"
    assert paper_model("gemini/gemini-2.5-flash") == "Gemini 2.5 Flash"
    assert paper_model("hosted_vllm/meta-llama/Llama-3.3-70B-Instruct") == "Llama 3.3-70B"
    assert paper_model("microsoft/phi-4-mini-instruct") == "Phi 4 mini-3.8B"
    assert paper_model("microsoft/phi-4") == "Phi 4-14B"
    assert paper_model("mc-random") == "Random Guessing"
    assert paper_model("openai/gpt-4o") is None and paper_model("mc-lexical") is None


def test_our_accuracy_goes_in_the_column_of_our_strategy() -> None:
    tables, notes = reference_tables("openai/gpt-4o-mini", "session", "bm25", "generic", {"friends": 0.5})
    [table] = tables
    assert table["title"].startswith("DialSim paper, Table 3: GPT-4o-mini")
    rows = {row[0]: row[1:] for row in table["rows"]}
    assert rows["BM25 Session Entire"] == ["52.11 (0.52)", 50.0]
    assert rows["Base LLM"] == ["48.11 (1.26)", None] and not notes
    tables, _ = reference_tables("gemini/gemini-2.5-flash", "recent", None, "generic", {"friends": 0.6})
    assert tables[0]["rows"][0] == ["Base LLM", "53.94 (1.26)", 60.0]
    assert tables[1]["rows"] == [["fan", 62.15], ["temporal", 50.83], ["one-hop", 69.19], ["two-hop", 19.28]]
    dense, _ = reference_tables("openai/gpt-4o-mini", "utterance", "dense", "generic", {"friends": 0.4})
    assert dense[0]["rows"][4][2] == 40.0 and "text-embedding-3-small" in dense[0]["notes"][0]
    none, notes = reference_tables("openai/gpt-4o-mini", "session", "bm25", "generic", {"mini": 0.5})
    assert none == [] and "only for shows/names other than these" in notes[0]

"""The paper's figures beside ours: model names matched, the right table and cell, and only beside a run the
cell describes (format, memory, retriever, k, names, the whole simulation)."""

from __future__ import annotations

import pytest

from ragjudge.bench.dialsim.reference import (
    RunConditions,
    paper,
    paper_model,
    paper_references,
)
from ragjudge.bench.dialsim.summary import ShowFigures
from ragjudge.engine.summary import Reference

BM25 = {"name": "bm25", "options": {"k1": 1.2, "b": 0.75}}
MINILM = {"name": "dense", "options": {"encoder": "sentence-transformers", "model": "minilm"}}
OPENAI = {"name": "dense", "options": {"encoder": "litellm", "model": "openai/text-embedding-3-small"}}


def ours(accuracy: float, std: float | None = None, **groups: float) -> ShowFigures:
    return ShowFigures(accuracy=accuracy, std=std, n=120, seeds=3 if std is not None else 1,
                       groups={"overall": accuracy, **groups})


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


def test_our_accuracy_beside_the_cell_of_our_strategy_only() -> None:
    cond = RunConditions(gen="openai/gpt-4o-mini", fmt="mc", memory="session", names="generic", retriever=BM25, k=10)
    refs, notes = paper_references(cond, {"friends": ours(0.5, 0.01)})
    [ref] = refs
    assert isinstance(ref, Reference) and not notes
    assert ref.title == "DialSim paper, Table 3: GPT-4o-mini, BM25 Session Entire (accuracy %)"
    assert ref.source == "DialSim (Kim et al., arXiv 2406.13144v6), Table 3" and ref.unit == "percent"
    assert ref.rows == [["friends", 52.11, 0.52, 50.0, 1.0, 120]]  # the one cell: no other memory's
    assert ref.comparable.startswith("runs of GPT-4o-mini on the friends multiple-choice questions with generic "
                                      "names and memory BM25 Session Entire (k=10) over the whole simulation")
    assert "rank-bm25" in ref.comparable
    refs, _ = paper_references(RunConditions(gen="gemini/gemini-2.5-flash", fmt="mc", memory="recent",
                                             names="generic"),
                               {"friends": ours(0.6, fan=0.7, temporal=0.5, **{"one-hop": 0.8, "two-hop": 0.25})})
    table3, analysis = refs
    assert table3.rows == [["friends", 53.94, 1.26, 60.0, None, 120]] and table3.title.endswith("Base LLM (accuracy %)")
    assert analysis.source.endswith("§5.3")
    assert analysis.rows == [["fan", 62.15, 70.0], ["temporal", 50.83, 50.0], ["one-hop", 69.19, 80.0],
                             ["two-hop", 19.28, 25.0]]
    refs, _ = paper_references(RunConditions(gen="openai/gpt-4o-mini", fmt="mc", memory="utterance",
                                             names="generic", retriever=OPENAI, k=20), {"bigbang": ours(0.3)})
    assert refs[0].rows[0][:3] == ["bigbang", 29.72, 2.48] and "Embedding Utterance" in refs[0].title
    assert "inferred from their order" in refs[0].notes[0]  # Appendix H's shows are our reading of the text


@pytest.mark.parametrize(("change", "why"), [
    ({"fmt": "open"}, "the paper's figures are multiple choice (-T format=mc); this run answers open"),
    ({"retriever": MINILM}, ("the paper's embedding columns used OpenAI text-embedding-3-small; this run's encoder "
                             "is minilm")),
    ({"k": 5}, "the paper recalls 10 sessions; this run -T k=5"),
    ({"all_questions": False}, "this run asks only part of its simulation's questions (--limit)"),
    ({"tkg_ratio": 0.5}, "the paper draws 70% temporal questions; this run -T tkg_ratio=0.5"),
    ({"memory": "oracle", "retriever": None, "k": 20}, "Table 3 has no oracle column"),
    ({"memory": "recent", "retriever": None, "k": None, "context_tokens": 8000},
     "the paper's Base LLM fills the model's whole context window; this run -T context_tokens=8000"),
])
def test_no_paper_cell_beside_a_run_it_does_not_describe(change: dict, why: str) -> None:
    base = {"gen": "openai/gpt-4o-mini", "fmt": "mc", "memory": "session", "names": "generic", "retriever": BM25,
            "k": 10}
    refs, notes = paper_references(RunConditions(**{**base, **change}), {"friends": ours(0.5)})
    assert refs == []
    [note] = notes
    assert note.startswith("the paper's Table 3 reports GPT-4o-mini on friends (generic names), not under this "
                           "run's conditions, so it is not shown: ") and why in note


def test_shows_and_models_the_paper_does_not_report_say_so() -> None:
    cond = RunConditions(gen="openai/gpt-4o-mini", fmt="mc", memory="session", names="generic", retriever=BM25, k=10)
    refs, notes = paper_references(cond, {"mini": ours(0.5)})
    assert refs == [] and notes == [("the paper reports GPT-4o-mini only for shows/names other than these "
                                     "(generic names)")]
    refs, notes = paper_references(RunConditions(**{**cond.__dict__, "gen": "mc-lexical"}), {"friends": ours(0.5)})
    assert refs == [] and notes == ["the paper reports no figures for mc-lexical"]
    refs, _ = paper_references(RunConditions(**{**cond.__dict__, "names": "swapped"}), {"friends": ours(0.4)})
    assert refs[0].source.endswith("Appendix J (swapped names)") and refs[0].rows[0][1:3] == [45.08, 1.92]

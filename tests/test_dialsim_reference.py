"""The paper's figures beside ours: model names matched exactly, the right table and cell, and only beside a run
the cell describes (format, judge, time limit, memory, retriever, k, names, the whole simulation, the evidence
rule); otherwise no cell and one line saying why."""

from __future__ import annotations

import pytest

from ragjudge.bench.dialsim.paper import (
    NONE_SHOWN,
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


@pytest.mark.parametrize("gen", ["gemini/gemini-2.5-flash-lite", "gemini/gemini-2.0-flash-lite",
                                 "openai/gpt-4o-mini-search-preview", "together_ai/meta-llama/Llama-3.3-70B-Instruct-Turbo",
                                 "microsoft/phi-4-reasoning", "Qwen/Qwen3-32B-AWQ", "ollama/llama3.3"])
def test_models_are_matched_by_exact_name_never_by_prefix(gen: str) -> None:
    """D2: a name was matched to a paper row by prefix, so Gemini 2.5 Flash-Lite got the Gemini 2.5 Flash row and
    2.0 Flash-Lite the 2.0 Flash one. Only the exact names of the alias table (after a route prefix) match."""
    assert paper_model(gen) is None
    refs, notes = paper_references(RunConditions(gen=gen, fmt="mc", memory="recent", names="generic"),
                                   {"friends": ours(0.5)})
    assert refs == [] and notes == [f"{NONE_SHOWN}the paper reports no figures for {gen} (models are matched by "
                                    f"exact name, paper.json's alias table)"]


def test_every_alias_names_one_row_and_the_route_prefix_is_ignored() -> None:
    aliases = paper()["aliases"]
    rows = set(paper()["tables"][0]["rows"])
    assert set(aliases) == rows  # every Table 3 row, and nothing else
    for model, names in aliases.items():
        for name in names:
            assert paper_model(name) == model and paper_model(f"hosted_vllm/{name.upper()}") == model
    assert paper_model("gemini/gemini-2.5-flash") == "Gemini 2.5 Flash"
    assert paper_model("gemini/gemini-2.0-flash-001") == "Gemini 2.0 Flash"


def test_our_accuracy_beside_the_cell_of_our_strategy_only() -> None:
    cond = RunConditions(gen="openai/gpt-4o-mini", fmt="mc", memory="session", names="generic", retriever=BM25, k=10)
    refs, notes = paper_references(cond, {"friends": ours(0.5, 0.01)})
    [ref] = refs
    assert isinstance(ref, Reference) and not notes
    assert ref.title == "DialSim paper, Table 3: GPT-4o-mini, BM25 Session Entire (accuracy %)"
    assert ref.source == "DialSim (Kim et al., arXiv 2406.13144v6), Table 3" and ref.unit == "percent"
    assert ref.rows == [["friends", 52.11, 0.52, 50.0, 1.0, 120]]  # the one cell: no other memory's
    assert ref.comparable.startswith("runs of GPT-4o-mini on the friends multiple-choice questions scored by rule, "
                                      "with no time limit, generic names and memory BM25 Session Entire (k=10) over "
                                      "the whole simulation")
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
    ({"time_limit": 5.0}, "the paper sets no time limit; this run abandons answers after -T time_limit=5 s"),
    ({"evidence_rule": False}, "without the oracle evidence dates this run's plan could not skip questions whose "
                               "evidence session has not happened yet"),
    ({"fmt": "mc-nl", "judge": "lexical"}, "the paper's answers are scored by rule (the option letter); this run's "
                                           "are judged by lexical"),
])
def test_no_paper_cell_beside_a_run_it_does_not_describe(change: dict, why: str) -> None:
    base = {"gen": "openai/gpt-4o-mini", "fmt": "mc", "memory": "session", "names": "generic", "retriever": BM25,
            "k": 10}
    refs, notes = paper_references(RunConditions(**{**base, **change}), {"friends": ours(0.5)})
    assert refs == []
    [note] = notes
    assert note.startswith(f"{NONE_SHOWN}the paper reports GPT-4o-mini with generic names in Table 3 (friends), not "
                           "under this run's conditions: ") and why in note


def test_an_open_answer_run_on_every_show_gets_no_cell_and_one_line() -> None:
    """D1: the cells are keyed by answer format and judge (and time limit...): an open-answer run with the lexical
    judge on the three shows gets no Table 3 / Appendix H cell, and one line, not one per table."""
    cond = RunConditions(gen="openai/gpt-4o-mini", fmt="open", judge="lexical", memory="session", names="generic",
                         retriever=BM25, k=10, time_limit=6.0)
    refs, notes = paper_references(cond, {s: ours(0.2857) for s in ("friends", "bigbang", "theoffice")})
    assert refs == []
    assert notes == [f"{NONE_SHOWN}the paper reports GPT-4o-mini with generic names in Table 3 (friends), Appendix H, "
                     "first table (The Big Bang Theory) (bigbang), Appendix H, second table (The Office) (theoffice), "
                     "not under this run's conditions: the paper's figures are multiple choice (-T format=mc); this "
                     "run answers open; the paper's answers are scored by rule (the option letter); this run's are "
                     "judged by lexical; the paper sets no time limit; this run abandons answers after -T "
                     "time_limit=6 s"]
    # the same run in multiple choice, without the time limit, gets each show's cell
    refs, notes = paper_references(RunConditions(**{**cond.__dict__, "fmt": "mc", "judge": "rule", "time_limit": None}),
                                   {s: ours(0.5) for s in ("friends", "bigbang", "theoffice")})
    assert [r.rows[0][:2] for r in refs] == [["friends", 52.11], ["bigbang", 52.54], ["theoffice", 60.92]]
    assert notes == []


def test_shows_and_models_the_paper_does_not_report_say_so() -> None:
    cond = RunConditions(gen="openai/gpt-4o-mini", fmt="mc", memory="session", names="generic", retriever=BM25, k=10)
    refs, notes = paper_references(cond, {"mini": ours(0.5)})
    assert refs == [] and notes == [(f"{NONE_SHOWN}the paper reports GPT-4o-mini only for shows/names other than "
                                     "these (mini; generic names)")]
    refs, notes = paper_references(RunConditions(**{**cond.__dict__, "gen": "mc-lexical"}), {"friends": ours(0.5)})
    assert refs == [] and notes == [f"{NONE_SHOWN}the paper reports no figures for mc-lexical (models are matched by "
                                    "exact name, paper.json's alias table)"]
    refs, _ = paper_references(RunConditions(**{**cond.__dict__, "names": "swapped"}), {"friends": ours(0.4)})
    assert refs[0].source.endswith("Appendix J (swapped names)") and refs[0].rows[0][1:3] == [45.08, 1.92]

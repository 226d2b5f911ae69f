"""CDR metrics on a hand-computed fixture (a repeated relevant id, a tie), the max-passage ranking, and the
paper's transcribed tables."""

from __future__ import annotations

import json
from math import log2
from pathlib import Path

import pytest

from ragjudge.bench.cdr import paper
from ragjudge.bench.cdr.data import CATEGORIES, load
from ragjudge.bench.cdr.metrics import METRICS, RANX, by_category, means, paper_name, score_queries, weighted_mean
from ragjudge.bench.cdr.ranking import first_depth, max_passage, search_conversations
from ragjudge.models import Passage


def write_data(folder: Path, corpus: dict, queries: dict, relevant: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, obj in (("corpus.json", corpus), ("queries.json", queries), ("relevant_docs.json", relevant)):
        (folder / name).write_text(json.dumps(obj, indent=2))
    return folder


def hit(unit: str, score: float) -> Passage:
    return Passage(id=unit, text="", score=score)


UNIT_OF = {"c2#0": "c2", "c1#0": "c1", "c1#1": "c1", "c4#0": "c4", "c3#0": "c3", "c5#0": "c5", "c6#0": "c6"}


def test_max_passage_keeps_each_conversation_once_at_its_best_unit_and_ties_in_retriever_order() -> None:
    hits = [hit("c2#0", 0.9), hit("c1#1", 0.9), hit("c1#0", 0.8), hit("c4#0", 0.7), hit("c3#0", 0.5)]
    ranked = max_passage(hits, UNIT_OF)
    assert [(r.id, r.score, r.unit) for r in ranked] == [("c2", 0.9, "c2#0"), ("c1", 0.9, "c1#1"),
                                                         ("c4", 0.7, "c4#0"), ("c3", 0.5, "c3#0")]
    assert [r.id for r in max_passage(hits, UNIT_OF, depth=2)] == ["c2", "c1"]


# Hand computation. q1: relevant c1, c3 (c1 listed twice); ranked c2 c1 c4 c3, c2 and c1 tied at 0.9 with c2
# first (the retriever's order is kept): relevant at ranks 2 and 4. q2: relevant c5 at rank 1. q3: relevant
# c7 c8 c9, none retrieved.
IDCG2 = 1 + 1 / log2(3)
Q1 = {"hit": [0, 1, 1, 1], "P": [0, 2 / 5, 2 / 10, 2 / 20], "R": [0, 1, 1, 1],
      "nDCG": [0] + [(1 / log2(3) + 1 / log2(5)) / IDCG2] * 3, "MRR": [0, 1 / 2, 1 / 2, 1 / 2]}
Q2 = {"hit": [1] * 4, "P": [1, 1 / 5, 1 / 10, 1 / 20], "R": [1] * 4, "nDCG": [1] * 4,
      "MRR": [1] * 4}
EXPECTED = {f"{family}@{k}": (Q1[family][i] + Q2[family][i] + 0) / 3
            for family in Q1 for i, k in enumerate((1, 5, 10, 20))}


def test_hand_computed_metrics_with_a_repeated_relevant_id_and_a_tie(tmp_path: Path) -> None:
    corpus = {c: f"user: {c}" for c in ("c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9")}
    data = load(write_data(tmp_path, corpus, {"q1": "a", "q2": "b", "q3": "c", "q4": "d"},
                           {"q1": ["c1", "c3", "c1"], "q2": ["c5"], "q3": ["c7", "c8", "c9"], "q4": []}))
    assert [q.id for q in data.queries] == ["q1", "q2", "q3"]  # q4 has no relevant conversation: left out
    assert data.queries[0].relevant == ["c1", "c3"] and data.queries[0].listed == 3
    assert (data.stats["raw_pairs"], data.stats["unique_pairs"], data.stats["duplicate_pairs"]) == (7, 6, 1)
    assert data.stats["queries_without_relevant"] == 1
    q1_hits = [hit("c2#0", 0.9), hit("c1#1", 0.9), hit("c1#0", 0.8), hit("c4#0", 0.7), hit("c3#0", 0.5)]
    rankings = {"q1": [r.as_dict() for r in max_passage(q1_hits, UNIT_OF)],
                "q2": [r.as_dict() for r in max_passage([hit("c5#0", 1.0), hit("c6#0", 0.2)], UNIT_OF)],
                "q3": [{"id": "c1", "score": 0.3, "unit": "c1#0"}]}
    per_query = score_queries(data.queries, rankings)
    assert per_query["q1"]["P@1"] == 0.0  # the tie went to c2, as the retriever ranked it
    assert per_query["q1"]["R@5"] == 1.0  # 2 of 2 unique relevant, not 2 of 3 listed
    assert set(per_query["q1"]) == set(METRICS)  # ragjudge's retrieval vocabulary, not ranx's names
    overall = means(list(per_query.values()))
    assert set(overall) == set(METRICS)
    for metric, value in EXPECTED.items():
        assert overall[metric] == pytest.approx(value, abs=1e-6), metric
    # a query the rankings lack scores zero
    assert score_queries(data.queries, {"q2": rankings["q2"]})["q1"]["hit@20"] == 0.0


def test_at_one_invariant_and_query_weighted_category_mean() -> None:
    per_query = {
        "a": dict(zip(METRICS, [1, 1, 1, 1, 1, .4, .2, .1, .2, 1, 1, 1, 1, .6, .7, .8, 1, 1, 1, 1], strict=True)),
        "b": dict(zip(METRICS, [0, 1, 1, 1, 0, .2, .1, .05, 0, .5, .5, .5, 0, .3, .3, .3, 0, .5, .5, .5], strict=True)),
        "c": {m: 0.0 for m in METRICS},
    }
    for scores in per_query.values():
        assert scores["hit@1"] == scores["P@1"] == scores["nDCG@1"] == scores["MRR@1"]
    groups = by_category(per_query, {"a": "Emotion & Feedback", "b": "Emotion & Feedback", "c": None})
    assert list(groups) == ["Emotion & Feedback", "unknown"] and groups["Emotion & Feedback"]["n"] == 2
    overall = means(list(per_query.values()))
    for metric in METRICS:
        assert weighted_mean(groups, metric) == pytest.approx(overall[metric], abs=1e-6)


def test_retrieval_goes_deeper_until_the_cut_off_holds_distinct_conversations() -> None:
    # conversation A has 40 units that outscore everything; nine others have one unit each
    conversation_of = {f"A#{i}": "A" for i in range(40)} | {f"{c}#0": c for c in "BCDEFGHIJ"}
    order = [*(f"A#{i}" for i in range(40)), *(f"{c}#0" for c in "BCDEFGHIJ")]
    asked: list[int] = []

    def search(queries: list[str], k: int) -> list[list[Passage]]:
        asked.append(k)
        return [[hit(u, 1.0 - i / 100) for i, u in enumerate(order[:k])] for _ in queries]

    assert first_depth(49, 10, 2) == 20
    ranked, searched = search_conversations(search, ["q"], conversation_of, depth=2, n_units=49, n_conversations=10)
    assert asked == [20, 40, 49] and searched == [49]
    assert [r.id for r in ranked[0]] == ["A", "B"]
    asked.clear()
    ranked, _ = search_conversations(search, ["q"], conversation_of, depth=20, n_units=49, n_conversations=10)
    assert len(ranked[0]) == 10  # every conversation ranked: the corpus is exhausted before the cut-off


def test_paper_tables_are_transcribed_consistently() -> None:
    t3_columns, t3 = paper.table("TABLE_3")
    assert len(t3) == 16 and len(t3_columns) == 11
    swapped = {("window", "Text-embedding-3-small"), ("window", "Stella_en_1.5B_v5")}  # documented in NOTES
    for offset, (setting, name) in enumerate((("turn", "TABLE_9"), ("window", "TABLE_10"),
                                              ("session", "TABLE_11"))):
        columns, rows = paper.table(name)
        assert columns == [paper_name(m) for m in METRICS]
        assert [paper_name(m) for m in METRICS] == [m.replace("hit_rate", "ACC").replace("precision", "P")
                                                    .replace("recall", "R").replace("ndcg", "NDCG").replace("mrr", "MRR")
                                                    for m in RANX]
        assert list(rows) == list(t3)
        for model, values in rows.items():
            got = dict(zip(columns, values, strict=True))
            assert got["ACC@1"] == got["P@1"] == got["NDCG@1"] == got["MRR@1"], (name, model)
            for family in ("ACC", "R", "MRR"):
                series = [got[f"{family}@{k}"] for k in (1, 5, 10, 20)]
                assert series == sorted(series), (name, model, family)
            overview = t3[model][3 * offset : 3 * offset + 3]
            full = [got["NDCG@10"], got["R@10"], got["P@10"]]
            if (setting, model) in swapped:  # Table 3 gives each the other's nDCG@10 and R@10
                other = dict(zip(columns, rows[next(m for _, m in swapped if m != model)], strict=True))
                assert overview == [other["NDCG@10"], other["R@10"], full[2]], model
            else:
                assert overview == full, (setting, model)
    columns, t12 = paper.table("TABLE_12")
    assert len(t12) == 16 and columns[0] == f"{CATEGORIES[0]} NDCG@10"
    _, session = paper.table("TABLE_11")
    share = paper.TABLE_2["category_share"]
    ndcg_at = paper.table("TABLE_11")[0].index("NDCG@10")
    for model, values in t12.items():  # Table 12 is (nearly) the session setting split by category
        weighted = sum(share[c] * values[3 * i] for i, c in enumerate(CATEGORIES))
        assert weighted == pytest.approx(session[model][ndcg_at], abs=0.02), model

"""Sentence retrieval's run evaluation and sample log on a hand-made run: the picks and each dialogue's figures over
the test halves (worked out here by hand), the best system's ranking as the contexts, a dialogue a system failed on
(left out of the evaluation, its error kept), a dialogue whose queries failed."""

from __future__ import annotations

import jsonschema
import pytest

from ragjudge.bench.sentence_retrieval import evaluation
from ragjudge.bench.sentence_retrieval.data import Dialogue, Split
from ragjudge.bench.sentence_retrieval.evaluation import Protocol
from ragjudge.bench.sentence_retrieval.samples import dialogue_sample, row
from ragjudge.engine.bench import SampleResult
from ragjudge.formats.samples import Sample, json_schema

IDS = ["d0", "d1", "d2", "d3"]
A_AP = {"x": [0.9, 0.9, 0.1, 0.1], "y": [0.2, 0.2, 0.8, 0.8]}
"""System a's AP per setting and dialogue (its nDCG@5 is half, its RR a third): x wins on d0, d1, y on d2, d3."""
SPLITS = [Split(val=["d0", "d1"], test=["d2", "d3"]), Split(val=["d2", "d3"], test=["d0", "d1"])]
QUERIES = {"queries": {"last_turn": [[1.0, "what now"]]}}


def _dialogue(i: int) -> Dialogue:
    return Dialogue.model_validate({
        "id": IDS[i], "subreddit": "askscience", "title": f"thread {i}",
        "context": [{"author_id": "u1", "body": "a question"}, {"author_id": None, "body": "what now"}],
        "candidates": [{"id": f"s{j}", "title": "Page", "body": f"sentence {j}", "label": int(j == 1)}
                       for j in range(3)], "type": "grounded" if i % 2 else "ungrounded"})


def _system(settings: dict[str, float], order: list[int]) -> dict:
    return {"settings": list(settings), "rankings": [order] * len(settings),
            "metrics": [[ap, ap / 2, ap / 3] for ap in settings.values()]}


def _results() -> list[SampleResult[Dialogue]]:
    results = []
    for i in range(4):
        a = _system({k: v[i] for k, v in A_AP.items()}, [1, 0, 2])
        a["rankings"][1] = [2, 1, 0]  # setting y ranks otherwise
        b = {"error": "b: the encoder failed"} if i == 3 else _system({"default": 0.5}, [0, 1, 2])
        results.append(SampleResult(_dialogue(i), dict(QUERIES), {"a": a, "b": b}))
    return results


def test_the_picks_and_each_dialogues_figures_over_the_test_halves() -> None:
    results = _results()
    evaluated = evaluation.evaluate(results, ["a", "b"], Protocol(SPLITS, "splits.json", "MAP"))
    assert evaluated is not None and evaluated.excluded == 1 and [r.sample.id for r in evaluated.ok] == IDS[:3]
    assert evaluated.masks.dropped == 2  # d3, which b failed on, leaves both halves it was in
    a, b = evaluated.scored
    # split 1 picks x on d0, d1 (0.9) and tests it on d2 (0.1); split 2 picks y on d2 (0.8), tests it on d0, d1 (0.2)
    assert a.outcome.picks.tolist() == [0, 1] and a.mean("MAP") == pytest.approx(0.15) and b.mean("MAP") == 0.5
    assert evaluated.best == "b" and a.settings[a.modal_pick] == "x"  # a tie between picks: the first in the grid
    dialogues = evaluation.dialogue_figures(evaluated)
    assert "d3" not in dialogues
    figures = dialogues["d0"]
    assert figures["best"] == "b" and figures["test_halves"] == 1
    assert figures["systems"]["a"]["pick"] == "x"
    assert figures["systems"]["a"]["tested"] == pytest.approx({"AP": 0.2, "nDCG@5": 0.1, "RR": 0.2 / 3})
    assert dialogues["d2"]["systems"]["a"]["tested"]["AP"] == pytest.approx(0.1)
    assert row(results[2], ["a", "b"], dialogues["d2"])["a AP"] == pytest.approx(0.1)
    assert all(set(r.scores) == {"a", "b"} for r in results)  # the run's figures are not written on its results


def test_the_sample_log_records_of_a_hand_made_run() -> None:
    results = _results()
    evaluated = evaluation.evaluate(results, ["a", "b"], Protocol(SPLITS, "splits.json", "MAP"))
    assert evaluated is not None
    dialogues = evaluation.dialogue_figures(evaluated)
    schema = json_schema()
    first = dialogue_sample(results[0], ["a", "b"], dialogues["d0"])
    jsonschema.validate(first.to_dict(), schema)
    assert [(m.role, m.content) for m in first.input] == [("u1", "a question"), ("user", "what now")]
    assert first.question == "what now" and first.output is None and first.target is None
    assert [p.id for p in first.target_contexts] == ["s1"] and first.target_contexts[0].score == 1.0
    assert [p.id for p in first.contexts] == ["s0", "s1", "s2"]  # b, the best system, keeps the initial order
    assert [p.metadata["initial_rank"] for p in first.contexts] == [1, 2, 3]
    assert {k: s.value for k, s in first.scores.items()} == pytest.approx({
        "MAP": 0.5, "nDCG@5": 0.25, "MRR": 0.5 / 3, "MAP[a]": 0.2, "nDCG@5[a]": 0.1, "MRR[a]": 0.2 / 3,
        "MAP[b]": 0.5, "nDCG@5[b]": 0.25, "MRR[b]": 0.5 / 3})
    assert first.scores["MAP"].details == {"system": "b"}
    assert first.labels == {"type": "ungrounded", "system": ["a", "b"]}
    assert first.metadata == {"subreddit": "askscience", "title": "thread 0", "best_system": "b",
                              "picks": {"a": "x", "b": "default"}, "test_halves": 1,
                              "rankings": {"a": ["s1", "s0", "s2"]}, "queries": QUERIES["queries"]}
    # b failed on d3: its error, a's figures unknown (d3 left every half), no ranking chosen
    failed = dialogue_sample(results[3], ["a", "b"], dialogues.get("d3"))
    jsonschema.validate(failed.to_dict(), schema)
    assert {k: (s.value, s.error) for k, s in failed.scores.items()} == {"MAP[b]": (None, "b: the encoder failed")}
    assert failed.errors() == {"MAP[b]": "b: the encoder failed"} and failed.contexts == []
    assert failed.labels == {"type": "grounded", "system": ["a", "b"]} and "best_system" not in failed.metadata
    # the queries themselves failed: the system's error, no score
    broken = SampleResult(_dialogue(1), {"error": "rewrite: the model refused"},
                          {"a": {"error": "no output to score"}, "b": {"error": "no output to score"}})
    sample = dialogue_sample(broken, ["a", "b"], None)
    assert sample.error == "rewrite: the model refused" and sample.scores == {} and "queries" not in sample.metadata
    assert Sample.model_validate(sample.to_dict()) == sample

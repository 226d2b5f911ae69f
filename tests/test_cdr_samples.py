"""CDR's sample log on hand-made results: a ranked query, a query whose search failed, one whose scoring failed, a
relevant conversation missing from the corpus, and conversation titles (the first user message, shortened)."""

from __future__ import annotations

import jsonschema

from ragjudge.bench.cdr.data import CdrQuery
from ragjudge.bench.cdr.metrics import METRICS
from ragjudge.bench.cdr.samples import EXCERPT, query_sample, row, title
from ragjudge.engine.bench import SampleResult
from ragjudge.formats.samples import json_schema

CORPUS = {"c1": "user: My order is late.\nassistant: Sorry to hear that.",
          "c2": "assistant: Hello!\nuser: " + "x" * 300, "c3": "user:\nuser: Second try\nwith two lines"}
UNITS = {"c1#session-0": CORPUS["c1"], "c2#message-1": "user: " + "x" * 300 + " " + "y" * 400}
QUERY = CdrQuery(id="q1", text="Conversation where the user complains", relevant=["c1", "gone"], listed=3,
                 category="Emotion & Feedback")
RANKING = {"ranking": [{"id": "c1", "score": 2.5, "unit": "c1#session-0"},
                       {"id": "c2", "score": 1.0, "unit": "c2#message-1"}], "units_ranked": 4, "seconds": 0.01}


def test_a_ranked_query() -> None:
    figures = {m: 0.5 for m in METRICS}
    sample = query_sample(SampleResult(QUERY, RANKING, {"metrics": {"value": 0.5, "metrics": figures}}), CORPUS, UNITS,
                          categorised=True)
    jsonschema.validate(sample.to_dict(), json_schema())
    assert sample.input == QUERY.text and sample.output is None and sample.target is None and sample.error is None
    assert [(p.id, p.title, p.score, p.metadata) for p in sample.target_contexts] == [
        ("c1", "My order is late.", 1.0, {}), ("gone", None, 1.0, {"in_corpus": False})]
    first, second = sample.contexts
    assert (first.id, first.title, first.text, first.score, first.metadata) == (
        "c1", "My order is late.", CORPUS["c1"], 2.5, {"unit": "c1#session-0"})
    assert second.title == "x" * 99 + "…" and len(second.text) == EXCERPT and second.text.endswith("y…")
    assert {k: s.value for k, s in sample.scores.items()} == figures and list(sample.scores) == list(METRICS)
    assert sample.labels == {"category": "Emotion & Feedback"}
    assert sample.metadata == {"listed": 3, "units_ranked": 4, "seconds": 0.01}
    uncategorised = query_sample(SampleResult(QUERY.model_copy(update={"category": None}), RANKING,
                                              {"metrics": {"value": 0.5, "metrics": figures}}), CORPUS, UNITS,
                                 categorised=True)
    assert uncategorised.labels == {"category": "unknown"}  # as the summary's breakdown groups it
    assert query_sample(SampleResult(QUERY, RANKING, {"metrics": {"value": 0.5, "metrics": figures}}), CORPUS, UNITS,
                        categorised=False).labels == {}
    ranked = row(SampleResult(QUERY, RANKING, {"metrics": {"value": 0.5, "metrics": figures}}))
    assert ranked["top_conversation"] == "c1" and ranked["nDCG@10"] == 0.5


def test_failures_keep_their_errors() -> None:
    searched = query_sample(SampleResult(QUERY, {"error": "index gone"}, {"metrics": {"error": "no output to score"}}),
                            CORPUS, UNITS, categorised=False)
    jsonschema.validate(searched.to_dict(), json_schema())
    assert searched.error == "index gone" and searched.scores == {} and searched.contexts == []
    assert searched.errors() == {"solve": "index gone"} and searched.metadata == {"listed": 3}
    scored = query_sample(SampleResult(QUERY, RANKING, {"metrics": {"error": "ranx failed"}}), CORPUS, UNITS,
                          categorised=False)
    assert scored.errors() == {"nDCG@10": "ranx failed"} and len(scored.contexts) == 2


def test_titles() -> None:
    assert title(CORPUS["c2"]) == "x" * 99 + "…"  # the first user message, not the first message
    assert title(CORPUS["c3"]) == "Second try"  # an empty message is skipped, the first line kept
    assert title("no marker at all\nuser: hi") == "hi" and title("assistant: only me") == "only me"
    assert title("") is None

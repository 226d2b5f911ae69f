"""The sample log (`ragjudge.sample/1`): the published schema is the model's, `ragjudge schema sample` prints it,
a record round-trips, a failed score keeps its error and never a number, and the default mapping reads a plug-in's
samples by convention."""

from __future__ import annotations

import json
import math
from pathlib import Path

import jsonschema
import pytest

from conftest import REPO, run_cli
from ragjudge.engine.sample_log import default_sample
from ragjudge.errors import InputError
from ragjudge.formats.samples import SCHEMA_ID, Message, Passage, Sample, Score, iter_samples, json_schema, \
    write_samples


def test_the_published_schema_is_the_models() -> None:
    published = json.loads((REPO / "docs" / "sample.schema.json").read_text(encoding="utf-8"))
    assert published == json_schema(), "docs/sample.schema.json is stale: `ragjudge schema sample > docs/...`"


def test_schema_command_prints_it(monkeypatch, capsys) -> None:
    code, out, err = run_cli(["schema", "sample"], monkeypatch, capsys)
    assert code == 0, err
    assert json.loads(out) == json_schema() and json.loads(out)["$id"] == SCHEMA_ID
    code, _, err = run_cli(["schema", "samples"], monkeypatch, capsys)
    assert code == 2 and err == "error: unknown schema 'samples' (available: summary, sample, labels)\n"


def test_a_sample_round_trips_and_validates(tmp_path: Path) -> None:
    sample = Sample(id="c1::2", input=[Message(role="user", content="Why is Mars red?"),
                                      Message(role="assistant", content="Rust."),
                                      Message(role="user", content="And its moons?")],
                    target=["Phobos and Deimos."], target_contexts=[Passage(id="d1", score=1)],
                    output="Two: Phobos and Deimos.", contexts=[Passage(id="d1", text="…", score=12.5)],
                    scores={"RB_llm": Score(value=0.75, judge="rb_llm", members=[Score(value=1.0, model="a"),
                                                                                 Score(value=0.5, model="b")]),
                            "RL_F": Score(error="unparsable judge answer", raw="maybe?")},
                    labels={"domain": "astronomy", "question_type": ["Factoid", "Summary"]}, metadata={"turn": 2})
    path = tmp_path / "samples.jsonl"
    write_samples(path, [sample])
    line = json.loads(path.read_text())
    assert list(line)[0] == "schema" and line["schema"] == SCHEMA_ID
    jsonschema.validate(line, json_schema())
    [(number, read)] = list(iter_samples(path))
    assert number == 1 and read == sample
    assert read.question == "And its moons?" and read.reference == "Phobos and Deimos."
    assert read.values() == {"RB_llm": 0.75} and read.errors() == {"RL_F": "unparsable judge answer"}


def test_a_score_is_never_a_number_it_is_not() -> None:
    with pytest.raises(ValueError, match="finite"):
        Score(value=math.nan)
    assert Score.of({"value": True}).value == 1.0
    assert Score.of({"value": "yes"}).label == "yes" and Score.of({"value": "yes"}).value is None
    failed = Score.of({"error": "timeout", "raw": "<html>", "value": None, "latency": 2.5, "extra": [1]})
    assert (failed.value, failed.error, failed.raw, failed.latency, failed.details) == \
        (None, "timeout", "<html>", 2.5, {"extra": [1]})


def test_a_bad_line_names_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "samples.jsonl"
    path.write_text(json.dumps({"schema": SCHEMA_ID, "id": "a", "input": "q"}) + "\n" +
                    json.dumps({"schema": SCHEMA_ID, "id": "b", "input": "q", "contexts": [{"id": 3}]}) + "\n")
    with pytest.raises(InputError) as info:
        list(iter_samples(path))
    assert str(info.value) == f"{path}:2: field 'contexts[0].id': must be text, got a number"


def test_the_default_mapping_reads_a_plugins_samples_by_convention() -> None:
    class Question:  # a plug-in's own sample type
        def __init__(self) -> None:
            self.id, self.question, self.answer, self.category = "q1", "How do I return a gift?", "Within 30 days.", "returns"

    sample = default_sample("q1", Question(), {"answer": "Returns are free within 30 days.", "model": "lookup",
                                               "passages": [{"id": "faq-3", "text": "Returns…", "score": 2.0}]},
                            {"mentions": {"value": 1.0}, "judge": {"error": "timed out"}}, breakdowns=["category"])
    assert (sample.input, sample.output, sample.target) == \
        ("How do I return a gift?", "Returns are free within 30 days.", "Within 30 days.")
    assert [p.id for p in sample.contexts] == ["faq-3"] and sample.labels == {"category": "returns"}
    assert sample.values() == {"mentions": 1.0} and sample.errors() == {"judge": "timed out"}
    assert sample.metadata == {"output": {"model": "lookup"}}

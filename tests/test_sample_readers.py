"""Readers read samples: `export` (InspectorRAGet, MTRAGEval B/C) and `correlate` take each run's `Sample`s as they
are logged, and an official MTRAG results file (no sample log beside it) is converted to Samples once
(`formats.mtrag_results.sample_from_result`), so every reader has one input type."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragjudge.correlation.dataset import Dataset, ItemKey, add_results
from ragjudge.errors import InputError, UsageError
from ragjudge.formats.inspectorraget_export import from_samples
from ragjudge.formats.mtrag_results import sample_from_result
from ragjudge.formats.mtrageval import generation_lines
from ragjudge.formats.samples import Passage, Sample, Score, write_samples

RESULT = {
    "task_id": "c1<::>2", "conversation_id": "c1", "turn": 2, "Collection": "mt-rag-clapnq-elser-512-100-20240503",
    "Answerability": ["ANSWERABLE"], "Question Type": ["Factoid"], "Standalone Type": "yes",
    "input": [{"speaker": "user", "text": "Who?"}, {"speaker": "agent", "text": "Ada."},
              {"speaker": "user", "text": "When?"}],
    "targets": [{"speaker": "agent", "text": "In 1843."}],
    "contexts": [{"document_id": "d1", "text": "Ada wrote in 1843.", "title": "Ada", "score": 12.5,
                  "origin": "retrieved"}],
    "predictions": [{"text": "1843."}],
    "metrics": {"Recall": [0.75], "RB_llm": [0.5], "idk": ["1"], "broken": [None]},
    "ragjudge": {"judges": {"rb_llm": {"metric": "RB_llm", "model": "panel", "members": [
        {"model": "m1", "value": 0.4}, {"model": "m2", "value": 0.6}]}},
        "setting": "rag", "reference_contexts": [{"document_id": "d1", "text": "Ada wrote in 1843."}]},
}


def test_an_official_results_line_is_the_sample_the_bench_would_log() -> None:
    sample = sample_from_result(json.loads(json.dumps(RESULT)), file="r.jsonl", line=3)
    assert sample.id == "c1<::>2" and sample.question == "When?" and sample.output == "1843."
    assert [m.role for m in sample.input] == ["user", "assistant", "user"]
    assert [(p.id, p.score, p.title, p.metadata) for p in sample.contexts] == [
        ("d1", 12.5, "Ada", {"origin": "retrieved"})]
    assert [p.id for p in sample.target_contexts] == ["d1"]
    assert sample.values() == {"Recall": 0.75, "RB_llm": 0.5, "idk": 1.0}  # a value that is no number is no score
    panel = sample.scores["RB_llm"]
    assert (panel.judge, panel.model, [(m.model, m.value) for m in panel.members]) == (
        "rb_llm", "panel", [("m1", 0.4), ("m2", 0.6)])
    assert sample.scores["Recall"].judge is None
    assert sample.metadata["setting"] == "rag"
    assert set(sample.metadata["record"]) == {"task_id", "conversation_id", "turn", "Collection", "Answerability",
                                              "Question Type", "Standalone Type", "targets"}


def test_an_official_results_line_without_task_id_names_the_field() -> None:
    with pytest.raises(InputError) as exc:
        sample_from_result({"metrics": {}}, file="r.jsonl", line=4)
    assert (exc.value.file, exc.value.line, exc.value.field) == ("r.jsonl", 4, "task_id")


@pytest.mark.parametrize(("ragjudge", "field"), [
    ([], "ragjudge"), ({"judges": [1]}, "ragjudge.judges"), ({"judges": {"rb_llm": 1}}, "ragjudge.judges.rb_llm"),
    ({"judges": {"rb_llm": {"metric": "RB_llm", "members": [1]}}}, "ragjudge.judges.rb_llm.members")])
def test_a_malformed_judge_verdict_names_its_field(ragjudge: object, field: str) -> None:
    with pytest.raises(InputError) as exc:
        sample_from_result({**RESULT, "ragjudge": ragjudge}, file="r.jsonl", line=2)
    assert (exc.value.file, exc.value.line, exc.value.field) == ("r.jsonl", 2, field)


def _plain() -> Sample:
    """A sample of a bench with no task record of its own (a RAG record judged by `ragjudge judge`)."""
    return Sample(id="q1", input="What is X?", target="X is Y.", output="Y.",
                  contexts=[Passage(id="p1", text="X is Y.", title="")],
                  scores={"faithfulness": Score(value=1.0, judge="faithfulness", label="yes", model="gpt"),
                          "rouge": Score(value=0.5), "failed": Score(error="timeout")})


def test_inspectorraget_export_reads_samples_as_logged() -> None:
    data = from_samples([("m", [_plain()])], name="x")
    task, = data.tasks
    assert task.task_id == "q1" and task.input == [{"speaker": "user", "text": "What is X?"}]
    assert task.targets == [{"text": "X is Y."}] and [c.document_id for c in task.contexts] == ["p1"]
    assert task.enrichments == {"Turn": 1, "conversation_id": "q1"}  # its own conversation, one user turn
    assert [(d.document_id, d.title) for d in data.documents] == [("p1", None)]
    evaluation, = data.evaluations
    assert evaluation.model_response == "Y." and set(evaluation.annotations) == {"faithfulness", "rouge"}
    metrics = {m.name: m for m in data.metrics}
    assert metrics["faithfulness"].type == "categorical"  # the judge's word label
    assert "from judge faithfulness (gpt)" in metrics["faithfulness"].description
    assert metrics["rouge"].type == "numerical"


def test_official_results_and_the_sample_log_export_alike() -> None:
    from_file = sample_from_result(json.loads(json.dumps(RESULT)), file="r.jsonl", line=1)
    logged = Sample.model_validate(from_file.to_dict())
    assert from_samples([("m", [from_file])], name="x") == from_samples([("m", [logged])], name="x")
    members = from_samples([("m", [logged])], name="x").evaluations[0].annotations["RB_llm"]
    assert {r: a.value for r, a in members.items()} == {"m1": 0.4, "m2": 0.6}


def test_mtrageval_generation_lines_read_samples(tmp_path: Path) -> None:
    sample = sample_from_result(json.loads(json.dumps(RESULT)), file="r.jsonl", line=1)
    line, = generation_lines([(1, sample)], "C", tmp_path / "r.jsonl")
    assert line == {"task_id": "c1<::>2", "Collection": RESULT["Collection"], "conversation_id": "c1", "turn": 2,
                    "input": RESULT["input"], "predictions": [{"text": "1843."}],
                    "contexts": [{"document_id": "d1", "score": 12.5, "text": "Ada wrote in 1843.", "title": "Ada"}]}
    with pytest.raises(UsageError, match="task B is generation from the reference passages alone"):
        generation_lines([(1, sample)], "B", tmp_path / "r.jsonl")
    with pytest.raises(InputError) as exc:
        generation_lines([(7, sample.model_copy(update={"output": None}))], "C", tmp_path / "r.jsonl")
    assert (exc.value.line, exc.value.field) == (7, "predictions")
    plain, = generation_lines([(1, _plain())], "B", tmp_path / "r.jsonl")
    assert plain["contexts"] == [{"document_id": "p1", "score": 1.0, "text": "X is Y."}]  # no score: the reference's


def test_correlate_reads_a_sample_log(tmp_path: Path) -> None:
    log = tmp_path / "run.samples.jsonl"
    write_samples(log, [sample_from_result(json.loads(json.dumps(RESULT)), file="r.jsonl", line=1), _plain()])
    ds = Dataset()
    assert add_results(ds, log, "m") == 0  # no human item to join
    key = ItemKey("c1::2", "m")
    assert {n: m.values for n, m in ds.judges.items()} == {
        "Recall": {key: 0.75}, "RB_llm": {key: 0.5}, "idk": {key: 1.0}, "faithfulness": {ItemKey("q1", "m"): 1.0},
        "rouge": {ItemKey("q1", "m"): 0.5}}
    assert ds.judges["RB_llm"].ratings == {key: {"m1": 0.4, "m2": 0.6}}
    fields = ds.items[key].fields
    assert (fields["conversation_id"], fields["turn"], fields["answerability"], fields["standalone_type"]) == (
        ("c1",), ("2",), ("ANSWERABLE",), ("yes",))
    assert ds.items[ItemKey("q1", "m")].fields["turn"] == ("1",)

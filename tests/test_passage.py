"""One Passage model (issue 42, item 1): retrievers, tasks, judges and the sample log share `models.Passage`, each file
keeping its own shape, and every reader refuses what it refused when there were three passage classes (same file,
line, field and wording): a task's passage needs an id and a text, a sample log's passage has no field of MTRAG's."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

import ragjudge
from conftest import run_cli
from ragjudge.errors import InputError
from ragjudge.formats import samples
from ragjudge.formats.mtrag import read_tasks
from ragjudge.formats.rag_records import read_rag_records
from ragjudge.models import Passage, Prediction, Task, Turn
from ragjudge.retrieval.base import PassageStore

PACKAGE = Path(__file__).resolve().parents[1] / "ragjudge"
MTRAG_PASSAGE = {"document_id": "d1", "text": "Mars has two moons.", "title": "Mars", "score": 0.5, "url": "u"}
TASK = {"task_id": "c::1", "input": [{"speaker": "user", "text": "Why is Mars red?"}],
        "contexts": [{"document_id": "d1", "text": "Rust."}], "predictions": [{"text": "Rust."}]}
ROW = {"id": "q1", "question": "Why is Mars red?", "answer": "Rust.", "contexts": ["Iron oxide."]}
SAMPLE = {"schema": samples.SCHEMA_ID, "id": "a", "input": "Why is Mars red?"}


def test_one_passage_class_serves_the_sample_log_and_the_tasks() -> None:
    assert samples.Passage is Passage
    defined = [path.relative_to(PACKAGE).as_posix() for path in PACKAGE.rglob("*.py")
               for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
               if isinstance(node, ast.ClassDef) and node.name == "Passage"]
    assert defined == ["models.py"]


def test_an_mtrag_passage_keeps_its_shape_where_it_is_written(tmp_path: Path) -> None:
    p = Passage.of_record(MTRAG_PASSAGE)
    assert (p.id, p.document_id, p.metadata) == ("d1", "d1", {"url": "u"})
    assert p.to_record() == MTRAG_PASSAGE and list(p.to_record()) == list(MTRAG_PASSAGE)
    # a task's dump (what its fingerprint hashes) and a prediction's (what journals keep) hold MTRAG's record
    task = Task(task_id="c::1", conversation_id="c", turn=1, input=[Turn(speaker="user", text="q")], contexts=[p])
    assert task.model_dump(mode="json")["contexts"] == [{**MTRAG_PASSAGE}]
    assert Task.model_validate(task.model_dump()) == task
    bare = task.model_copy(update={"contexts": [Passage(id="d2", text="t")]})  # unset fields hashed as null, as ever
    assert bare.model_dump(mode="json")["contexts"] == [{"document_id": "d2", "text": "t", "title": None, "score": None}]
    assert bare.model_dump(exclude_none=True)["contexts"] == [{"document_id": "d2", "text": "t"}]
    journaled = Prediction(task_id="c::1", text="a", contexts=[p]).model_dump(exclude_none=True)
    assert journaled["contexts"] == [MTRAG_PASSAGE] and Prediction.model_validate(journaled).contexts == [p]
    # the sample log writes the passage's own fields, and reads them back as the same passage
    sample = samples.Sample(id="c::1", input="q", contexts=[p])
    assert sample.to_dict()["contexts"] == [{"id": "d1", "text": "Mars has two moons.", "title": "Mars", "score": 0.5,
                                             "metadata": {"url": "u"}}]
    assert samples.Sample.model_validate(sample.to_dict()).contexts == [p]
    # the index's passage store keeps MTRAG's record too
    PassageStore([p]).save(tmp_path)
    assert json.loads((tmp_path / PassageStore.FILE).read_text()) == MTRAG_PASSAGE
    assert PassageStore.load(tmp_path).passages == [p]


def test_a_tasks_passage_needs_an_id_and_a_text() -> None:
    def task(contexts: list[Any]) -> Task:
        return Task(task_id="c::1", conversation_id="c", turn=1, input=[], contexts=contexts)

    for passage in (Passage(id="d1"), Passage(text="t"), {"document_id": "d1"}, {"text": "t"}):
        with pytest.raises(ValidationError, match="a task's passage needs an id and a text"):
            task([passage])
        with pytest.raises(ValidationError, match="a task's passage needs an id and a text"):
            Prediction(task_id="c::1", text="a", contexts=[passage])
    with pytest.raises(ValidationError):
        task([{"document_id": "d1", "text": 7}])
    assert task([{"id": "d1", "text": ""}]).contexts == [Passage(id="d1", text="")]


@pytest.mark.parametrize(("context", "error"), [
    ({"text": "Rust."}, "field 'contexts[0].document_id': is missing"),
    ({"document_id": "", "text": "Rust."}, "field 'contexts[0].document_id': is missing"),
    ({"document_id": "d1"}, "field 'contexts[0].text': is missing or not a string"),
    ({"document_id": "d1", "text": 7}, "field 'contexts[0].text': is missing or not a string"),
])
def test_the_mtrag_reader_refuses_a_passage_without_an_id_or_a_text(tmp_path: Path, context: dict[str, Any],
                                                                    error: str) -> None:
    path = tmp_path / "tasks.jsonl"
    bad = {**TASK, "task_id": "c::2", "contexts": [context]}
    path.write_text(json.dumps(TASK) + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_tasks(path)
    assert str(info.value) == f"{path}:2: {error}"
    with pytest.raises(InputError) as info:  # the same rows given in memory
        ragjudge.evaluate([TASK, bad], judges=["idk_lexical"], show_progress=False)
    assert str(info.value) == f"data[1] (task_id 'c::2'): {error}"


@pytest.mark.parametrize(("context", "error"), [
    ({"id": "p1"}, "field 'contexts[0].text': must be text, got null"),
    ({"id": "p1", "text": 5}, "field 'contexts[0].text': must be text, got a number"),
    ({"id": True, "text": "t"}, "field 'contexts[0].id': must be text, got true/false"),
    ({"id": "p1", "text": "t", "title": 5}, "field 'contexts[0].title': must be text, got a number"),
    ({"id": "p1", "text": "t", "score": "high"}, "field 'contexts[0].score': must be a number, got a string"),
])
def test_the_record_reader_refuses_a_bad_passage(tmp_path: Path, context: dict[str, Any], error: str) -> None:
    path = tmp_path / "rows.jsonl"
    bad = {**ROW, "id": "q2", "contexts": [context]}
    path.write_text(json.dumps(ROW) + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_rag_records(path)
    assert str(info.value) == f"{path}:2: {error}"
    with pytest.raises(InputError) as info:
        ragjudge.evaluate([ROW, bad], judges=["idk_lexical"], show_progress=False)
    assert str(info.value) == f"data[1]: {error}"


def test_a_bad_passages_title_is_one_line_from_the_cli(tmp_path: Path, monkeypatch, capsys) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps({**ROW, "contexts": [{"id": "p1", "text": "t", "title": 5}]}) + "\n", encoding="utf-8")
    code, _, err = run_cli(["judge", str(path), "--judges", "idk_lexical", "--out", str(tmp_path / "run")],
                           monkeypatch, capsys)
    assert code == 2 and err == f"error: {path}:1: field 'contexts[0].title': must be text, got a number\n"


@pytest.mark.parametrize(("context", "error"), [
    ({"document_id": "d1"}, "field 'contexts[0].document_id': is not a field of a sample record"),
    ({"id": "d1", "url": "u"}, "field 'contexts[0].url': is not a field of a sample record"),
    ({"id": "d1", "text": 5}, "field 'contexts[0].text': must be text, got a number"),
    ({"id": 3}, "field 'contexts[0].id': must be text, got a number"),
    ({"id": "d1", "score": "high"}, "field 'contexts[0].score': must be a number, got a string"),
])
def test_the_sample_log_reader_refuses_a_passage_that_is_not_its_own(tmp_path: Path, context: dict[str, Any],
                                                                     error: str) -> None:
    path = tmp_path / "samples.jsonl"
    path.write_text(json.dumps(SAMPLE) + "\n" + json.dumps({**SAMPLE, "id": "b", "target_contexts": [{"id": "d1"}],
                                                             "contexts": [context]}) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        list(samples.iter_samples(path))
    assert str(info.value) == f"{path}:2: {error}"


def test_a_plain_records_passages_are_the_samples_as_read(tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({**ROW, "contexts": [{"id": "p1", "text": "t", "page": 3, "note": None}]}) + "\n",
                    encoding="utf-8")
    [record] = read_rag_records(rows)
    assert record.contexts == [Passage(id="p1", text="t", metadata={"page": 3})]
    assert record.item().contexts[0].to_record() == {"document_id": "p1", "text": "t", "page": 3}

"""One Passage model (issue 42, item 1): retrievers, tasks, judges and the sample log share `models.Passage`, read
from any shape benches keep and written in each file's own shape, so no bench converts between passage models."""

from __future__ import annotations

import ast
from pathlib import Path

from ragjudge.formats import samples
from ragjudge.formats.rag_records import read_rag_records
from ragjudge.models import Passage, Task, Turn

PACKAGE = Path(__file__).resolve().parents[1] / "ragjudge"
MTRAG_PASSAGE = {"document_id": "d1", "text": "Mars has two moons.", "title": "Mars", "score": 0.5, "url": "u"}


def test_the_sample_log_and_the_tasks_share_one_passage_model() -> None:
    assert samples.Passage is Passage
    defined = [path.relative_to(PACKAGE).as_posix() for path in PACKAGE.rglob("*.py")
               for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
               if isinstance(node, ast.ClassDef) and node.name == "Passage"]
    assert defined == ["models.py"]


def test_an_mtrag_passage_keeps_its_shape_where_it_is_written() -> None:
    p = Passage.model_validate(MTRAG_PASSAGE)
    assert (p.id, p.document_id, p.metadata) == ("d1", "d1", {"url": "u"})
    assert p.to_record() == MTRAG_PASSAGE and list(p.to_record()) == list(MTRAG_PASSAGE)
    # a task's dump (what its fingerprint hashes, what predictions journal) keeps MTRAG's record
    task = Task(task_id="c::1", conversation_id="c", turn=1, input=[Turn(speaker="user", text="q")], contexts=[p])
    assert task.model_dump(mode="json")["contexts"] == [MTRAG_PASSAGE]
    # the sample log writes the passage's own fields, and reads them back as the same passage
    sample = samples.Sample(id="c::1", input="q", contexts=[p])
    assert sample.to_dict()["contexts"] == [{"id": "d1", "text": "Mars has two moons.", "title": "Mars", "score": 0.5,
                                             "metadata": {"url": "u"}}]
    assert samples.Sample.model_validate(sample.to_dict()).contexts == [p]


def test_beir_and_plain_ids_read_as_the_id() -> None:
    assert Passage.model_validate({"_id": "b1", "text": "t"}).id == "b1"
    assert Passage(id="x", text="t").document_id == "x"
    assert Passage.model_validate({"document_id": "d", "source": None}).metadata == {}


def test_a_plain_records_passages_are_the_samples_as_read(tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"id": "r1", "question": "q", "answer": "a", "contexts": [{"id": "p1", "text": "t", "page": 3}]}\n',
                    encoding="utf-8")
    [record] = read_rag_records(rows)
    assert record.contexts == [Passage(id="p1", text="t", metadata={"page": 3})]
    assert record.item().contexts[0].to_record() == {"document_id": "p1", "text": "t", "page": 3}

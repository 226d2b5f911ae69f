"""Reading MTRAG files as published, and one-line errors for bad ones."""

from __future__ import annotations

import json
import math
import runpy
from pathlib import Path

import pytest

from conftest import MINI, REPO
from ragjudge.errors import InputError
from ragjudge.formats.jsonl import JsonlAppender, read_jsonl
from ragjudge.formats.mtrag import read_predictions, read_tasks
from ragjudge.models import domain_of

MTRAG = REPO / "tests" / "fixtures" / "mtrag"
"""Our own files in the published MTRAG formats (tests/fixtures/mtrag/README.md)."""


def test_reads_published_predictions_with_nan_and_double_colon_ids() -> None:
    path = MTRAG / "generation" / "responses-10.jsonl"
    assert "NaN" in path.read_text()  # written as the published file writes it, which json.loads accepts
    pairs = read_predictions(path)
    assert len(pairs) == 10
    first, pred = pairs[0]
    assert first.task_id == "3f9c2a7e51b04d6c8e2f71a09b5d4c13::1"
    assert first.answerability == "UNANSWERABLE"
    assert math.isnan(first.raw["Multi-Turn"]) and first.multi_turn is None  # NaN in the file
    assert "Collection" not in first.raw and first.domain == "clapnq"  # from a lower-case `collection`
    assert first.question == "when does the ferry to kestrel island leave today"
    assert pred.text.startswith("I'm sorry, but I don't have today's ferry timetable")
    third = pairs[2][0]
    assert third.turn == 3 and len(third.history) == 4 and third.multi_turn == "Clarification"
    assert third.enrichments["dataset"] == "ragjudge fixtures (hand-written)"  # unknown fields kept
    assert len(third.contexts) == 3
    assert {p.document_id for p in third.contexts} == {c["document_id"] for c in third.raw["contexts"]}
    assert [t.domain for t, _ in pairs].count("clapnq") == 8 and pairs[-1][0].domain == "govt"


def test_reads_task_inputs_with_capital_collection() -> None:
    tasks = read_tasks(MTRAG / "generation" / "taskb_input.jsonl")
    assert len(tasks) == 10 and all("Collection" in t.raw and "collection" not in t.raw for t in tasks)
    assert tasks[0].collection == "mt-rag-clapnq-elser-512-100-20240503"
    assert tasks[0].answerability is None and tasks[0].targets == []
    assert all(t.answerability is None and t.targets == [] for t in tasks) and tasks[2].contexts


def test_the_mtrag_fixtures_are_what_make_mtrag_writes() -> None:
    """tests/fixtures/mtrag is written by its make_mtrag.py: edit that and run it, rather than the files."""
    written = runpy.run_path(str(MTRAG / "make_mtrag.py"))["files"]()  # run_path: no __pycache__ in fixtures/
    assert set(written) == {p.relative_to(MTRAG).as_posix() for p in MTRAG.rglob("*") if p.suffix in (".jsonl", ".tsv")}
    for name, text in written.items():
        assert (MTRAG / name).read_text(encoding="utf-8") == text, f"{name}: run python {MTRAG / 'make_mtrag.py'}"


def test_mini_dataset_mixes_id_separators_and_collection_keys() -> None:
    tasks = read_tasks(MINI)
    assert len(tasks) == 40 and len({t.conversation_id for t in tasks}) == 10
    assert any("<::>" in t.task_id for t in tasks)
    assert all(t.collection for t in tasks)
    assert {t.answerability for t in tasks} == {"ANSWERABLE", "PARTIAL", "UNANSWERABLE", "CONVERSATIONAL"}
    angled = next(t for t in tasks if "<::>" in t.task_id)
    assert angled.key == angled.task_id.replace("<::>", "::")


def test_domain_from_collection() -> None:
    assert domain_of("mt-rag-fiqa-beir-elser-512-100-20240501") == "fiqa"
    assert domain_of("mt-rag-ibmcloud-elser-512-100-20240502") == "cloud"
    assert domain_of("mini-cooking") == "mini-cooking"
    assert domain_of(None) is None


def _write(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "tasks.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


GOOD = {"task_id": "c1::2", "input": [{"speaker": "user", "text": "hi?"}], "predictions": [{"text": "hello"}]}
FIRST = {**GOOD, "task_id": "c1::1"}


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        ("{not json", "tasks.jsonl:2: invalid JSON"),
        (json.dumps({**GOOD, "task_id": None}), "tasks.jsonl:2: field 'task_id': is missing"),
        (json.dumps({k: v for k, v in GOOD.items() if k != "input"}), "tasks.jsonl:2: field 'input': is missing"),
        (json.dumps({**GOOD, "input": [{"speaker": "bot", "text": "x"}]}),
         "tasks.jsonl:2: field 'input[0].speaker': speaker must be 'user' or 'agent'"),
        (json.dumps({**GOOD, "predictions": None}), "tasks.jsonl:2: field 'predictions': is missing"),
        (json.dumps({**GOOD, "answerability": ["MAYBE"]}), "tasks.jsonl:2: field 'answerability': unknown value"),
        (json.dumps({**GOOD, "contexts": [{"text": "x"}]}), "tasks.jsonl:2: field 'contexts[0].document_id'"),
        (json.dumps(FIRST), "tasks.jsonl:2: field 'task_id': duplicate task id"),
    ],
)
def test_bad_records_name_file_line_and_field(tmp_path: Path, record: str, expected: str) -> None:
    path = _write(tmp_path, [json.dumps(FIRST), record])
    with pytest.raises(InputError) as err:
        read_predictions(path)
    assert str(err.value).startswith(str(path.parent / expected)), str(err.value)
    assert "\n" not in str(err.value)


def test_journal_survives_a_half_written_last_line(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    path.write_text('{"a": 1}\n{"a": 2')
    assert [r for _, r in read_jsonl(path, tolerate_truncated_tail=True)] == [{"a": 1}]
    with JsonlAppender(path) as out:
        out.append({"a": 3})
    assert [r for _, r in read_jsonl(path)] == [{"a": 1}, {"a": 3}]


def test_older_mtrag_layout_with_capitals_string_turns_and_na(tmp_path: Path) -> None:
    path = tmp_path / "reference.jsonl"
    path.write_text(json.dumps({"task_id": "abc<::>1", "turn": "1", "Collection": "mt-rag-govt-elser-512-100-20240611",
                                "Answerability": ["PARTIAL"], "Multi-Turn": ["N/A"], "Question Type": "Factoid",
                                "input": [{"speaker": "user", "text": "q?"}]}) + "\n")
    task = read_tasks(path)[0]
    assert (task.turn, task.conversation_id, task.answerability) == (1, "abc", "PARTIAL")
    assert task.multi_turn is None and task.question_types == ["Factoid"] and task.domain == "govt"

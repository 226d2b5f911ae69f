"""One judged item (issue 42, items 1 and 2): judges read a neutral `JudgedItem`; plain records are read straight
into it and MTRAG adapts its task to it in its own folder; one scorer serves every bench that judges answers; no
bench folder imports another's; `ragjudge.evaluate(rows)` judges plain records in memory, and with `out=None`
writes nothing at all (the cache aside)."""

from __future__ import annotations

import ast
import json
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import ragjudge
from conftest import MTRAG_FIXTURES, REPO
from ragjudge.bench.mtrag.items import judged_item
from ragjudge.errors import InputError, UsageError
from ragjudge.formats.rag_records import rag_records
from ragjudge.models import JudgedItem, Passage, Prediction, Task, Turn

PACKAGE = Path(__file__).resolve().parents[1] / "ragjudge"
RESPONSES = MTRAG_FIXTURES / "generation" / "responses-10.jsonl"
MINI = REPO / "examples" / "mini" / "tasks.jsonl"
ROWS = [{"id": "q1", "question": "What does policy 42 cover?", "answer": "Policy 42 covers water damage from pipes.",
         "contexts": ["Policy 42 covers water damage from burst pipes.", "Claims are paid within 30 days."],
         "reference": "Water damage from burst pipes.", "labels": {"domain": "home"}},
        {"id": "q2", "question": "How fast are claims paid?", "answer": "Within 30 days.",
         "contexts": ["Claims are paid within 30 days."], "reference": "Within 30 days."}]


def test_a_record_and_an_mtrag_task_read_as_the_same_item() -> None:
    [record] = rag_records([{**ROWS[0], "id": "c::1"}])
    task = Task(task_id="c<::>1", conversation_id="c", turn=1, input=[Turn(speaker="user", text=ROWS[0]["question"])],
                contexts=[Passage(id="retrieved-1", text=ROWS[0]["contexts"][0]),
                          Passage(id="retrieved-2", text=ROWS[0]["contexts"][1])],
                targets=[Turn(speaker="agent", text=ROWS[0]["reference"])])
    from_task = judged_item(task, Prediction(task_id=task.task_id, text=ROWS[0]["answer"]))
    from_record = record.item()
    assert isinstance(from_record, JudgedItem)
    for field in ("id", "messages", "answer", "contexts", "reference", "question"):
        assert getattr(from_task, field) == getattr(from_record, field), field
    assert from_record.labels == {"domain": "home"} and from_task.labels == {}


def test_an_mtrag_item_judges_the_passages_the_generator_was_given() -> None:
    task = Task(task_id="c::2", conversation_id="c", turn=2, contexts=[Passage(id="gold", text="g")],
                input=[Turn(speaker="user", text="a?"), Turn(speaker="agent", text="b."),
                       Turn(speaker="user", text="c?")])
    retrieved = [Passage(id="r1", text="r")]
    assert [p.document_id for p in judged_item(task, Prediction(task_id="c::2", text="x")).contexts] == ["gold"]
    item = judged_item(task, Prediction(task_id="c::2", text="x", contexts=retrieved))
    assert [p.document_id for p in item.contexts] == ["r1"]
    assert item.question == "c?" and [t.text for t in item.messages] == ["a?", "b.", "c?"]


def test_no_bench_folder_imports_another() -> None:
    sideways = []
    for path in (PACKAGE / "bench").rglob("*.py"):
        parts = path.relative_to(PACKAGE / "bench").parts
        if len(parts) < 2:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("ragjudge.bench."):
                other = node.module.split(".")[2]
                if other != parts[0]:
                    sideways.append(f"{path.relative_to(PACKAGE)}:{node.lineno} imports {node.module}")
    assert not sideways, sideways


def test_the_scorer_is_shared_and_not_in_a_bench_folder() -> None:
    defined = [p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py")
               for n in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
               if isinstance(n, ast.ClassDef) and n.name.endswith("Scorer") and "Judge" in n.name]
    assert defined == ["engine/judge_scorer.py"], defined


CACHE_WORK = ("ragjudge/embeddings/onnx_export.py",)
"""Where a temporary folder is the cache's own work: exporting the local model to ONNX, once per cache."""


@pytest.fixture
def nothing_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """cwd and the temp folder empty, every temporary file or folder made counted (the cache's own work aside, and
    libraries' caches under the temp folder: torch's `torchinductor_<user>`)."""
    cwd, temp = tmp_path / "cwd", tmp_path / "temp"
    cwd.mkdir()
    temp.mkdir()
    made: list[str] = []

    def counted(real: Callable[..., Any]) -> Callable[..., Any]:
        def make(*args: Any, **kwargs: Any) -> Any:
            if not any(frame.filename.endswith(CACHE_WORK) for frame in traceback.extract_stack()):
                made.append("".join(traceback.format_stack(limit=8)))
            return real(*args, **kwargs)
        return make

    for name in ("mkdtemp", "mkstemp"):
        monkeypatch.setattr(tempfile, name, counted(getattr(tempfile, name)))
    monkeypatch.chdir(cwd)
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    yield cwd
    assert list(cwd.iterdir()) == []
    assert [p.name for p in temp.iterdir() if not p.name.startswith("torchinductor_")] == []
    assert not made, made[0]


def test_evaluate_rows_without_out_writes_nothing(nothing_written: Path) -> None:
    result = ragjudge.evaluate(ROWS, metrics=["rb_alg"], show_progress=False)
    assert result.path is None and result.files is None
    assert [s.id for s in result.samples] == ["q1", "q2"] and result.summary.metrics["RB_agg"].n == 2
    assert result.samples[0].labels == {"domain": "home"} and result.samples[0].output == ROWS[0]["answer"]


def test_evaluate_rows_with_an_llm_judge_without_out_writes_nothing(nothing_written: Path, monkeypatch) -> None:
    from ragjudge.testing.openai_server import OpenAIServer
    from ragjudge.testing.ragas_model import ragas_model

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with OpenAIServer(ragas_model()) as server:
        result = ragjudge.evaluate(ROWS, metrics=["faithfulness"], judge_models=["openai/judge"],
                                   api_base=server.base_url, show_progress=False)
    assert result.summary.metrics["faithfulness"].n == 2 and result.summary.metrics["faithfulness"].errors == 0


def test_a_bad_row_names_data_i_and_the_field(nothing_written: Path) -> None:
    rows = [ROWS[0], {**ROWS[1], "answer": 3}]
    with pytest.raises(InputError) as info:
        ragjudge.evaluate(rows, metrics=["rb_alg"], show_progress=False)
    assert str(info.value) == "data[1]: field 'answer': must be text, got a number"


def mtrag_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def without_run(summary: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in summary.items() if k != "run"}


@pytest.fixture(scope="module")
def from_files() -> dict[str, ragjudge.EvalResult]:
    """The same runs over the files: what the rows given in memory must match."""
    return {"judge": ragjudge.evaluate(RESPONSES, judges=["idk_lexical", "rb_alg"], show_progress=False),
            "gen": ragjudge.evaluate(MINI, judges=["idk_lexical"], gen="extractive", show_progress=False)}


def test_evaluate_mtrag_rows_without_out_writes_nothing(nothing_written: Path,
                                                        from_files: dict[str, ragjudge.EvalResult]) -> None:
    result = ragjudge.evaluate(mtrag_rows(RESPONSES), judges=["idk_lexical", "rb_alg"], show_progress=False)
    assert result.path is None and result.files is None and result.bench == "mtrag"
    assert without_run(result.summary.to_dict()) == without_run(from_files["judge"].summary.to_dict())
    assert [s.id for s in result.samples] == [s.id for s in from_files["judge"].samples]


def test_evaluate_rows_with_a_generator_without_out_writes_nothing(nothing_written: Path,
                                                                   from_files: dict[str, ragjudge.EvalResult]) -> None:
    result = ragjudge.evaluate(mtrag_rows(MINI), judges=["idk_lexical"], gen="extractive", show_progress=False)
    assert result.path is None and result.files is None
    assert without_run(result.summary.to_dict()) == without_run(from_files["gen"].summary.to_dict())
    assert [s.output for s in result.samples] == [s.output for s in from_files["gen"].samples]


@pytest.mark.parametrize("gen", [None, "extractive"])
def test_a_bad_mtrag_row_names_data_i_and_the_field(nothing_written: Path, gen: str | None) -> None:
    rows = mtrag_rows(RESPONSES)
    rows[2]["input"] = [{"speaker": "bot", "text": "hi"}]
    with pytest.raises(InputError) as info:
        ragjudge.evaluate(rows, judges=["idk_lexical"], gen=gen, show_progress=False)
    assert str(info.value) == (f"data[2] (task_id {rows[2]['task_id']!r}): field 'input[0].speaker': speaker must "
                               "be 'user' or 'agent', got 'bot'")


def test_a_duplicated_mtrag_row_names_the_second(nothing_written: Path) -> None:
    rows = mtrag_rows(RESPONSES)
    rows[4] = dict(rows[1])
    with pytest.raises(InputError) as info:
        ragjudge.evaluate(rows, judges=["idk_lexical"], show_progress=False)
    assert str(info.value).startswith(f"data[4] (task_id {rows[1]['task_id']!r}): field 'task_id': duplicate")


def test_mtrag_rows_with_out_resume_the_run_folder(tmp_path: Path) -> None:
    first = ragjudge.evaluate(mtrag_rows(MINI), judges=["idk_lexical"], gen="extractive", out=tmp_path,
                              show_progress=False)
    journal = tmp_path / "predictions.jsonl"
    lines = journal.read_text(encoding="utf-8").splitlines()
    second = ragjudge.evaluate(mtrag_rows(MINI), judges=["idk_lexical"], gen="extractive", out=tmp_path,
                               show_progress=False)
    assert journal.read_text(encoding="utf-8").splitlines() == lines  # nothing generated again
    assert second.summary.metrics == first.summary.metrics and first.path == tmp_path / "samples.jsonl"


def test_rows_given_to_a_bench_that_reads_only_files_is_one_line() -> None:
    with pytest.raises(UsageError) as info:
        ragjudge.evaluate(mtrag_rows(MINI), bench="cdr", gen="extractive", show_progress=False)
    assert str(info.value) == ("bench 'cdr' does not read records given in memory: give mtrag or mtrag-un, "
                               "or the path of its data")


def test_a_row_with_nothing_to_search_for_names_data_i(nothing_written: Path) -> None:
    rows = mtrag_rows(MINI)
    rows[3]["input"][-1]["text"] = ""
    with pytest.raises(InputError) as info:
        ragjudge.evaluate(rows, judges=["idk_lexical"], gen="extractive", show_progress=False,
                          options={"setting": "rag", "pipeline": "bm25", "corpus": str(MINI.parent / "corpus.jsonl")})
    assert str(info.value) == (f"data[3] (task_id {rows[3]['task_id']!r}): field 'input': task {rows[3]['task_id']!r}: "
                               "the last user turn is empty, there is nothing to search for")

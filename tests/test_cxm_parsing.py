"""CXMArena parsing and loading, case by case (issue 13): speaker turns only by the release's labels at line
starts, nothing before the first label or on IVR lines lost, one malformed gold evidence id spoiling its case
only, case ids the same whatever the file format, and prediction files that are empty, missing, not UTF-8 or
a folder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import conftest
import pandas as pd
import pytest

from ragjudge.bench.cxm import loaders
from ragjudge.bench.cxm.conversation import chat_messages, parse_transcript

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "cxm"


def run_cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, *args: str) -> tuple[int, str, str]:
    return conftest.run_cli(list(args), monkeypatch, capsys)


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_a_colon_inside_a_turn_does_not_start_a_turn() -> None:
    messages = parse_transcript("Customer: My phone model: Pixel 7 keeps rebooting. Agent: said to reset\n"
                                "Agent: Which model: the 7 or the 7a?")
    assert [(m.id, m.speaker, m.text) for m in messages] == [
        ("1", "customer", "My phone model: Pixel 7 keeps rebooting. Agent: said to reset"),
        ("2", "agent", "Which model: the 7 or the 7a?")]


def test_text_before_the_first_speaker_and_ivr_lines_are_kept() -> None:
    text = ("[call started 09:14]\nIVR-Bot: Welcome. For billing press 1.\nUser: 1\n"
            "IVR-Bot: Connecting you to an agent.\nAgent: Hi, Sam here.\nCustomer: hello")
    messages = parse_transcript(text)
    assert [(m.id, m.speaker, m.text) for m in messages] == [
        ("preamble", "transcript", "[call started 09:14]"), ("1", "ivr", "Welcome. For billing press 1."),
        ("2", "customer", "1"), ("3", "ivr", "Connecting you to an agent."), ("4", "agent", "Hi, Sam here."),
        ("5", "customer", "hello")]
    assert messages[1].label == "IVR-Bot"
    assert [m["role"] for m in chat_messages(messages)] == ["user", "assistant", "user", "assistant", "user"]


def test_a_labelled_id_with_a_colon_in_the_text_is_one_message(tmp_path: Path) -> None:
    """`CUSTOMER[2]:my phone model: X100` used to abort the whole task with "message ids repeat"."""
    write_jsonl(tmp_path / "Agent_Quality_Adherence" / "train.jsonl", [
        {"conversation_id": "q1", "conversation": "AGENT[1]:Hello, how can I help?\nCUSTOMER[2]:my phone model: X100"
                                                  "\nAGENT[3]:Let me check.",
         "question_answers": json.dumps([{"Question": "Greeted?", "Answer": "Yes",
                                          "proof_message_ids": ["AGENT[1]"]}])},
    ])
    [case] = loaders.load_quality(tmp_path)
    assert [(m.id, m.text) for m in case.messages] == [("1", "Hello, how can I help?"), ("2", "my phone model: X100"),
                                                       ("3", "Let me check.")]
    assert case.error is None and case.questions[0].evidence == ["1"]  # AGENT[1] names message 1


def test_one_malformed_evidence_id_spoils_its_case_only(monkeypatch, capsys, tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(EXAMPLE, data)
    rows = [json.loads(x) for x in (data / "quality.jsonl").read_text().splitlines()]
    rows[1]["questions"][0]["evidence"] = ["AGENT[2]"]  # message 2 of a2 is a customer message
    rows[2]["questions"][0]["evidence"] = ["99"]  # a3 has no message 99
    write_jsonl(data / "quality.jsonl", rows)
    cases = {c.case_id: c for c in loaders.load_quality(data)}
    assert cases["a1"].error is None
    assert "'AGENT[2]' names message 2, which is a customer message" in cases["a2"].error
    assert "quality.jsonl:2" in cases["a2"].error and "which case 'a3' does not have" in cases["a3"].error
    code, out, err = run_cli(monkeypatch, capsys, "cxm", "score", "--task", "quality", "--data", str(data),
                             "--format", "json")
    assert code == 1, err  # reported as a problem, not an abort
    [report] = json.loads(out)
    m = report["metrics"]
    assert m["cases with malformed gold"] == 2 and m["scored cases"] == 1 and m["questions"] == 3
    assert m["question accuracy"] == 1.0  # a1, the one case left, is all right
    assert any("2 case(s) left out" in n for n in report["notes"])


def test_case_ids_do_not_depend_on_the_file_format(monkeypatch, capsys, tmp_path: Path) -> None:
    rows = [{"Complete Conversations": "Customer: billed twice", "Taxonomy_1": "Billing"},
            {"Complete Conversations": "Customer: roaming in Japan?", "Taxonomy_1": "Roaming"}]
    taxonomy = [{"L1": "Billing", "Description": ""}, {"L1": "Roaming", "Description": ""}]
    predictions = write_jsonl(tmp_path / "p.jsonl", [{"case_id": "1", "taxonomy": "taxonomy_1", "intent": "Billing"},
                                                     {"case_id": "2", "taxonomy": "taxonomy_1", "intent": "Roaming"}])
    scores = []
    for ext in ("jsonl", "csv", "parquet"):
        folder = tmp_path / ext
        write_jsonl(folder / "Taxonomy" / "taxonomy_1.jsonl", taxonomy)
        path = folder / "Intent_Prediction" / f"train.{ext}"
        if ext == "jsonl":
            write_jsonl(path, rows)
        else:
            path.parent.mkdir(parents=True)
            getattr(pd.DataFrame(rows), "to_csv" if ext == "csv" else "to_parquet")(path, index=False)
        cases, _ = loaders.load_intent(folder)
        assert [c.case_id for c in cases] == ["1", "2"], ext
        code, out, err = run_cli(monkeypatch, capsys, "cxm", "score", "--task", "intent", "--data", str(folder),
                                 "--predictions", str(predictions), "--format", "json")
        assert code == 0, err
        scores.append(json.loads(out)[0]["metrics"]["accuracy (exact match)"])
    assert scores == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("state", ["empty", "missing"])
def test_an_empty_or_missing_predictions_file_is_all_missing_and_exit_1(monkeypatch, capsys, tmp_path: Path,
                                                                         state: str) -> None:
    path = tmp_path / "intent.jsonl"
    if state == "empty":
        path.write_text("")
    code, out, err = run_cli(monkeypatch, capsys, "cxm", "score", "--task", "intent", "--data", str(EXAMPLE),
                             "--predictions", str(path), "--format", "json")
    assert code == 1
    reports = json.loads(out)
    assert [r["metrics"]["missing"] for r in reports] == [6, 6]  # both taxonomies, every case
    word = "is empty" if state == "empty" else "does not exist"
    assert f"warning: predictions file {path} {word}: every item is missing" in err
    assert all(r["notes"][0].startswith(f"predictions file {path} {word}") for r in reports)
    code, out, err = run_cli(monkeypatch, capsys, "cxm", "score", "--task", "kb-refinement", "--data", str(EXAMPLE),
                             "--predictions", str(path), "--no-baseline", "--format", "json")
    assert code == 1 and "every item is missing" in err  # no pair predicted is not a clean run either


def test_a_predictions_file_that_is_not_utf8_or_a_folder_is_one_line(monkeypatch, capsys, tmp_path: Path) -> None:
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(b'{"case_id": "c1", "taxonomy": "flat", "intent": "Roaming"}\n'
                      b'{"case_id": "c2", "taxonomy": "flat", "intent": "Facturaci\xf3n"}\n')
    folder = tmp_path / "intent.jsonl"
    folder.mkdir()
    for path, message in ((latin, f"error: {latin}:2: not UTF-8 text: byte 0xf3 at byte offset 117"),
                          (folder, f"error: {folder}: is a folder, expected a JSON Lines file")):
        code, out, err = run_cli(monkeypatch, capsys, "cxm", "score", "--task", "intent", "--data", str(EXAMPLE),
                                 "--predictions", str(path))
        assert code == 2 and out == ""
        [line] = err.strip().splitlines()
        assert line.startswith(message), line

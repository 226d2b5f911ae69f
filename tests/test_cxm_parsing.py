"""CXMArena parsing and loading, case by case (issue 13): speaker turns only by the release's labels at line
starts, nothing before the first label or on IVR lines lost, one malformed gold evidence id spoiling the evidence of
its question only, case ids the same whatever the file format, and prediction files that are empty, missing, not UTF-8 or
a folder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import conftest
import pandas as pd
import pytest

from ragjudge.bench.cxm.intent.data import load_intent
from ragjudge.bench.cxm.kb_refinement.data import load_pairs
from ragjudge.bench.cxm.quality.data import load_quality
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
    [case] = load_quality(tmp_path)
    assert [(m.id, m.text) for m in case.messages] == [("1", "Hello, how can I help?"), ("2", "my phone model: X100"),
                                                       ("3", "Let me check.")]
    assert case.questions[0].evidence_error is None and case.questions[0].evidence == ["1"]  # AGENT[1]: message 1


def test_a_malformed_evidence_id_affects_only_the_evidence_metric_of_its_question(monkeypatch, capsys,
                                                                                  tmp_path: Path) -> None:
    """Issue 23: one bad gold evidence id used to drop its whole case, answers included, where CXMArena's evaluator
    scores answers without looking at evidence. Now the question's answer is scored and only its evidence is left
    out: the example's figures (examples/cxm/README.md) stay, the evidence ones are over the other questions."""
    data = tmp_path / "data"
    shutil.copytree(EXAMPLE, data)
    rows = [json.loads(x) for x in (data / "quality.jsonl").read_text().splitlines()]
    rows[1]["questions"][0]["evidence"] = ["AGENT[2]"]  # message 2 of a2 is a customer message
    rows[2]["questions"][1]["evidence"] = ["99"]  # a3 has no message 99
    write_jsonl(data / "quality.jsonl", rows)
    cases = {c.case_id: c for c in load_quality(data)}
    assert all(q.evidence_error is None for q in cases["a1"].questions)
    greet, verify = cases["a2"].questions[0], cases["a3"].questions[1]
    assert "'AGENT[2]' names message 2, which is a customer message" in greet.evidence_error
    assert "quality.jsonl:2" in greet.evidence_error and "which case 'a3' does not have" in verify.evidence_error
    assert greet.evidence is None and verify.evidence is None and greet.answer is True and verify.answer is True
    assert cases["a3"].questions[2].evidence == ["6"] and cases["a3"].questions[2].evidence_error is None
    code, out, err = run_cli(monkeypatch, capsys, "cxm", "score", "--task", "quality", "--data", str(data),
                             "--format", "json")
    assert code == 0, err  # the data's defect, not the run's: no problem, nothing missing
    [report] = json.loads(out)
    m = {name: metric["value"] for name, metric in report["metrics"].items()}
    # answers as on the untouched example: a1 3/3; a2 greet and more right; a3 verify right, more unanswered
    assert m["scored cases"] == 3 and m["questions"] == 9 and m["question accuracy"] == pytest.approx(6 / 9)
    assert m["case accuracy (all questions right)"] == pytest.approx(1 / 3)
    assert m["question accuracy (paper protocol: unanswered skipped)"] == pytest.approx(6 / 8)
    # evidence over a1's three questions and a3's "more": cited 1 | 3,4 | 7 | nothing, gold 1 | 3 | 7 | 6
    assert m["questions with gold evidence"] == 4 and report["metrics"]["evidence precision"]["n"] == 4
    assert m["evidence precision"] == pytest.approx(3 / 4) and m["evidence recall"] == pytest.approx(3 / 4)
    assert m["questions with malformed gold evidence"] == 2 and report["n_errors"] == 0
    assert report["metrics"]["questions with malformed gold evidence"]["kind"] == "count"
    assert any(n.startswith("2 question(s) whose gold evidence is malformed are left out of the evidence metrics")
               for n in report["notes"])


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
        cases, _ = load_intent(folder)
        assert [c.case_id for c in cases] == ["1", "2"], ext
        code, out, err = run_cli(monkeypatch, capsys, "cxm", "score", "--task", "intent", "--data", str(folder),
                                 "-T", f"predictions={predictions}", "--format", "json")
        assert code == 0, err
        scores.append(json.loads(out)[0]["metrics"]["accuracy (exact match)"]["value"])
    assert scores == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("state", ["empty", "missing"])
def test_an_empty_or_missing_predictions_file_is_refused_before_any_work(monkeypatch, capsys, tmp_path: Path,
                                                                         state: str) -> None:
    """Issue 21: an empty predictions file scored every item as missing and wrote a run; it is a mistake (a typo,
    a prediction script that crashed), refused like any bad input: one line naming it, exit 2, nothing written."""
    path = tmp_path / "intent.jsonl"
    if state == "empty":
        path.write_text("")
    message = "empty: a predictions file holds one JSON object a line" if state == "empty" else \
        "no such predictions file"
    for task in ("intent", "kb-refinement"):
        code, out, err = run_cli(monkeypatch, capsys, "cxm", "score", "--task", task, "--data", str(EXAMPLE),
                                 "-T", f"predictions={path}", "--format", "json")
        assert code == 2 and out == "" and err.startswith(f"error: {path}: {message}") and err.count("\n") == 1, err
    out_dir = tmp_path / "run"
    code, _, err = run_cli(monkeypatch, capsys, "eval", "--bench", "cxm-intent", "--data", str(EXAMPLE), "-T",
                           f"predictions={path}", "--out", str(out_dir))
    assert code == 2 and err.startswith(f"error: {path}: {message}") and not out_dir.exists(), err


def test_a_predictions_file_that_is_not_utf8_or_a_folder_is_one_line(monkeypatch, capsys, tmp_path: Path) -> None:
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(b'{"case_id": "c1", "taxonomy": "flat", "intent": "Roaming"}\n'
                      b'{"case_id": "c2", "taxonomy": "flat", "intent": "Facturaci\xf3n"}\n')
    folder = tmp_path / "intent.jsonl"
    folder.mkdir()
    for path, message in ((latin, f"error: {latin}:2: not UTF-8 text: byte 0xf3 at byte offset 117"),
                          (folder, f"error: {folder}: is a folder, expected a JSON Lines file")):
        code, out, err = run_cli(monkeypatch, capsys, "cxm", "score", "--task", "intent", "--data", str(EXAMPLE),
                                 "-T", f"predictions={path}")
        assert code == 2 and out == ""
        [line] = err.strip().splitlines()
        assert line.startswith(message), line


# -- data files: errors name the file that has the problem (exit 2, one line, nothing written) --------------

def one_line_error(monkeypatch, capsys, tmp_path: Path, *args: str) -> str:
    """Score (and, through `eval`, run) with `args`: exit 2, nothing on stdout, one line, nothing written."""
    code, out, err = run_cli(monkeypatch, capsys, *args)
    assert code == 2 and out == "", err
    [line] = err.strip().splitlines()
    assert "Traceback" not in line
    return line


@pytest.mark.parametrize("name, task, what", [
    ("intent.jsonl", "intent", "intent conversations"),
    ("taxonomy.jsonl", "intent", "intent taxonomy entries"),
    ("quality.jsonl", "quality", "quality-adherence cases"),
    ("tool_calls.jsonl", "tool-calls", "tool-call cases"),
    ("tools.jsonl", "tool-calls", "tool definitions"),
    ("multi_turn.jsonl", "multiturn-retrieval", "multi-turn RAG cases"),
    ("multi_turn.jsonl", "answer-classification", "multi-turn RAG cases"),
    ("search_queries.jsonl", "article-search", "article-search queries"),
    ("kb_pairs.jsonl", "kb-refinement", "KB-refinement pairs"),
    ("articles.jsonl", "article-search", "articles"),
])
def test_an_empty_data_file_is_named_not_the_predictions(monkeypatch, capsys, tmp_path: Path, name, task,
                                                         what) -> None:
    """An empty intent.jsonl used to be reported as `predictions/intent.jsonl:1: unknown case 'c1'`, and an empty
    multi_turn.jsonl, search_queries.jsonl or kb_pairs.jsonl as a clean run (exit 0) with empty tables."""
    data = tmp_path / "data"
    shutil.copytree(EXAMPLE, data)
    (data / name).write_text("")
    line = one_line_error(monkeypatch, capsys, tmp_path, "cxm", "score", "--task", task, "--data", str(data),
                          *(["-T", "baseline=false"] if task == "kb-refinement" else []))
    assert line == f"error: {data / name}: the file holds no {what}"
    line = one_line_error(monkeypatch, capsys, tmp_path, "eval", "--bench", f"cxm-{task}", "--data", str(data), "-T",
                          f"predictions={data / 'predictions' / (task + '.jsonl')}", "--out", str(tmp_path / "run"))
    assert line == f"error: {data / name}: the file holds no {what}"
    assert not (tmp_path / "run").exists()


def test_the_releases_empty_pair_split_is_named_unless_the_other_has_pairs(tmp_path: Path) -> None:
    from ragjudge.errors import InputError

    similar = write_jsonl(tmp_path / "KB_Refinement" / "similarity_pairs.jsonl", [{"Pairs": ["KB_1", "KB_2"]}])
    contradictory = tmp_path / "KB_Refinement" / "contradictory_pairs.jsonl"
    contradictory.write_text("")
    assert load_pairs(tmp_path) == {"similar": {frozenset({"KB_1", "KB_2"})}}
    similar.write_text("")
    with pytest.raises(InputError) as info:
        load_pairs(tmp_path)
    assert str(info.value) == f"{similar}: the file holds no KB-refinement pairs (nor does {contradictory})"


@pytest.mark.parametrize("name, task, what", [
    ("intent.jsonl", "intent", "an intent conversations file"),
    ("taxonomy.jsonl", "intent", "an intent taxonomy file"),
    ("multi_turn.jsonl", "multiturn-retrieval", "a multi-turn RAG cases file"),
    ("kb_pairs.jsonl", "kb-refinement", "a KB-refinement pairs file"),
    ("articles.jsonl", "article-search", "an article-search articles file"),
])
def test_a_folder_where_a_data_file_is_expected_says_so(monkeypatch, capsys, tmp_path: Path, name, task,
                                                       what) -> None:
    """It used to read as a file that is not there ("no intent conversations found")."""
    data = tmp_path / "data"
    shutil.copytree(EXAMPLE, data)
    (data / name).unlink()
    (data / name).mkdir()
    line = one_line_error(monkeypatch, capsys, tmp_path, "cxm", "score", "--task", task, "--data", str(data),
                          *(["-T", "baseline=false"] if task == "kb-refinement" else []))
    assert line == f"error: {data / name}: is a folder, expected {what}"


def test_a_repeated_intent_is_reported_in_the_file_and_line_that_repeat_it(monkeypatch, capsys,
                                                                           tmp_path: Path) -> None:
    """A duplicate in taxonomy_3 used to be reported in taxonomy_1 (the first taxonomy file), with no line."""
    rows = [{"Complete Conversations": "Customer: billed twice", "Taxonomy_1": "Billing", "Taxonomy_3": "Money"}]
    write_jsonl(tmp_path / "Intent_Prediction" / "train.jsonl", rows)
    write_jsonl(tmp_path / "Taxonomy" / "taxonomy_1.jsonl", [{"L1": "Billing"}, {"L1": "Roaming"}])
    third = write_jsonl(tmp_path / "Taxonomy" / "taxonomy_3.jsonl", [{"L1": "Money"}, {"L1": "Travel"},
                                                                      {"L1": "Money"}])
    line = one_line_error(monkeypatch, capsys, tmp_path, "cxm", "score", "--task", "intent", "--data", str(tmp_path),
                          "-T", f"predictions={tmp_path / 'none.jsonl'}")
    assert line == f"error: {third}:3: field 'l1': taxonomy 'taxonomy_3' lists 'Money' twice (first at line 1)"
    plain = tmp_path / "plain"
    shutil.copytree(EXAMPLE, plain)
    with (plain / "taxonomy.jsonl").open("a") as fh:
        fh.write(json.dumps({"taxonomy": "two_level", "l1": "Billing", "l2": "Double charge"}) + "\n")
    n = len((plain / "taxonomy.jsonl").read_text().splitlines())
    line = one_line_error(monkeypatch, capsys, tmp_path, "cxm", "score", "--task", "intent", "--data", str(plain))
    assert line.startswith(f"error: {plain / 'taxonomy.jsonl'}:{n}: field 'l2': taxonomy 'two_level' lists "
                           "'Billing:Double charge' twice (first at line ")


def test_bytes_that_are_not_utf8_are_located_in_json_and_csv_files(monkeypatch, capsys, tmp_path: Path) -> None:
    """A whole-JSON file and a Latin-1 CSV: file, line and byte offset, never pandas' codec message."""
    folder = tmp_path / "release"
    taxonomy = write_jsonl(folder / "Taxonomy" / "taxonomy_1.jsonl", [{"L1": "Billing"}, {"L1": "Roaming"}])
    predictions = write_jsonl(tmp_path / "p.jsonl", [{"case_id": "1", "taxonomy": "taxonomy_1", "intent": "Billing"}])
    table = folder / "Intent_Prediction" / "train.csv"
    table.parent.mkdir(parents=True)
    table.write_bytes("Complete Conversations,Taxonomy_1\nCustomer: factura doble,Billing\n"
                      "Customer: itinerancia en Japón,Roaming\n".encode("latin-1"))
    offset = table.read_bytes().index(b"\xf3")
    line = one_line_error(monkeypatch, capsys, tmp_path, "cxm", "score", "--task", "intent", "--data", str(folder),
                          "-T", f"predictions={predictions}")
    assert line == f"error: {table}:3: not UTF-8 text: byte 0xf3 at byte offset {offset} (save the file as UTF-8)"
    table.unlink()
    document = folder / "Intent_Prediction" / "train.json"
    document.write_bytes(b'[{"Complete Conversations": "Customer: billed twice", "Taxonomy_1": "Billing"},\n'
                         b' {"Complete Conversations": "Customer: Jap\xf3n?", "Taxonomy_1": "Roaming"}]')
    offset = document.read_bytes().index(b"\xf3")
    line = one_line_error(monkeypatch, capsys, tmp_path, "cxm", "score", "--task", "intent", "--data", str(folder),
                          "-T", f"predictions={predictions}")
    assert line == f"error: {document}:2: not UTF-8 text: byte 0xf3 at byte offset {offset} (save the file as UTF-8)"
    document.unlink()
    table.write_text('Complete Conversations,Taxonomy_1\n"Customer: billed twice",Billing\n"Customer: hi",a,b,c\n')
    line = one_line_error(monkeypatch, capsys, tmp_path, "cxm", "score", "--task", "intent", "--data", str(folder),
                          "-T", f"predictions={predictions}")
    assert line.startswith(f"error: {table}:3: not a readable CSV table (") and taxonomy.exists()


def test_every_data_file_read_is_recorded_in_run_json(monkeypatch, capsys, tmp_path: Path) -> None:
    """CSV and Parquet tables go through ragjudge.formats.files too: run.json's inputs list them with a hash."""
    import hashlib

    folder = tmp_path / "release"
    write_jsonl(folder / "Taxonomy" / "taxonomy_1.jsonl", [{"L1": "Billing"}, {"L1": "Roaming"}])
    pd.DataFrame([{"L1": "Travel", "L2": "Roaming"}]).to_parquet(folder / "Taxonomy" / "taxonomy_2.parquet")
    table = folder / "Intent_Prediction" / "train.csv"
    table.parent.mkdir(parents=True)
    pd.DataFrame([{"Complete Conversations": "Customer: billed twice", "Taxonomy_1": "Billing"}]).to_csv(table,
                                                                                                       index=False)
    predictions = write_jsonl(tmp_path / "p.jsonl", [{"case_id": "1", "taxonomy": "taxonomy_1", "intent": "Billing"}])
    code, out, err = run_cli(monkeypatch, capsys, "eval", "--bench", "cxm-intent", "--data", str(folder), "-T",
                             f"predictions={predictions}", "--out", str(tmp_path / "run"), "--format", "json")
    assert code == 0, err
    inputs = {Path(i["path"]).name: i["sha256"] for i in json.loads((tmp_path / "run" / "run.json").read_text())["inputs"]}
    for path in (table, folder / "Taxonomy" / "taxonomy_2.parquet", folder / "Taxonomy" / "taxonomy_1.jsonl",
                 predictions):
        assert inputs[path.name] == hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("task", ["intent", "quality", "tool-calls", "answer-classification", "kb-refinement",
                                  "article-search", "multiturn-retrieval"])
def test_each_mistyped_prediction_field_is_named_in_one_line(monkeypatch, capsys, tmp_path: Path, task: str) -> None:
    """Every list, boolean or number of a prediction row (as `ragjudge report` and the conformance kit mistype a
    results line: replaced by a string) is refused naming file:line and the field, by `cxm score` and by
    `check_row` (what a CXM run's results.jsonl lines can be checked with)."""
    from ragjudge.bench.cxm.rows import check_row
    from ragjudge.errors import InputError

    rows = [json.loads(x) for x in (EXAMPLE / "predictions" / f"{task}.jsonl").read_text().splitlines()]
    for n, row in enumerate(rows, start=1):
        check_row(task, row, None, n)  # the documented example is well-formed
    keys = [k for k, v in rows[1].items() if isinstance(v, (list, dict, int, float, bool))]
    assert keys
    for key in keys:
        path = write_jsonl(tmp_path / f"{key}.jsonl", [rows[0], {**rows[1], key: "high"}, *rows[2:]])
        with pytest.raises(InputError) as info:
            check_row(task, {**rows[1], key: "high"}, path, 2)
        assert (info.value.file, info.value.line, info.value.field) == (str(path), 2, key)
        code, out, err = run_cli(monkeypatch, capsys, "cxm", "score", "--task", task, "--data", str(EXAMPLE),
                                 "-T", f"predictions={path}",
                                 *(["-T", "baseline=false"] if task == "kb-refinement" else []))
        assert code == 2 and out == "", (key, err)
        [line] = err.strip().splitlines()
        assert line.startswith(f"error: {path}:2: field '{key}': "), line

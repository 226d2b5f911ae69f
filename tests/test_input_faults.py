"""Inputs that are not what a command expects: bytes that are not UTF-8, a folder given for a file (or the
reverse), integer task ids, a huge line, a heatmap path that cannot be an image; and the documented
`retrieve` → `retrieval-eval` pair on BEIR queries. Each mistake is one line and exit 2, before any work."""

from __future__ import annotations

import json
import shutil
import time
import tracemalloc
from pathlib import Path

import pytest
from conftest import MINI, REPO, run_cli

FIXTURES = Path(__file__).parent / "fixtures"
HUMANS = FIXTURES / "inspectorraget" / "human_eval.json"
PREDICTIONS = FIXTURES / "inspectorraget" / "predictions_model_a.jsonl"


def _one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "internal error" not in err
    return lines[0]


# ------------------------------------------------------------------------------- retrieve → retrieval-eval

def test_retrieve_beir_queries_then_retrieval_eval_with_default_options(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """BEIR queries have no Collection, so the run has none: retrieval-eval's default breakdowns (turn, domain)
    used to crash on it (KeyError 'domain'). The output of one command is valid input to the next."""
    tasks = [json.loads(line) for line in (MINI / "tasks.jsonl").read_text(encoding="utf-8").splitlines()]
    queries = tmp_path / "queries.jsonl"
    queries.write_text("".join(json.dumps({"_id": t["task_id"], "text": t["input"][-1]["text"]}) + "\n"
                               for t in tasks), encoding="utf-8")
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\n" + "".join(
        f"{t['task_id']}\t{c['document_id']}\t1\n" for t in tasks for c in t.get("contexts") or []), encoding="utf-8")
    run = tmp_path / "run.jsonl"
    code, out, err = run_cli(["retrieve", "--queries", str(queries), "--corpus", str(MINI / "corpus.jsonl"),
                              "--pipeline", "bm25", "--index-dir", str(tmp_path / "idx"), "--out", str(run)],
                             monkeypatch, capsys)
    assert code == 0, err
    assert all("Collection" not in json.loads(line) for line in run.read_text().splitlines())

    code, out, err = run_cli(["retrieval-eval", str(run), "--qrels", str(qrels)], monkeypatch, capsys)
    assert code == 0, err
    assert "internal error" not in err
    assert "recall at k" in out and "nDCG" in out and "First vs later turns" in out
    assert out.rstrip().splitlines()[-1].startswith("nDCG@10 ")  # the headline line, last

    code, out, err = run_cli(["retrieval-eval", str(run), "--qrels", str(qrels), "--format", "json"],
                             monkeypatch, capsys)
    report = json.loads(out)
    judged = {t["task_id"] for t in tasks if t.get("contexts")}
    assert code == 0 and report["details"]["n_queries"] == report["n_samples"] == len(judged)
    assert 0 < report["metrics"]["R@10"]["value"] <= 1 and report["metrics"]["R@10"]["n"] == len(judged)
    assert list(report["breakdowns"]) == ["turn"]  # nothing labels a domain: the dimension is left out, not faked


# ------------------------------------------------------------------------------- bytes that are not UTF-8

def _with_bad_byte(source: bytes, line: int) -> tuple[bytes, int]:
    """`source` with 0xff put into line `line` (1-based), after its first 5 bytes; and that byte's offset."""
    lines = source.splitlines(keepends=True)
    offset = sum(len(x) for x in lines[: line - 1]) + 5
    lines[line - 1] = lines[line - 1][:5] + b"\xff" + lines[line - 1][5:]
    return b"".join(lines), offset


@pytest.mark.parametrize("command", ["judge", "eval", "retrieve-queries", "retrieve-corpus", "retrieval-eval-run",
                                     "retrieval-eval-qrels", "correlate-judges", "correlate-humans", "export",
                                     "cxm", "pipeline-spec", "judge-spec"])
def test_non_utf8_input_is_one_line_naming_file_line_and_byte_offset(
        command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    w = tmp_path
    shutil.copy(PREDICTIONS, w / "pred.jsonl")
    results = [{**json.loads(line), "metrics": {"idk_lexical": [0.0]}} for line in PREDICTIONS.read_text().splitlines()]
    (w / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in results), encoding="utf-8")
    shutil.copy(MINI / "tasks.jsonl", w / "tasks.jsonl")
    shutil.copy(MINI / "corpus.jsonl", w / "corpus.jsonl")
    shutil.copy(HUMANS, w / "humans.json")
    shutil.copytree(REPO / "examples" / "cxm", w / "cxm")
    shutil.copy(REPO / "pipelines" / "bm25.yaml", w / "spec.yaml")
    (w / "judges").mkdir()
    shutil.copy(REPO / "judges" / "idk_lexical.yaml", w / "judges" / "idk_lexical.yaml")
    (w / "q.jsonl").write_text('{"_id": "q1", "text": "mars day"}\n{"_id": "q2", "text": "jupiter moons"}\n')
    (w / "run.jsonl").write_text('{"task_id": "q1", "contexts": [{"document_id": "d1", "score": 1.0}]}\n'
                                 '{"task_id": "q2", "contexts": [{"document_id": "d2", "score": 1.0}]}\n')
    (w / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\n")
    target, argv = {
        "judge": ("pred.jsonl", ["judge", "pred.jsonl", "--judges", "idk_lexical", "--out", "o/j.jsonl"]),
        "eval": ("tasks.jsonl", ["eval", "--bench", "tasks.jsonl", "--gen", "extractive", "--out", "o/e"]),
        "retrieve-queries": ("q.jsonl", ["retrieve", "--queries", "q.jsonl", "--corpus", "corpus.jsonl",
                                         "--pipeline", "bm25", "--index-dir", "idx", "--out", "o/r.jsonl"]),
        "retrieve-corpus": ("corpus.jsonl", ["retrieve", "--queries", "q.jsonl", "--corpus", "corpus.jsonl",
                                             "--pipeline", "bm25", "--index-dir", "idx", "--out", "o/r.jsonl"]),
        "retrieval-eval-run": ("run.jsonl", ["retrieval-eval", "run.jsonl", "--qrels", "qrels.tsv"]),
        "retrieval-eval-qrels": ("qrels.tsv", ["retrieval-eval", "run.jsonl", "--qrels", "qrels.tsv"]),
        "correlate-judges": ("results.jsonl", ["correlate", "humans.json", "--bootstrap", "0",
                                               "--judges", "model-a=results.jsonl"]),
        "correlate-humans": ("humans.json", ["correlate", "humans.json", "--bootstrap", "0"]),
        "export": ("results.jsonl", ["export", "model-a=results.jsonl", "--out", "o/x.json"]),
        "cxm": ("cxm/predictions/intent.jsonl", ["cxm", "score", "--task", "intent", "--data", "cxm"]),
        "pipeline-spec": ("spec.yaml", ["retrieve", "--queries", "q.jsonl", "--corpus", "corpus.jsonl",
                                        "--pipeline", "spec.yaml", "--out", "o/r.jsonl"]),
        "judge-spec": ("judges/idk_lexical.yaml", ["judge", "pred.jsonl", "--judges", "idk_lexical", "--judge-dir",
                                                   "judges", "--out", "o/j.jsonl"]),
    }[command]
    path = w / target
    data, offset = _with_bad_byte(path.read_bytes(), 2)
    path.write_bytes(data)
    monkeypatch.chdir(w)
    code, _, err = run_cli(argv, monkeypatch, capsys)
    assert code == 2
    assert _one_error_line(err) == (f"error: {target}:2: not UTF-8 text: byte 0xff at byte offset {offset} "
                                    "(save the file as UTF-8)")


def test_a_utf8_byte_order_mark_is_not_an_error(tmp_path: Path) -> None:
    from ragjudge.formats.jsonl import read_jsonl

    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + b'{"a": 1}\n{"a": 2}\n')
    assert [r["a"] for _, r in read_jsonl(path)] == [1, 2]


# ------------------------------------------------------------------------------- folders and files mixed up

@pytest.mark.parametrize("case", ["judge-folder", "judge-out-folder", "retrieve-out-folder", "export-out-folder",
                                  "eval-out-file", "out-under-a-file", "cxm-data-file", "corpus-folder",
                                  "qrels-folder", "run-folder", "correlate-csv-folder", "humans-folder"])
def test_a_folder_for_a_file_or_the_reverse_is_one_line(
        case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    Path("adir.jsonl").mkdir()
    Path("afile").write_text("x\n")
    shutil.copy(PREDICTIONS, "pred.jsonl")
    (tmp_path / "q.jsonl").write_text('{"_id": "q1", "text": "mars day"}\n')
    argv, expected = {
        "judge-folder": (["judge", "adir.jsonl"], "adir.jsonl: is a folder, expected a JSON Lines file"),
        "judge-out-folder": (["judge", "pred.jsonl", "--out", "adir.jsonl"],
                             "adir.jsonl: is a folder, expected a results file to write"),
        "retrieve-out-folder": (["retrieve", "--queries", "q.jsonl", "--corpus", str(MINI / "corpus.jsonl"),
                                 "--pipeline", "bm25", "--out", "adir.jsonl"],
                                "adir.jsonl: is a folder, expected a run file (--out) to write"),
        "export-out-folder": (["export", "model-a=pred.jsonl", "--out", "adir.jsonl"],
                              "adir.jsonl: is a folder, expected an InspectorRAGet file (--out) to write"),
        "eval-out-file": (["eval", "--bench", str(MINI), "--gen", "extractive", "--out", "afile"],
                          "afile: is a file, expected an output folder (--out)"),
        "out-under-a-file": (["judge", "pred.jsonl", "--out", "afile/x.jsonl"],
                             "afile: is a file, so afile/x.jsonl cannot be created"),
        "cxm-data-file": (["cxm", "score", "--data", "afile"], "afile: is a file, expected a CXMArena data folder"),
        "corpus-folder": (["retrieve", "--queries", "q.jsonl", "--corpus", "adir.jsonl", "--pipeline", "bm25",
                           "--out", "r.jsonl"], "--corpus adir.jsonl is a folder, expected a BEIR corpus JSONL file"),
        "qrels-folder": (["retrieval-eval", "pred.jsonl", "--qrels", "adir.jsonl"],
                         "adir.jsonl: is a folder, expected a run or qrels file"),
        "run-folder": (["retrieval-eval", "adir.jsonl", "--qrels", "afile"],  # a folder may be a run folder
                       "adir.jsonl: not a ragjudge run folder (it has no summary.json or samples.jsonl)"),
        "correlate-csv-folder": (["correlate", str(HUMANS), "--csv", "adir.jsonl"],
                                 "adir.jsonl: is a folder, expected a CSV file (--csv) to write"),
        "humans-folder": (["correlate", "adir.jsonl"], "adir.jsonl: is a folder, expected an InspectorRAGet JSON file"),
    }[case]
    code, _, err = run_cli(argv, monkeypatch, capsys)
    assert code == 2, err
    assert _one_error_line(err) == f"error: {expected}"


# ------------------------------------------------------------------------------- smaller items of issue 15

def test_integer_task_ids_are_accepted_and_written_back_as_integers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    records = [json.loads(line) for line in PREDICTIONS.read_text(encoding="utf-8").splitlines()[:3]]
    for number, record in enumerate(records, start=1):
        record["task_id"] = number  # an integer, as some exports write them
    source = tmp_path / "int_ids.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    out = tmp_path / "judged.jsonl"
    code, _, err = run_cli(["judge", str(source), "--judges", "idk_lexical", "--out", str(out)], monkeypatch, capsys)
    assert code == 0, err
    assert [json.loads(line)["task_id"] for line in out.read_text().splitlines()] == [1, 2, 3]
    # ...and the results are valid input to the next command
    code, _, err = run_cli(["export", f"m={out}", "--out", str(tmp_path / "x.json")], monkeypatch, capsys)
    assert code == 0, err

    records[0]["task_id"] = 1.5
    source.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    code, _, err = run_cli(["judge", str(source), "--judges", "idk_lexical", "--out", str(out)], monkeypatch, capsys)
    assert code == 2
    assert _one_error_line(err) == f"error: {source}:1: field 'task_id': must be a string or an integer, got a number"


def test_heatmap_path_is_checked_before_any_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    started = time.perf_counter()
    # 10 million bootstrap resamples would take minutes: the mistake must be found before them
    code, _, err = run_cli(["correlate", str(HUMANS), "--bootstrap", "10000000", "--heatmap",
                            str(tmp_path / "x.jsonl")], monkeypatch, capsys)
    assert code == 2 and time.perf_counter() - started < 20
    assert _one_error_line(err) == (f"error: --heatmap {tmp_path / 'x.jsonl'}: the heatmap is an image; name it "
                                    "*.png or *.pdf or *.svg or *.jpg or *.jpeg")
    (tmp_path / "busy.png").mkdir()
    code, _, err = run_cli(["correlate", str(HUMANS), "--bootstrap", "10000000", "--heatmap",
                            str(tmp_path / "busy.png")], monkeypatch, capsys)
    assert code == 2 and "is a folder" in _one_error_line(err)


def test_a_huge_line_costs_about_its_size_and_a_limit_refuses_bigger_ones(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from ragjudge.formats.jsonl import read_jsonl

    words = (MINI / "corpus.jsonl").read_text(encoding="utf-8").split()
    text = " ".join(words * (20_000_000 // len(" ".join(words)) + 1))[:20_000_000]
    path = tmp_path / "big.jsonl"
    first = PREDICTIONS.read_text(encoding="utf-8").splitlines()[0]
    path.write_text(first + "\n" + json.dumps({"text": text}) + "\n" + json.dumps({"a": 2}) + "\n",
                    encoding="utf-8")
    del text
    tracemalloc.start()
    try:
        rows = [row for _, row in read_jsonl(path)]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(rows[1]["text"]) == 20_000_000
    assert peak < 3 * 20_000_000, f"reading a 20 MB line peaked at {peak / 1e6:.0f} MB"  # was the whole file twice

    monkeypatch.setenv("RAGJUDGE_MAX_LINE_MB", "5")
    code, _, err = run_cli(["judge", str(path)], monkeypatch, capsys)
    assert code == 2
    assert _one_error_line(err) == f"error: {path}:2: line longer than 5 MB (set RAGJUDGE_MAX_LINE_MB to allow more)"


# ------------------------------------------------------------------------------- every reader, one door

@pytest.mark.parametrize("bench, example, name", [("cdr", "cdr-mini", "queries.json"),
                                                  ("sentence-retrieval", "sentret-mini", "dialogues.json")])
def test_json_data_files_of_benches_name_line_and_byte_offset_of_a_bad_byte(
        bench: str, example: str, name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data"
    shutil.copytree(REPO / "examples" / example, data)
    raw = (data / name).read_bytes()
    at = raw.index(b"\n", 10) + 3
    line = raw[:at].count(b"\n") + 1
    (data / name).write_bytes(raw[:at] + b"\xff" + raw[at:])
    code, _, err = run_cli(["eval", "--bench", bench, "--data", str(data), "--out", str(tmp_path / "run")],
                           monkeypatch, capsys)
    assert code == 2
    assert _one_error_line(err) == (f"error: {data / name}:{line}: not UTF-8 text: byte 0xff at byte offset {at} (save "
                                    "the file as UTF-8)")


def test_a_models_file_that_is_not_utf8_or_not_yaml_names_the_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    models = tmp_path / "models.yaml"
    models.write_bytes(b"model_list:\n  - model_name: caf\xe9\n")
    args = ["eval", "--bench", str(MINI), "--gen", "local", "--models", str(models), "--out", str(tmp_path / "run")]
    code, _, err = run_cli(args, monkeypatch, capsys)
    assert code == 2
    assert _one_error_line(err) == (f"error: {models}:2: not UTF-8 text: byte 0xe9 at byte offset 31 (save the file "
                                    "as UTF-8)")
    models.write_text("model_list:\n  - model_name: x\n    litellm_params: {model: openai/x\n")
    code, _, err = run_cli(args, monkeypatch, capsys)
    assert code == 2 and _one_error_line(err).startswith(f"error: {models}:4: not valid YAML/JSON: ")


def test_a_mistyped_option_is_one_line_too(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["eval", "--bench", str(MINI), "--gen", "extractive", "--limit", "0"], monkeypatch, capsys)
    assert code == 2
    assert _one_error_line(err) == ("error: Invalid value for '--limit': Input should be greater than or equal to 1 "
                                    "(see ragjudge eval --help)")
    code, _, err = run_cli(["judge", "--frobnicate"], monkeypatch, capsys)
    assert code == 2 and _one_error_line(err).startswith("error: No such option: --frobnicate")


def test_an_error_before_any_progress_bar_is_the_only_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """No blank line from a progress display that never showed a bar (stderr piped)."""
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_bytes(b'{"_id": "d1", "text": "caf\xe9"}\n')
    code, _, err = run_cli(["retrieve", "--corpus", str(corpus), "--queries", str(MINI / "tasks.jsonl"),
                            "--pipeline", "bm25", "--index-dir", str(tmp_path / "idx"), "--out",
                            str(tmp_path / "run.jsonl")], monkeypatch, capsys)
    assert code == 2 and err.startswith("error: "), repr(err[:200])


def test_a_control_character_in_a_json_line_is_said_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task_id": "a\tb"}\n')
    code, _, err = run_cli(["judge", str(bad), "--out", str(tmp_path / "out.jsonl")], monkeypatch, capsys)
    assert code == 2
    assert _one_error_line(err) == f"error: {bad}:1: invalid JSON (Invalid control character at column 15)"


@pytest.mark.parametrize(("text", "message"), [
    ('{"a": "b}', ":1: invalid JSON (Unterminated string starting at column 7)"),  # json's message ends in "at"
    ('{\n  "a": 1,\n  "b": oops\n}', ":3: invalid JSON (Expecting value at column 8)"),
    ('{\n  "a": [1,', ":2: invalid JSON: the file ends in the middle of the document (truncated?)"),
    ("  \n", ": empty file, expected a JSON file"),
    ("[" * 100_000, ": invalid JSON (nested too deeply)"),
])
def test_a_whole_json_file_is_one_error_with_its_line_and_column(text: str, message: str, tmp_path: Path) -> None:
    """`read_json`, every bench's reader of a whole JSON document: the file, the line, the column, said once."""
    from ragjudge.errors import InputError
    from ragjudge.formats.jsonl import read_json

    path = tmp_path / "doc.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as error:
        read_json(path, "a JSON file")
    assert str(error.value) == f"{path}{message}"

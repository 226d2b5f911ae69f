"""The inputs users have and the names a run goes by (issue 41, item 4 and the file parts of item 2): a conversation
ending with the assistant's answer, TSV, gzip-compressed files, spreadsheets refused with what to do, CSV fields of
any length, DataFrames read as the CSV reader reads (JSON list cells, the index as ids), `ragjudge judge rows.csv`
writing `rows.judged.jsonl`, the name given to `--out` taken by report, correlate and export, no lock file left,
`judge --help` on plain records first, and `--criterion` adding to the default judges."""

from __future__ import annotations

import csv
import gzip
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import ragjudge
from conftest import REPO, ctrl_c_default, run_cli
from ragjudge.errors import InputError
from ragjudge.formats.rag_records import rag_records, read_rag_records
from ragjudge.testing.openai_server import OpenAIServer, Reply, Request

ROWS = REPO / "examples" / "rag-app" / "rows.csv"
MODEL_FLOATS = 1e-4


@pytest.fixture(scope="module")
def from_csv() -> ragjudge.EvalResult:
    return ragjudge.evaluate(ROWS, metrics=["rb_alg"], show_progress=False)


def values(result: ragjudge.EvalResult) -> list[dict[str, float]]:
    return [s.values() for s in result.samples]


def same_scores(result: ragjudge.EvalResult, want: ragjudge.EvalResult) -> None:
    for a, b in zip(values(result), values(want), strict=True):
        assert a.keys() == b.keys() and all(a[k] == pytest.approx(b[k], rel=MODEL_FLOATS) for k in a)


def one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# -- a conversation ending with the assistant's answer ---------------------------------------------------------------

CHAT = [{"role": "system", "content": "You answer insurance questions."},
        {"role": "user", "content": "Hi, I have policy 42."},
        {"role": "assistant", "content": "Hello! How can I help with policy 42?"},
        {"role": "user", "content": "What does it cover?"},
        {"role": "assistant", "content": "Water damage from burst pipes."}]


def test_a_conversation_ending_with_the_reply_is_judged_with_that_reply_as_its_answer() -> None:
    [record] = rag_records([{"messages": CHAT}])
    assert record.answer == "Water damage from burst pipes." and record.question == "What does it cover?"
    assert [t.speaker for t in record.turns] == ["user", "agent", "user"]  # what the judges see: before the answer
    [ragas] = rag_records([{"user_input": [{"type": "human" if m["role"] == "user" else "ai", "content": m["content"]}
                                           for m in CHAT[1:]]}])  # RAGAS's MultiTurnSample, as to_pandas holds it
    assert (ragas.turns, ragas.answer) == (record.turns, record.answer)
    reference = "Water damage from burst or leaking pipes."
    passages = ["Policy 42 covers water damage caused by burst or leaking pipes."]  # RB_alg's BertKPrec reads them
    ended = ragjudge.evaluate([{"messages": CHAT, "reference": reference, "contexts": passages}], metrics=["rb_alg"],
                              show_progress=False)
    apart = ragjudge.evaluate([{"messages": CHAT[:-1], "answer": CHAT[-1]["content"], "reference": reference,
                                "contexts": passages}], metrics=["rb_alg"], show_progress=False)
    same_scores(ended, apart)
    [sample] = ended.samples
    assert sample.output == "Water damage from burst pipes." and [m.role for m in sample.input] == \
        ["user", "assistant", "user"]


@pytest.mark.parametrize("record, message", [
    ({"messages": CHAT, "answer": "Something else."},
     "field 'messages': ends with the assistant's reply and the record gives an answer too"),
    ({"messages": CHAT[-1:]}, "field 'messages': holds only the assistant's reply"),
])
def test_a_conversation_ending_with_a_reply_and_an_answer_too_is_one_line(record: dict[str, Any],
                                                                           message: str) -> None:
    with pytest.raises(InputError) as info:
        ragjudge.evaluate([record], metrics=["rb_alg"], show_progress=False)
    assert str(info.value).startswith("data[0]: " + message), str(info.value)


# -- TSV, gzip, spreadsheets, long fields ----------------------------------------------------------------------------

def test_tsv_records_are_read_as_the_csv_is(from_csv: ragjudge.EvalResult, tmp_path: Path) -> None:
    tsv = tmp_path / "rows.tsv"
    pd.read_csv(ROWS).to_csv(tsv, sep="\t", index=False)
    assert "\t" in tsv.read_text().splitlines()[0]
    same_scores(ragjudge.evaluate(tsv, metrics=["rb_alg"], show_progress=False), from_csv)


@pytest.mark.parametrize("name", ["rows.csv.gz", "rows.jsonl.gz", "rows.tsv.gz", "rows.json.gz"])
def test_gzip_compressed_records_are_read_decompressed(name: str, from_csv: ragjudge.EvalResult,
                                                       tmp_path: Path, monkeypatch, capsys) -> None:
    frame = pd.read_csv(ROWS)
    inner = {"rows.csv.gz": lambda: ROWS.read_bytes(),
             "rows.tsv.gz": lambda: frame.to_csv(sep="\t", index=False).encode(),
             "rows.jsonl.gz": lambda: "".join(json.dumps(r) + "\n" for r in _plain_rows()).encode(),
             "rows.json.gz": lambda: json.dumps(_plain_rows()).encode()}[name]()
    path = tmp_path / name
    path.write_bytes(gzip.compress(inner))
    same_scores(ragjudge.evaluate(path, metrics=["rb_alg"], show_progress=False), from_csv)
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli(["judge", name, "--judges", "rb_alg", "--format", "json"], monkeypatch, capsys)
    assert code == 0, err
    assert (tmp_path / "rows.judged.samples.jsonl").is_file()  # named after the records, not rows.csv.gz


def test_mtrag_predictions_gzip_compressed_give_the_same_figures(tmp_path: Path, monkeypatch, capsys) -> None:
    predictions = REPO / "tests" / "fixtures" / "mtrag" / "generation" / "responses-10.jsonl"
    (tmp_path / "responses-10.jsonl.gz").write_bytes(gzip.compress(predictions.read_bytes()))
    monkeypatch.chdir(tmp_path)
    figures = []
    for given in (str(predictions), "responses-10.jsonl.gz"):
        code, out, err = run_cli(["judge", given, "--judges", "idk_lexical", "--format", "json", "--out",
                                  f"{len(figures)}.jsonl"], monkeypatch, capsys)
        assert code == 0, err
        figures.append(json.loads(out)["metrics"])
    assert figures[0] == figures[1] and figures[0]["idk_lexical"]["n"] == 10


def test_eval_names_its_run_folder_after_the_records_inside_the_gz(tmp_path: Path) -> None:
    from ragjudge.api import prepare_run

    path = tmp_path / "rows.csv.gz"
    path.write_bytes(gzip.compress(ROWS.read_bytes()))
    assert prepare_run("rag", data=path, judges=["rb_alg"]).default_out() == Path("runs") / "rag-rows"


def test_a_damaged_gzip_file_is_one_line_naming_it(tmp_path: Path, monkeypatch, capsys) -> None:
    cut = tmp_path / "cut.csv.gz"
    cut.write_bytes(gzip.compress(ROWS.read_bytes())[:60])
    plain = tmp_path / "plain.csv.gz"
    plain.write_bytes(ROWS.read_bytes())  # named .gz, not compressed
    for path, reason in ((cut, "a damaged or cut-off gzip file"), (plain, "not a gzip file")):
        code, _, err = run_cli(["judge", str(path), "--judges", "rb_alg", "--out", str(tmp_path / "x.jsonl")],
                               monkeypatch, capsys)
        assert code == 2 and one_error_line(err).startswith(f"error: {path}: {reason}"), err


@pytest.mark.parametrize("suffix", [".xlsx", ".xls"])
def test_a_spreadsheet_workbook_is_refused_with_save_it_as_csv(suffix: str, tmp_path: Path, monkeypatch,
                                                               capsys) -> None:
    book = tmp_path / f"rows{suffix}"
    book.write_bytes(b"PK\x03\x04\x14\x00\x06\x00" + bytes(range(256)))  # a workbook's zip header, not text
    code, out, err = run_cli(["judge", str(book), "--judges", "rb_alg"], monkeypatch, capsys)
    assert code == 2 and out == ""
    assert one_error_line(err) == (f"error: {book}: a spreadsheet workbook ({suffix}) is not read: save it as CSV "
                                   "(UTF-8) and give the .csv")
    with pytest.raises(InputError, match="save it as CSV"):
        ragjudge.evaluate(book, metrics=["rb_alg"], show_progress=False)


def test_a_csv_answer_longer_than_the_csv_modules_limit_is_read(tmp_path: Path) -> None:
    default = csv.field_size_limit()
    long_answer = "Policy 42 covers water damage. " * 8000  # 248,000 characters: over csv's 131,072
    assert len(long_answer) > default
    path = tmp_path / "long.csv"
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["question", "answer", "contexts"])
        writer.writerow(["What does policy 42 cover?", long_answer, json.dumps(["Policy 42 covers water damage."])])
    [record] = read_rag_records(path)
    assert record.answer == long_answer
    assert csv.field_size_limit() == default  # raised for the read only, then put back


def test_a_csv_field_over_the_line_limit_is_one_line_naming_the_setting(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("RAGJUDGE_MAX_LINE_MB", "1")
    path = tmp_path / "huge.csv"
    path.write_text('question,answer\nq,"' + "many lines\n" * 120_000 + '"\n')  # each line short, the field 1.3 MB
    with pytest.raises(InputError) as info:
        read_rag_records(path)
    assert str(info.value).startswith(f"{path}:") and "a CSV field longer than 1 MB (set RAGJUDGE_MAX_LINE_MB" in \
        str(info.value)


# -- DataFrames ------------------------------------------------------------------------------------------------------

def _plain_rows() -> list[dict[str, Any]]:
    with ROWS.open(newline="") as fh:
        return [{**r, "contexts": json.loads(r["contexts"]), "labels": json.loads(r["labels"])}
                for r in csv.DictReader(fh)]


def test_the_docs_dataframe_snippet_reads_json_list_cells_as_the_csv_reader(from_csv: ragjudge.EvalResult) -> None:
    df = pd.read_csv(ROWS)  # docs/your-rag-app.md: contexts and labels are JSON texts in their cells
    assert isinstance(df["contexts"][0], str)
    result = ragjudge.evaluate(df, metrics=["rb_alg"], show_progress=False)
    same_scores(result, from_csv)
    assert [s.id for s in result.samples] == ["1", "2", "3", "4", "5", "6"]
    assert set(result.summary.breakdowns) == {"topic"}  # the labels cell was read as an object
    df.loc[2, "contexts"] = "[unclosed"
    with pytest.raises(InputError) as info:
        ragjudge.evaluate(df, metrics=["rb_alg"], show_progress=False)
    assert str(info.value) == "data[2]: field 'contexts': must be a JSON list or object (or a Python list literal)"


def test_a_filtered_dataframe_keeps_its_index_as_the_sample_ids(from_csv: ragjudge.EvalResult) -> None:
    df = pd.read_csv(ROWS)
    picked = df.loc[[5, 3, 1]]
    result = ragjudge.evaluate(picked, metrics=["rb_alg"], show_progress=False)
    assert [s.id for s in result.samples] == ["5", "3", "1"]
    want = {str(i): v for i, v in zip(range(6), values(from_csv), strict=True)}  # row i of the file is index i
    for sample in result.samples:
        assert sample.values()["RB_agg"] == pytest.approx(want[sample.id]["RB_agg"], rel=MODEL_FLOATS)
    joined = picked.join(result.to_pandas().set_index("sample_id")[["RB_agg"]].rename(index=int))
    assert list(joined["answer"]) == list(df.loc[[5, 3, 1], "answer"])  # joins back on the index
    assert [s.id for s in ragjudge.evaluate(df.assign(id=["a", "b", "c", "d", "e", "f"]).loc[[4, 2]],
                                            metrics=["rb_alg"], show_progress=False).samples] == ["e", "c"]
    assert [s.id for s in ragjudge.evaluate(picked.reset_index(drop=True), metrics=["rb_alg"],
                                            show_progress=False).samples] == ["1", "2", "3"]
    twice = pd.concat([df.loc[[0, 1]], df.loc[[0]]])  # index 0, 1, 0: the ids would repeat
    with pytest.raises(InputError) as info:
        ragjudge.evaluate(twice, metrics=["rb_alg"], show_progress=False)
    assert str(info.value) == ("data: the DataFrame's index repeats 0, and its index gives the sample ids: make it "
                               "unique, give an id column, or pass df.reset_index(drop=True)")


# -- output names, the locator, the lock -----------------------------------------------------------------------------

def test_judge_rows_csv_writes_rows_judged_jsonl_as_the_docs_say(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(["judge", str(ROWS), "--judges", "rb_alg"], monkeypatch, capsys)
    assert code == 0, err
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == ["rows.judged.csv", "rows.judged.judgements.jsonl", "rows.judged.parquet", "rows.judged.run.json",
                       "rows.judged.samples.jsonl", "rows.judged.summary.json"]  # no lock left behind
    assert "samples: rows.judged.samples.jsonl" in out + err
    assert ragjudge.load_run("rows.judged.jsonl").summary.n_samples == 6


def _humans(path: Path, model: str) -> Path:
    """Human ratings of the six rows (InspectorRAGet's format) for `model`: what `correlate` measures judges by."""
    ratings = [4, 2, 4, 1, 3, 4]
    path.write_text(json.dumps({
        "name": "rag-app ratings", "models": [{"model_id": model, "name": model}],
        "metrics": [{"name": "quality", "display_name": "Quality", "author": "human", "type": "numerical",
                     "aggregator": "average", "range": [1, 4, 1]}],
        "documents": [], "tasks": [{"task_id": str(i), "task_type": "rag", "input": [{"speaker": "user", "text": "q"}]}
                                   for i in range(1, 7)],
        "evaluations": [{"task_id": str(i), "model_id": model, "model_response": "a",
                         "annotations": {"quality": {"ann1": {"value": r}}}} for i, r in enumerate(ratings, 1)]}))
    return path


@pytest.mark.parametrize("name", ["run", "run.jsonl"])
def test_the_name_given_to_out_is_what_report_correlate_and_export_take(name: str, tmp_path: Path, monkeypatch,
                                                                       capsys) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli(["judge", str(ROWS), "--judges", "rb_alg", "--out", name], monkeypatch, capsys)
    assert code == 0, err
    assert not Path(name).exists() and Path("run.samples.jsonl").is_file()  # plain records: no results file
    code, _, err = run_cli(["report", name, "--out", "report.html"], monkeypatch, capsys)
    assert code == 0 and "report: report.html (6 tasks, 1 run(s)" in err, err
    code, out, err = run_cli(["correlate", str(_humans(tmp_path / "humans.json", "run")), "--judges", name,
                              "--bootstrap", "0", "--format", "json"], monkeypatch, capsys)
    assert code == 0, err
    [row] = [r for r in json.loads(out)["correlations"] if r["judge"] == "RB_agg"]
    assert row["n"] == 6 and row["human"] == "quality"
    (tmp_path / "labels.csv").write_text("sample_id,RB_agg\n1,0.8\n2,0.1\n3,0.2\n4,0.9\n", encoding="utf-8")
    code, out, err = run_cli(["correlate", name, "--labels", "labels.csv", "--format", "json"], monkeypatch, capsys)
    assert code == 0, err
    code, _, err = run_cli(["correlate", name], monkeypatch, capsys)  # a run, no labels: says what it takes
    assert code == 2 and one_error_line(err).startswith(f"error: {name} is a run, not human ratings: "), err
    assert f"ragjudge correlate {name} --labels FILE" in err
    code, _, err = run_cli(["export", name, "--out", "inspect.json"], monkeypatch, capsys)
    assert code == 0 and err.startswith("wrote inspect.json: 6 tasks, 1 model(s) (run)"), err
    assert ragjudge.load_run(name).summary.n_samples == 6
    code, _, err = run_cli(["report", "nothing", "--out", "x.html"], monkeypatch, capsys)
    assert code == 2 and one_error_line(err) == "error: nothing: no such run folder or results file"


def test_no_lock_file_is_left_after_a_run_that_ends_or_fails(tmp_path: Path, monkeypatch, capsys) -> None:
    out = tmp_path / "scored.jsonl"
    code, _, err = run_cli(["judge", str(ROWS), "--judges", "rb_alg", "--out", str(out)], monkeypatch, capsys)
    assert code == 0, err
    assert not (tmp_path / "scored.lock").exists()
    folder = tmp_path / "run"
    code, _, err = run_cli(["eval", "--bench", "rag", "--data", str(ROWS), "--judges", "rb_alg", "--out", str(folder)],
                           monkeypatch, capsys)
    assert code == 0, err
    assert not (folder / ".ragjudge.lock").exists() and (folder / "samples.jsonl").is_file()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with OpenAIServer(lambda request: Reply(status=400, content="no")) as server:  # every call fails: exit 1
        code, _, err = run_cli(["judge", str(ROWS), "--judges", "faithfulness", "--judge-models", "openai/j",
                                "--api-base", server.base_url, "--no-preflight", "--out", str(tmp_path / "bad.jsonl"),
                                "--cache-dir", str(tmp_path / "cache")], monkeypatch, capsys)
    assert code == 1, err
    assert (tmp_path / "bad.samples.jsonl").is_file() and not (tmp_path / "bad.lock").exists()


def test_a_lock_is_taken_again_once_its_holder_has_removed_it(tmp_path: Path) -> None:
    from ragjudge.engine.outputs import OutputLock
    from ragjudge.errors import UsageError

    path = tmp_path / "run.lock"
    with OutputLock(path, tmp_path / "run.jsonl"):
        assert path.read_text() == str(os.getpid())
        with pytest.raises(UsageError, match="is in use by another ragjudge run"), OutputLock(path):
            pass
    assert not path.exists()
    path.write_text("12345")  # left by a run killed with SIGKILL: taken over
    with OutputLock(path):
        assert path.read_text() == str(os.getpid())
    assert not path.exists()


def test_ctrl_c_leaves_no_lock_file(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    env = {**os.environ, "OPENAI_API_KEY": "sk-test", "RAGJUDGE_CACHE_DIR": str(tmp_path / "cache"),
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    with OpenAIServer(lambda request: "{}", latency=3.0) as server:
        proc = subprocess.Popen([sys.executable, "-m", "ragjudge", "judge", str(ROWS), "--judges", "faithfulness",
                                 "--judge-models", "openai/j", "--api-base", server.base_url, "--no-preflight",
                                 "--concurrency", "1", "--out", str(out)], env=env, cwd=tmp_path,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=ctrl_c_default)
        deadline = time.time() + 60
        while server.in_flight == 0 and time.time() < deadline and proc.poll() is None:
            time.sleep(0.02)
        assert server.in_flight > 0, proc.communicate()[1]  # one call of many in flight: the run holds its lock
        assert (tmp_path / "run.lock").exists()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert not (tmp_path / "run.lock").exists()


# -- judge --help and --criterion ------------------------------------------------------------------------------------

def test_judge_help_describes_plain_records_first_with_the_defaults_it_uses(monkeypatch, capsys) -> None:
    code, out, _ = run_cli(["judge", "--help"], monkeypatch, capsys)
    assert code == 0
    text = " ".join(out.split())
    plain, mtrag = text.index("Plain records"), text.index("MTRAG predictions")
    assert plain < mtrag
    assert "rb_alg offline" in text[plain:mtrag]
    assert all(m in text[plain:mtrag] for m in ("faithfulness", "answer_relevancy", "context_precision",
                                                "context_recall", "answer_correctness"))
    assert "idk_lexical,rb_alg offline and idk,rb_alg,rb_llm,rl_f with judge models" in text[mtrag:]
    assert "A --criterion is added to these (or to --judges)" in text
    assert "(rows.csv: rows.judged.jsonl)" in text


def test_a_criterion_adds_to_the_default_judges_unless_judges_are_named() -> None:
    from ragjudge.api import prepare_judging

    criterion = ["cites_policy=Does the answer cite the policy number it relies on?"]
    defaults = ["faithfulness", "answer_relevancy", "context_precision", "context_recall", "answer_correctness"]

    def judges(**kw: Any) -> list[str]:
        return [j.name for j in prepare_judging(ROWS, None, criteria=criterion, **kw).bench.judges]

    assert judges(judge_models=["openai/j"]) == [*defaults, "cites_policy"]
    assert judges(judge_models=["openai/j"], judges=["faithfulness"]) == ["faithfulness", "cites_policy"]
    assert [j.name for j in prepare_judging(ROWS, None, judge_models=["openai/j"]).bench.judges] == defaults
    cites = ragjudge.criterion("Does the answer cite the policy number it relies on?", name="cites_policy")
    from ragjudge.api.evaluate import split_criteria
    assert split_criteria([cites]) == (["cites_policy"], [cites])  # from Python, the list is the judges asked for


def test_on_the_command_line_a_criterion_runs_beside_the_ragas_metrics(tmp_path: Path, monkeypatch, capsys) -> None:
    from ragjudge.testing.ragas_model import ragas_model

    def steps(request: Request) -> str:
        return "1. Look for a policy number."

    def score(request: Request) -> str:
        return "5" if "42" in request.last_user.rsplit("Evaluation criterion", 1)[-1] else "1"

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with OpenAIServer(ragas_model([("Write the evaluation steps", steps), ("Evaluation criterion", score)])) as server:
        code, out, err = run_cli(["judge", str(ROWS), "--criterion", "cites_policy=Does the answer cite the policy "
                                  "number?", "--judge-models", "openai/judge", "--api-base", server.base_url,
                                  "--out", str(tmp_path / "run"), "--format", "json",
                                  "--cache-dir", str(tmp_path / "cache")], monkeypatch, capsys)
    assert code == 0, err
    figures = json.loads(out)["metrics"]
    assert {"faithfulness", "answer_relevancy", "context_precision", "context_recall", "answer_correctness",
            "cites_policy"} <= set(figures)

"""DialSim data: the published layouts (pickle, JSON, parquet) and ragjudge's JSONL read to the same samples;
bad or missing data is one line naming where, with where to get the data."""

from __future__ import annotations

import json
import pickle
import shutil
from pathlib import Path

import pytest
from conftest import run_cli
from dialsim_helpers import MINI_DIR, SHOWS_FILE, as_parquet, as_pickles, nested

from ragjudge.bench.dialsim import layouts
from ragjudge.bench.dialsim.bench import DialSimBench, DialSimOptions
from ragjudge.bench.dialsim.longdialqa import read_jsonl_show, write_jsonl_show
from ragjudge.errors import InputError, UsageError


def samples(data: Path, **options: object) -> list[dict]:
    bench = DialSimBench(DialSimOptions(data=str(data), gen="mc-lexical", seeds=[0, 1], **options))
    return [q.model_dump() for q in bench.load()]


def sessions(data: Path) -> list[dict]:
    [(show, (layout, path))] = layouts.find_shows(data).items()
    return [s.record() for s in layouts.read_show(show, layout, path).sessions]


def test_pickle_parquet_json_and_jsonl_load_to_the_same_samples(tmp_path: Path) -> None:
    from_json = samples(MINI_DIR)
    pickles = as_pickles(tmp_path / "pickle")
    parquet = as_parquet(tmp_path / "parquet")
    jsonl = tmp_path / "jsonl"
    jsonl.mkdir()
    shutil.copy(SHOWS_FILE, jsonl)
    show = layouts.read_show("mini", *layouts.find_shows(pickles)["mini"])
    write_jsonl_show(show, jsonl / "mini_dialsim.jsonl")
    assert layouts.find_shows(pickles)["mini"][0] == "pickle"
    assert layouts.find_shows(parquet)["mini"][0] == "parquet"
    assert len(from_json) > 20 and {q["source"] for q in from_json} == {"fan", "temporal"}
    assert all(q["evidence_sessions"] is not None for q in from_json)
    for other in (pickles, parquet, jsonl):
        assert samples(other) == from_json
        assert sessions(other) == sessions(MINI_DIR)


def test_parquet_without_oracle_has_no_evidence_and_oracle_memory_says_so(tmp_path: Path) -> None:
    parquet = as_parquet(tmp_path, oracle=False)
    bare = sessions(parquet)
    full = sessions(MINI_DIR)
    strip = lambda ss: [{**s, "hard_q": {t: [{**q, "evidence_dates": None} for q in qs] for t, qs in s["hard_q"].items()},
                         "easy_q": {t: [{**q, "evidence_dates": None} for q in qs] for t, qs in s["easy_q"].items()}}
                        for s in ss]
    assert bare == strip(full)
    with pytest.raises(UsageError, match="memory=oracle needs the evidence dates of the oracle pickles"):
        samples(parquet, memory="oracle")


def test_missing_data_names_where_to_get_it(tmp_path: Path, monkeypatch, capsys) -> None:
    code, _, err = run_cli(["eval", "--bench", "dialsim", "--data", str(tmp_path / "nowhere"), "--gen", "mc-idk"],
                           monkeypatch, capsys)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert "does not exist" in err and "github.com/jiho283/Simulator" in err and "jiho283/dialsim-friends" in err
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = run_cli(["eval", "--bench", "dialsim", "--data", str(empty), "--gen", "mc-idk"], monkeypatch, capsys)
    assert code == 2 and err.startswith("error: no DialSim data in") and err.count("\n") == 1
    monkeypatch.delenv("RAGJUDGE_DIALSIM_DATA", raising=False)
    code, _, err = run_cli(["eval", "--bench", "dialsim", "--gen", "mc-idk"], monkeypatch, capsys)
    assert code == 2 and "needs --data FOLDER" in err and err.count("\n") == 1


def test_bad_json_field_is_one_line_with_its_place(tmp_path: Path, monkeypatch, capsys) -> None:
    data = nested()
    data["S01E02"]["2"]["easy_q"]["before_event_unans"]["0"]["options"] = "Tulips"
    shutil.copy(SHOWS_FILE, tmp_path)
    (tmp_path / "mini_dialsim.json").write_text(json.dumps(data))
    code, _, err = run_cli(["eval", "--bench", "dialsim", "--data", str(tmp_path), "--gen", "mc-idk"],
                           monkeypatch, capsys)
    assert code == 2 and err.count("\n") == 1
    assert "mini_dialsim.json: field 'S01E02/2.easy_q.before_event_unans.0.options': expected a list" in err


def test_bad_jsonl_line_names_file_line_and_field(tmp_path: Path) -> None:
    show = layouts.read_show("mini", "json", MINI_DIR / "mini_dialsim.json")
    path = tmp_path / "mini_dialsim.jsonl"
    write_jsonl_show(show, path)
    lines = path.read_text().splitlines()
    record = json.loads(lines[2])
    record["date"] = 20210306
    lines[2] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as info:
        read_jsonl_show(path)
    assert str(info.value).startswith(f"{path}:3: field 'date'")


class NotPlainData:
    pass


def test_pickles_load_plain_data_only(tmp_path: Path) -> None:
    shutil.copy(SHOWS_FILE, tmp_path)
    (tmp_path / "mini_dialsim.pickle").write_bytes(pickle.dumps({"S01E01": {1: NotPlainData()}}))
    with pytest.raises(InputError, match="NotPlainData object; only plain data is loaded"):
        layouts.read_show("mini", "pickle", tmp_path / "mini_dialsim.pickle")
    (tmp_path / "mini_dialsim.pickle").write_bytes(b"not a pickle")
    with pytest.raises(InputError, match="cannot read this pickle"):
        layouts.read_show("mini", "pickle", tmp_path / "mini_dialsim.pickle")


def test_questions_with_fewer_than_five_options_are_skipped_and_counted(tmp_path: Path) -> None:
    data = nested()
    data["S01E01"]["1"]["hard_q"]["past"] = [{"questions": {"default": "Who?"}, "options": ["A", "B"], "answer": "A"}]
    shutil.copy(SHOWS_FILE, tmp_path)
    (tmp_path / "mini_dialsim.json").write_text(json.dumps(data))
    show = layouts.read_show("mini", "json", tmp_path / "mini_dialsim.json")
    assert show.skipped_questions == 1 and "past" not in show.sessions[0].hard_q


def test_convert_writes_jsonl_that_eval_reads(tmp_path: Path, monkeypatch, capsys) -> None:
    source = as_pickles(tmp_path / "pickles")
    out = tmp_path / "converted"
    code, stdout, err = run_cli(["dialsim", "convert", "--data", str(source), "--out", str(out), "--format", "json"],
                                monkeypatch, capsys)
    assert code == 0, err
    [report] = json.loads(stdout)
    assert report["layout"] == "pickle" and report["sessions"] == 16 and report["oracle_dates"] is True
    assert (out / "mini_dialsim.jsonl").read_text().count("\n") == 16
    assert json.loads((out / "dialsim_shows.json").read_text()) == json.loads(SHOWS_FILE.read_text())
    code, stdout, err = run_cli(["eval", "--bench", "dialsim", "--data", str(out), "--gen", "mc-lexical",
                                 "--out", str(tmp_path / "run"), "--format", "json"], monkeypatch, capsys)
    assert code == 0, err
    assert json.loads(stdout)["n_samples"] == sum(q["seed"] == 0 for q in samples(MINI_DIR))
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["data"]["mini"]["layout"] == "jsonl" and run["data"]["mini"]["oracle"] is True


def test_convert_then_eval_on_the_example_show(tmp_path: Path, monkeypatch, capsys) -> None:
    """`convert` wrote {show}_dialsim.jsonl only, and eval refused the folder (no dialsim_shows.json): convert
    now writes the show descriptions eval needs, so convert -> eval runs as is, with the same questions."""
    out = tmp_path / "converted"
    code, _, err = run_cli(["dialsim", "convert", "--data", str(MINI_DIR), "--out", str(out)], monkeypatch, capsys)
    assert code == 0 and err == "", err
    assert sorted(p.name for p in out.iterdir()) == ["dialsim_shows.json", "mini_dialsim.jsonl"]
    runs = {}
    for name, data in (("converted", out), ("original", MINI_DIR)):
        code, stdout, err = run_cli(["eval", "--bench", "dialsim", "--data", str(data), "--gen", "mc-lexical",
                                     "-T", "seeds=0,1", "--out", str(tmp_path / name), "--format", "json"],
                                    monkeypatch, capsys)
        assert code == 0, err
        runs[name] = json.loads(stdout)
    assert (tmp_path / "converted" / "plan.jsonl").read_text() == (tmp_path / "original" / "plan.jsonl").read_text()
    assert timeless(runs["converted"]) == timeless(runs["original"])
    # converting into the folder again keeps its descriptions; converting it onto itself is refused
    code, _, err = run_cli(["dialsim", "convert", "--data", str(MINI_DIR), "--out", str(out)], monkeypatch, capsys)
    assert code == 0 and json.loads((out / "dialsim_shows.json").read_text()) == json.loads(SHOWS_FILE.read_text())
    code, _, err = run_cli(["dialsim", "convert", "--data", str(out), "--out", str(out)], monkeypatch, capsys)
    assert code == 2 and "--out would overwrite the input" in err
    broken = tmp_path / "broken"
    shutil.copytree(MINI_DIR, broken)
    (broken / "mini_oracle_fan.json").write_text("{")
    code, _, err = run_cli(["dialsim", "convert", "--data", str(broken), "--out", str(tmp_path / "never")],
                           monkeypatch, capsys)
    assert code == 2 and err.count("\n") == 1 and "mini_oracle_fan.json:1: invalid JSON" in err
    assert not (tmp_path / "never").exists()


def timeless(summary: dict) -> list:
    """A summary's figures but the measured latencies."""
    def drop(metrics: dict) -> dict:
        return {k: v for k, v in metrics.items() if not k.startswith("latency_")}
    return [drop(summary["metrics"])] + [{g: drop(group["metrics"]) for g, group in b["groups"].items()}
                                         for b in summary["breakdowns"].values()]


def test_convert_out_must_be_a_folder(tmp_path: Path, monkeypatch, capsys) -> None:
    """`--out FILE` where FILE exists ended in `EEXIST` (exit 3) after reading the data: a usage error now,
    before any work."""
    target = tmp_path / "converted.jsonl"
    target.write_text("mine\n")
    code, stdout, err = run_cli(["dialsim", "convert", "--data", str(tmp_path / "nowhere"), "--out", str(target)],
                                monkeypatch, capsys)
    assert code == 2 and err.count("\n") == 1 and stdout == "", err
    assert err.startswith(f"error: --out {target} is a file: --out must be a folder")  # before --data is looked at
    assert target.read_text() == "mine\n"
    blocked = tmp_path / "converted.jsonl" / "inside"
    code, _, err = run_cli(["dialsim", "convert", "--data", str(MINI_DIR), "--out", str(blocked)], monkeypatch, capsys)
    assert code == 2 and err.count("\n") == 1 and "is a file, so" in err


def test_convert_of_a_show_without_description_warns(tmp_path: Path, monkeypatch, capsys) -> None:
    data = tmp_path / "data"
    data.mkdir()
    shutil.copy(MINI_DIR / "mini_dialsim.json", data / "harbor_dialsim.json")
    code, _, err = run_cli(["dialsim", "convert", "--data", str(data), "--out", str(tmp_path / "out")],
                           monkeypatch, capsys)
    assert code == 0 and err.startswith("warning: show 'harbor' is not one of friends, bigbang, theoffice")
    assert not (tmp_path / "out" / "dialsim_shows.json").exists()


def test_unknown_show_needs_a_description(tmp_path: Path) -> None:
    shutil.copy(MINI_DIR / "mini_dialsim.json", tmp_path / "harbor_dialsim.json")
    with pytest.raises(UsageError, match="show 'harbor' is not one of .*dialsim_shows.json"):
        samples(tmp_path)


# -- every data file of the example show, broken one way at a time -------------------------------------------

FIELD_CASES = {  # file -> (wrong-typed, out-of-range): (path to the value, value, field named, message)
    "dialsim_shows.json": ((["mini", "agent"], 5, "mini.agent", "Input should be a valid string"),
                           (["mini", "agent"], "", "mini.agent", "String should have at least 1 character")),
    "mini_dialsim.json": ((["S01E02", "2", "date"], 20210321, "S01E02/2.date", "expected text, got a number"),
                          (["S01E02", "2", "date"], "March 45, 2021", "S01E02/2.date",
                           "'March 45, 2021' is not a date: day 45 is out of range for March 2021 (1-31)")),
    "mini_oracle_tkg.json": ((["S01E01", "3", "past", "0"], 5, "S01E01/3/past/0",
                              "expected an evidence date or a list of them, got a number"),
                             (["S01E01", "3", "past", "0"], ["February 29, 2021"], "S01E01/3/past/0[0]",
                              "'February 29, 2021' is not a date: day 29 is out of range for February 2021 (1-28)")),
    "mini_oracle_fan.json": ((["S01E01", "3", "ans_w_time", "0"], {"date": "March 4, 2021"}, "S01E01/3/ans_w_time/0",
                              "expected an evidence date or a list of them, got an object"),
                             (["S01E01", "3", "ans_w_time", "0"], ["March 0, 2021"], "S01E01/3/ans_w_time/0[0]",
                              "'March 0, 2021' is not a date: day 0 is out of range for March 2021 (1-31)")),
}
CASES = ("empty", "non-utf8", "truncated", "folder", "wrong-type", "out-of-range")


def break_file(path: Path, case: str, fields: tuple = ()) -> str:
    """Break `path` one way; what the error line must start with (after `error: `)."""
    text = path.read_text(encoding="utf-8")
    if case == "empty":
        path.write_text("")
        return f"{path}: "
    if case == "non-utf8":  # a bad byte inside the second line's text
        at = text.index("\n", text.index("\n") + 1) - 3
        path.write_bytes(text[:at].encode() + b"\xff" + text[at:].encode())
        return (f"{path}:{text[:at].count(chr(10)) + 1}: not UTF-8 text: byte 0xff at byte offset "
                f"{len(text[:at].encode())}")
    if case == "truncated":  # cut in the middle of a line
        at = text.index("\n", len(text) // 2) - 5
        path.write_text(text[:at])
        return f"{path}:{text[:at].count(chr(10)) + 1}: invalid JSON"
    if case == "folder":
        path.unlink()
        path.mkdir()
        return f"{path}: is a folder"
    keys, value, field, message = fields[case == "out-of-range"]
    if path.suffix == ".jsonl":  # keys: [line index, key]
        lines = text.splitlines()
        record = json.loads(lines[keys[0]])
        record[keys[1]] = value
        lines[keys[0]] = json.dumps(record)
        path.write_text("\n".join(lines) + "\n")
        return f"{path}:{keys[0] + 1}: field '{field}': {message}"
    data = json.loads(text)
    node = data
    for key in keys[:-1]:
        node = node[key]
    node[keys[-1]] = value
    path.write_text(json.dumps(data, indent=1))
    return f"{path}: field '{field}': {message}"


def expect_one_line(err: str, expected: str, out: Path) -> None:
    assert err.count("\n") == 1 and "Traceback" not in err and "internal error" not in err, err
    assert err.startswith(f"error: {expected}"), err
    assert not out.exists()  # nothing written as a result


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("name", list(FIELD_CASES))
def test_each_example_data_file_broken_is_one_line(tmp_path: Path, monkeypatch, capsys, name: str, case: str) -> None:
    data = tmp_path / "data"
    shutil.copytree(MINI_DIR, data)
    expected = break_file(data / name, case, FIELD_CASES[name])
    out = tmp_path / "run"
    code, stdout, err = run_cli(["eval", "--bench", "dialsim", "--data", str(data), "--gen", "mc-lexical",
                                 "--out", str(out)], monkeypatch, capsys)
    assert code == 2 and stdout == "", err
    expect_one_line(err, expected, out)


JSONL_FIELDS = (([2, "date"], ["March 6"], "date", "Input should be a valid string"),
                ([2, "date"], "February 30, 2021", "date",
                 "'February 30, 2021' is not a date: day 30 is out of range for February 2021 (1-28)"))
PLAN_FIELDS = (([1, "session"], "third", "session", "Input should be a valid integer"),
               ([1, "session"], 99, "session", "session 99 (S01E01/2) is not in the data"))


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("name", ["mini_dialsim.jsonl", "plan.jsonl"])
def test_converted_data_and_plan_broken_are_one_line(tmp_path: Path, monkeypatch, capsys, name: str,
                                                     case: str) -> None:
    data = tmp_path / "data"
    data.mkdir()
    shutil.copy(SHOWS_FILE, data)
    write_jsonl_show(layouts.read_show("mini", "json", MINI_DIR / "mini_dialsim.json"), data / "mini_dialsim.jsonl")
    from ragjudge.bench.dialsim.plan import plan_text

    bench = DialSimBench(DialSimOptions(data=str(data), gen="mc-lexical"))
    (data / "plan.jsonl").write_text(plan_text(bench.load()))
    expected = break_file(data / name, case, JSONL_FIELDS if name.startswith("mini") else PLAN_FIELDS)
    if case == "empty":
        expected += "no sessions" if name.startswith("mini") else "the plan has no questions"
    out = tmp_path / "run"
    code, stdout, err = run_cli(["eval", "--bench", "dialsim", "--data", str(data), "--gen", "mc-lexical",
                                 "-T", f"plan={data / 'plan.jsonl'}", "--out", str(out)], monkeypatch, capsys)
    assert code == 2 and stdout == "", err
    expect_one_line(err, expected, out)


@pytest.mark.parametrize("case", ["empty", "truncated", "folder"])
@pytest.mark.parametrize("layout", ["pickle", "oracle pickle", "parquet"])
def test_binary_layouts_broken_are_one_line(tmp_path: Path, monkeypatch, capsys, layout: str, case: str) -> None:
    if layout == "parquet":
        folder = as_parquet(tmp_path / "data")
        path = folder / "dialsim-mini" / "data" / "train-00000-of-00001.parquet"
    else:
        folder = as_pickles(tmp_path / "data")
        path = folder / ("mini_dialsim.pickle" if layout == "pickle" else "mini_oracle_tkg.pickle")
    if case == "empty":
        path.write_bytes(b"")
        expected = f"{path}: " + ("cannot read parquet" if layout == "parquet" else "empty file, expected a pickle")
    elif case == "truncated":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
        expected = f"{path}: cannot read " + ("parquet" if layout == "parquet" else "this pickle")
    else:
        path.unlink()
        path.mkdir()
        expected = f"{path}: is a folder"
    out = tmp_path / "run"
    code, _, err = run_cli(["eval", "--bench", "dialsim", "--data", str(folder), "--gen", "mc-lexical",
                            "--out", str(out)], monkeypatch, capsys)
    assert code == 2, err
    expect_one_line(err, expected, out)


@pytest.mark.parametrize(("option", "value", "message"), [
    ("seed", "-1", "-T seed must be a whole number >= 0, got -1"),
    ("seeds", "0,-2", "-T seeds: each value must be a whole number >= 0, got '-2'"),
    ("seeds", "1,1", "-T seeds: 1 given twice"),
    ("k", "0", "-T k must be a whole number >= 1, got 0"),
    ("tkg_ratio", "1.5", "-T tkg_ratio must be a number from 0 to 1, got 1.5"),  # was "expected a number"
    ("time_limit", "0", "-T time_limit must be a number > 0, got 0"),
    ("time_limits", "1,0", "-T time_limits: each value must be a number > 0, got '0'"),
    ("context_tokens", "10", "-T context_tokens must be a whole number >= 1000, got 10"),
])
def test_option_ranges_are_declared(tmp_path: Path, monkeypatch, capsys, option: str, value: str,
                                    message: str) -> None:
    """Ranges are pydantic constraints (ge/le/gt), so the generic option parser can say them: the message states
    the range (an out-of-range value is not "expected a number")."""
    from pydantic import ValidationError

    from ragjudge.engine.bench_options import _pre

    parsed = _pre(value, DialSimOptions.model_fields[option])
    with pytest.raises(ValidationError) as info:
        DialSimOptions(gen="mc-idk", **{option: parsed})
    assert info.value.errors()[0]["type"] in ("greater_than_equal", "greater_than", "less_than_equal", "value_error")
    code, _, err = run_cli(["eval", "--bench", "dialsim", "--data", str(MINI_DIR), "--gen", "mc-idk",
                            "-T", f"{option}={value}", "--out", str(tmp_path / "run")], monkeypatch, capsys)
    assert code == 2 and err.count("\n") == 1 and f"-T {option}" in err and not (tmp_path / "run").exists()
    assert err == f"error: {message}\n", err

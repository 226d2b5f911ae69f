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
from ragjudge.bench.dialsim.data import read_jsonl_show, write_jsonl_show
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
    shutil.copy(SHOWS_FILE, out)
    code, stdout, err = run_cli(["eval", "--bench", "dialsim", "--data", str(out), "--gen", "mc-lexical",
                                 "--out", str(tmp_path / "run"), "--format", "json"], monkeypatch, capsys)
    assert code == 0, err
    assert json.loads(stdout)["n_samples"] == sum(q["seed"] == 0 for q in samples(MINI_DIR))
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["data"]["mini"]["layout"] == "jsonl" and run["data"]["mini"]["oracle"] is True


def test_unknown_show_needs_a_description(tmp_path: Path) -> None:
    shutil.copy(MINI_DIR / "mini_dialsim.json", tmp_path / "harbor_dialsim.json")
    with pytest.raises(UsageError, match="show 'harbor' is not one of .*dialsim_shows.json"):
        samples(tmp_path)

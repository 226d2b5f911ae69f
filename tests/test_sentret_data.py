"""Sentence retrieval data: the published format (JSON array or JSON lines), validation with file:line:field,
the splits file (and its older `dev` key), and the one-line errors users see."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from conftest import (
    REPO,
    folder_instead,
    non_utf8_on_line_3,
    run_cli,
    truncated_in_line_4,
)

from ragjudge.bench.sentence_retrieval.data import (
    iter_records,
    load_dialogues,
    load_splits,
)
from ragjudge.errors import InputError, UsageError

MINI = REPO / "examples" / "sentret-mini"


def _records(name: str) -> list[dict]:
    return json.loads((MINI / name).read_text())


def _write(folder: Path, plain: list[dict], grounded: list[dict], *, jsonl: bool = False) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for stem, records in (("dialogues", plain), ("wikipedia_grounded_dialogues", grounded)):
        if jsonl:
            (folder / f"{stem}.json").write_text("".join(json.dumps(r) + "\n" for r in records))
        else:
            (folder / f"{stem}.json").write_text(json.dumps(records, indent=1))
    return folder


def test_mini_example_loads_in_the_published_format() -> None:
    dialogues = load_dialogues(MINI)
    assert len(dialogues) == 12 and [d.type for d in dialogues] == ["ungrounded"] * 6 + ["grounded"] * 6
    assert all(len(d.candidates) == 50 and d.n_relevant >= 1 for d in dialogues)
    assert not hasattr(dialogues[0], "target")  # the reply that was written is never read
    splits = load_splits(MINI / "val_test_splits.json", {d.id for d in dialogues})
    assert len(splits) == 10 and all(len(s.val) == len(s.test) == 6 for s in splits)


def test_json_lines_and_a_repository_checkout_layout_load_the_same(tmp_path: Path) -> None:
    plain, grounded = _records("dialogues.json"), _records("wikipedia_grounded_dialogues.json")
    _write(tmp_path / "checkout" / "datasets", plain, grounded, jsonl=True)
    loaded = load_dialogues(tmp_path / "checkout")
    assert [d.model_dump() for d in loaded] == [d.model_dump() for d in load_dialogues(MINI)]
    assert loaded[1].line == 2 and loaded[1].source.endswith("datasets/dialogues.json")


@pytest.mark.parametrize("mutate, field, message", [
    (lambda r: r["candidates"][3].update(id=r["candidates"][1]["id"]), "candidates[3].id", "repeats candidates[1]"),
    (lambda r: r["candidates"][0].update(label=None), "candidates[0].label",
     "must be a number or text (1 relevant, anything else not), got null"),
    (lambda r: [c.update(label=0) for c in r["candidates"]], "candidates", "no candidate is labelled relevant"),
    (lambda r: r["candidates"].pop(), "candidates", "has 49 candidates, expected 50"),
    (lambda r: r["context"][1].pop("body"), "context[1].body", "Field required"),
    (lambda r: r.update(context=[]), "context", "at least 1 item"),
])
def test_bad_records_name_file_line_and_field(tmp_path: Path, mutate, field: str, message: str) -> None:
    plain, grounded = _records("dialogues.json"), _records("wikipedia_grounded_dialogues.json")
    mutate(grounded[2])
    folder = _write(tmp_path, plain, grounded)
    with pytest.raises(InputError) as err:
        load_dialogues(folder)
    text = (folder / "wikipedia_grounded_dialogues.json").read_text()
    line = text.count("\n", 0, text.index(f'"id": "{grounded[2]["id"]}"')) + 1 - 1  # the object opens a line above
    assert err.value.file.endswith("wikipedia_grounded_dialogues.json") and err.value.line == line
    assert err.value.field == field and message in err.value.message


def test_labels_follow_the_datasets_definition_one_relevant_anything_else_not(tmp_path: Path) -> None:
    """Any label but 0/1 stopped the whole run, though the dataset's README defines `label - 1 if relevant;
    otherwise non-relevant`. Now 1 is relevant, any other number or text is not, and those that are neither 0 nor
    1 are kept as written, to be counted."""
    plain, grounded = _records("dialogues.json"), _records("wikipedia_grounded_dialogues.json")
    labels = [2, -1, "yes", 0.5, " 1 ", 1.0, True, "0", False]
    for i, label in enumerate(labels):
        plain[0]["candidates"][i]["label"] = label
    [first, *_] = load_dialogues(_write(tmp_path, plain, grounded))
    assert first.labels[: len(labels)] == [0, 0, 0, 0, 1, 1, 1, 0, 0]
    assert first.other_labels == ["2", "-1", "'yes'", "0.5"]


def test_labels_may_be_strings_or_booleans_and_ids_must_be_unique_across_files(tmp_path: Path) -> None:
    plain, grounded = _records("dialogues.json"), _records("wikipedia_grounded_dialogues.json")
    plain[0]["candidates"][0]["label"] = "1"
    plain[0]["candidates"][1]["label"] = False
    assert load_dialogues(_write(tmp_path / "a", plain, grounded))[0].labels[:2] == [1, 0]
    grounded[0]["id"] = plain[0]["id"]
    with pytest.raises(InputError, match="already appears at .*b/dialogues.json:1$"):
        load_dialogues(_write(tmp_path / "b", plain, grounded, jsonl=True))


def test_missing_dataset_file_says_where_to_get_it(tmp_path: Path) -> None:
    (tmp_path / "dialogues.json").write_text("[]")
    with pytest.raises(UsageError) as err:
        load_dialogues(tmp_path)
    text = str(err.value)
    assert "wikipedia_grounded_dialogues.json not found" in text and "SIGIR-2022/A-Dataset-for-Sentence" in text
    assert "\n" not in text


def test_splits_validation(tmp_path: Path) -> None:
    ids = {"a", "b", "c", "d"}
    path = tmp_path / "splits.json"
    path.write_text('{"dev": ["a", "b"], "test": ["c", "d"]}\n{"val": ["a"], "test": ["b"]}\n')
    splits = load_splits(path, ids)  # the older `dev` key is the validation half
    assert splits[0].val == ["a", "b"] and splits[1].test == ["b"] and splits[1].line == 2
    for text, line, field, message in [
        ('{"val": ["a"], "test": ["b"]}\n{"val": ["a"], "test": ["zz"]}\n', 2, "test", "'zz' is not in the data"),
        ('{"val": ["a", "b"], "test": ["b"]}\n', 1, "test", "in both halves"),
        ('{"val": ["a"], "dev": ["a"], "test": ["b"]}\n', 1, "val", "both 'val' and 'dev'"),
        ('{"val": [], "test": ["b"]}\n', 1, "val", "non-empty list"),
    ]:
        path.write_text(text)
        with pytest.raises(InputError) as err:
            load_splits(path, ids)
        assert (err.value.line, err.value.field) == (line, field) and message in err.value.message


def test_json_array_errors_carry_the_element_line(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('[\n {"a": 1},\n {"a": 2}\n]\n')
    assert [line for line, _ in iter_records(path)] == [2, 3]
    path.write_text('[\n {"a": 1},\n {"a": }\n]\n')
    with pytest.raises(InputError) as err:
        list(iter_records(path))
    assert err.value.line == 3


def published_style_splits(path: Path) -> Path:
    """A splits file laid out as the published one (../shared/data/sentret/README.md), at its size, with our own
    ids: 50 JSON lines ending in CRLF, each `{"test": [423 ids], "val": [423 ids]}` over the same 846 dialogue
    ids `t5_<subreddit>.<thread>.<n>.<turns>`."""
    rng = random.Random(846)
    alphabet = "0123456789abcdefghijklmnopqrstuvwxyz"
    ids: set[str] = set()
    while len(ids) < 846:
        subreddit, thread = "".join(rng.choices(alphabet, k=4)), "".join(rng.choices(alphabet, k=rng.choice((5, 6))))
        ids.add(f"t5_2{subreddit}.{thread}.{rng.choice((0, 0, 0, 1, 2, 14))}.{rng.choice((3, 3, 3, 5, 7))}")
    lines = []
    for _ in range(50):
        shuffled = rng.sample(sorted(ids), len(ids))
        lines.append(json.dumps({"test": shuffled[:423], "val": shuffled[423:]}))
    path.write_bytes("".join(line + "\r\n" for line in lines).encode())
    return path


def test_splits_in_the_published_layout_parse(tmp_path: Path) -> None:
    path = published_style_splits(tmp_path / "val_test_splits.json")
    assert path.read_bytes().count(b"\r\n") == 50
    ids = {i for line in path.read_text().splitlines() for i in json.loads(line)["test"]}
    splits = load_splits(path, ids)
    assert len(splits) == 50 and len(ids) == 846
    assert all(len(s.val) == len(s.test) == 423 and set(s.val) | set(s.test) == ids for s in splits)
    assert splits[-1].line == 50 and splits[0].test == json.loads(path.read_text().splitlines()[0])["test"]


def test_cli_bad_input_is_one_line_and_exit_2(tmp_path: Path, monkeypatch, capsys) -> None:
    plain, grounded = _records("dialogues.json"), _records("wikipedia_grounded_dialogues.json")
    plain[1]["candidates"][5]["label"] = ["yes"]
    folder = _write(tmp_path / "bad", plain, grounded)
    code, _, err = run_cli(["eval", "--bench", "sentence-retrieval", "--data", str(folder), "--out",
                              str(tmp_path / "r")], monkeypatch, capsys)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert "dialogues.json:" in err and "field 'candidates[5].label'" in err and "must be a number or text (1 relevant, anything else not), got list" in err
    code, _, err = run_cli(["eval", "--bench", "sentence-retrieval", "--data", str(tmp_path / "nowhere"), "--out",
                            str(tmp_path / "r")], monkeypatch, capsys)
    assert code == 2 and "not a folder" in err and err.count("\n") == 1


def _json_lines(mutate):
    """A mutation of the splits file (one JSON object a line): `mutate` changes the first split."""
    def apply(path: Path) -> None:
        records = [json.loads(line) for line in path.read_text().splitlines()]
        mutate(records[0])
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return apply


def _json_array(mutate):
    """A mutation of a dataset file (a JSON array, written with indent 1: the first dialogue opens on line 2)."""
    def apply(path: Path) -> None:
        records = json.loads(path.read_text())
        mutate(records[0])
        path.write_text(json.dumps(records, indent=1))
    return apply



DATASET_CASES = [  # (case, mutate, line, field, message)
    ("empty", lambda p: p.write_text(""), 1, None, "has no dialogues"),
    ("no-records", lambda p: p.write_text("[]"), 1, None, "has no dialogues"),
    ("non-utf8", non_utf8_on_line_3, 3, None, "not UTF-8 text: byte 0xff"),
    ("truncated", truncated_in_line_4, 4, None, "invalid JSON"),
    ("folder", folder_instead, None, None, "is a folder, expected a JSON file"),
    ("wrong-type", _json_array(lambda r: r.update(candidates="fifty")), 2, "candidates", "valid list"),
    ("out-of-range", _json_array(lambda r: r["candidates"][0].update(label={"relevant": 1})), 2,
     "candidates[0].label", "must be a number or text (1 relevant, anything else not), got dict"),
]
SPLITS_CASES = [
    ("empty", lambda p: p.write_text(""), 1, None, "the splits file has no splits"),
    ("no-records", lambda p: p.write_text("[]"), 1, None, "the splits file has no splits"),
    ("non-utf8", non_utf8_on_line_3, 3, None, "not UTF-8 text: byte 0xff"),
    ("truncated", truncated_in_line_4, 4, None, "invalid JSON"),
    ("folder", folder_instead, None, None, "is a folder, expected a JSON file"),
    ("wrong-type", _json_lines(lambda r: r.update(val="t5_2r5tv.f1a2b.0.3")), 1, "val",
     "must be a non-empty list of dialogue ids"),
    ("out-of-range", _json_lines(lambda r: r["test"].__setitem__(0, "t5_nowhere.0.3")), 1, "test",
     "dialogue 't5_nowhere.0.3' is not in the data"),
]
DATA_FILES = ("dialogues.json", "wikipedia_grounded_dialogues.json", "val_test_splits.json")
FILE_CASES = [(name, *case) for name in DATA_FILES[:2] for case in DATASET_CASES] + \
    [("val_test_splits.json", *case) for case in SPLITS_CASES]


@pytest.mark.parametrize(("name", "case", "mutate", "line", "field", "message"), FILE_CASES,
                         ids=[f"{c[0]}-{c[1]}" for c in FILE_CASES])
def test_every_data_file_of_the_example_blames_itself(name: str, case: str, mutate, line: int | None,
                                                      field: str | None, message: str, tmp_path: Path, monkeypatch,
                                                      capsys) -> None:
    """Each file of examples/sentret-mini, broken one way at a time: one line naming that file (and its line and
    field), exit 2, nothing written. An empty dialogues.json names dialogues.json, not val_test_splits.json."""
    data = tmp_path / "data"
    data.mkdir()
    for file in DATA_FILES:
        (data / file).write_bytes((MINI / file).read_bytes())
    mutate(data / name)
    out = tmp_path / "r"
    code, _, err = run_cli(["eval", "--bench", "sentence-retrieval", "--data", str(data), "--pipeline", "initial",
                            "--out", str(out)], monkeypatch, capsys)
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    where = f"{data / name}" + (f":{line}" if line else "") + ": " + (f"field '{field}': " if field else "")
    assert where in err and message in err, err
    assert not any(f"{data / other}:" in err for other in DATA_FILES if other != name), err
    assert not (out / "summary.json").exists() and not (out / "samples.jsonl").exists()

"""Fuzz every reader through the CLI: mutated copies of valid inputs (truncation, bit flips, wrong types, huge
lines, bytes that are not UTF-8, empty files, garbage) must end in a clean exit: 0/1 when the mutation left
the input valid, else exit 2 with one `error:` line naming the file, and never "internal error".

Seeded and bounded: every reader gets the same mutation kinds, run in-process (seconds in all)."""

from __future__ import annotations

import json
import os
import random
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from conftest import MINI, REPO, run_cli

FIXTURES = Path(__file__).parent / "fixtures"
CXM = REPO / "examples" / "cxm"
SEED = int(os.environ.get("RAGJUDGE_FUZZ_SEED", "20240515"))
"""Another seed explores other mutations: `RAGJUDGE_FUZZ_SEED=7 pytest tests/test_fuzz_inputs.py`."""


# ------------------------------------------------------------------------------------------- mutations

def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True)


def truncate(data: bytes, rng: random.Random) -> bytes:
    return data[: rng.randrange(1, max(2, len(data)))]


def bit_flips(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 6)):
        i = rng.randrange(len(out))
        out[i] ^= 1 << rng.randrange(8)
    return bytes(out)


def non_utf8(data: bytes, rng: random.Random) -> bytes:
    lines = _lines(data)
    i = rng.randrange(len(lines))
    cut = rng.randrange(max(1, len(lines[i]) - 1))
    lines[i] = lines[i][:cut] + rng.choice([b"\xff", b"\xc3\x28", b"\xe2\x82", b"\xfe\xfe", b"\x80"]) + lines[i][cut:]
    return b"".join(lines)


def garbage(data: bytes, rng: random.Random) -> bytes:
    return bytes(rng.randrange(256) for _ in range(300)) + b"\xff"


def empty(data: bytes, rng: random.Random) -> bytes:
    return b""


def deep_nesting(data: bytes, rng: random.Random) -> bytes:
    return b"[" * 200_000 + b"\n" + data


def huge_line(data: bytes, rng: random.Random) -> bytes:
    """A line over the 1 MB limit the test sets (RAGJUDGE_MAX_LINE_MB=1)."""
    lines = _lines(data)
    lines.insert(rng.randrange(len(lines) + 1), b'{"text": "' + b"x" * (1_200_000) + b'"}\n')
    return b"".join(lines)


WEIRD = [None, 0, -1, 3.5, float("inf"), "", "x", "\u0000", [], {}, True, [1, "a"], {"a": {"b": []}}, "9" * 400]


def _mutate_value(value: object, rng: random.Random, depth: int = 0) -> object:
    """A random field somewhere inside `value` gets a value of another type (the top level stays a record)."""
    descend = depth == 0 or rng.random() < 0.6
    if isinstance(value, dict) and value and descend:
        key = rng.choice(list(value))
        return {**value, key: _mutate_value(value[key], rng, depth + 1)}
    if isinstance(value, list) and value and descend:
        i = rng.randrange(len(value))
        return value[:i] + [_mutate_value(value[i], rng, depth + 1)] + value[i + 1:]
    return rng.choice(WEIRD)


def wrong_types_json_lines(data: bytes, rng: random.Random) -> bytes:
    lines = _lines(data)
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(lines))
        lines[i] = (json.dumps(_mutate_value(json.loads(lines[i]), rng)) + "\n").encode()
    return b"".join(lines)


def wrong_types_json(data: bytes, rng: random.Random) -> bytes:
    doc = json.loads(data)
    for _ in range(rng.randint(1, 3)):
        doc = _mutate_value(doc, rng)
    return json.dumps(doc).encode()


def wrong_types_yaml(data: bytes, rng: random.Random) -> bytes:
    doc = yaml.safe_load(data)
    for _ in range(rng.randint(1, 2)):
        doc = _mutate_value(doc, rng)
    return yaml.safe_dump(doc).encode()


def wrong_types_columns(data: bytes, rng: random.Random) -> bytes:
    lines = _lines(data)
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(lines))
        cells = lines[i].rstrip(b"\n").split(b"\t")
        j = rng.randrange(len(cells))
        cells[j] = rng.choice([b"", b"abc", b"-", b"1e999", b"nan", b"\"", b"a b", b"2.5"])
        lines[i] = b"\t".join(cells) + b"\n"
    return b"".join(lines)


def duplicate_line(data: bytes, rng: random.Random) -> bytes:
    lines = _lines(data)
    line = rng.choice(lines)
    return b"".join(lines + [line if line.endswith(b"\n") else line + b"\n"])


STRICT = {non_utf8, garbage, huge_line}
"""Mutations that can never leave an input valid: exit 2 is required, naming the file."""


# ------------------------------------------------------------------------------------------- readers

@dataclass
class Reader:
    name: str
    target: str  # the fixture file that gets mutated
    argv: Callable[[Path], list[str]]  # given the work folder
    kind: str  # jsonl | json | yaml | columns

    def mutations(self) -> list[Callable[[bytes, random.Random], bytes]]:
        typed = {"jsonl": wrong_types_json_lines, "json": wrong_types_json, "yaml": wrong_types_yaml,
                 "columns": wrong_types_columns}[self.kind]
        kinds = [truncate, bit_flips, bit_flips, non_utf8, garbage, empty, typed, typed, typed, duplicate_line]
        if self.kind in ("jsonl", "columns"):
            kinds += [huge_line, deep_nesting]
        elif self.kind == "json":
            kinds += [deep_nesting]
        return kinds


def _judge(w: Path) -> list[str]:
    return ["judge", str(w / "predictions.jsonl"), "--judges", "idk_lexical", "--out", str(w / "out" / "j.jsonl")]


READERS = [
    Reader("judge predictions", "predictions.jsonl", _judge, "jsonl"),
    Reader("eval MTRAG tasks", "tasks.jsonl", lambda w: [
        "eval", "--bench", str(w / "tasks.jsonl"), "--gen", "extractive", "--judges", "idk_lexical",
        "--out", str(w / "out" / "eval")], "jsonl"),
    Reader("retrieve --queries", "queries.jsonl", lambda w: [
        "retrieve", "--queries", str(w / "queries.jsonl"), "--corpus", str(w / "corpus.jsonl"), "--pipeline",
        "bm25", "--index-dir", str(w / "indexes"), "--out", str(w / "out" / "run.jsonl")], "jsonl"),
    Reader("retrieve --corpus", "corpus.jsonl", lambda w: [
        "retrieve", "--queries", str(w / "queries.jsonl"), "--corpus", str(w / "corpus.jsonl"), "--pipeline",
        "bm25", "--index-dir", str(w / "indexes"), "--out", str(w / "out" / "run.jsonl")], "jsonl"),
    Reader("retrieve --pipeline spec", "spec.yaml", lambda w: [
        "retrieve", "--queries", str(w / "queries.jsonl"), "--corpus", str(w / "corpus.jsonl"), "--pipeline",
        str(w / "spec.yaml"), "--index-dir", str(w / "indexes"), "--out", str(w / "out" / "run.jsonl")], "yaml"),
    Reader("retrieval-eval run", "run.jsonl", lambda w: [
        "retrieval-eval", str(w / "run.jsonl"), "--qrels", str(w / "qrels.tsv"), "--format", "json"], "jsonl"),
    Reader("retrieval-eval TREC run", "run.trec", lambda w: [
        "retrieval-eval", str(w / "run.trec"), "--qrels", str(w / "qrels.tsv"), "--format", "json"], "columns"),
    Reader("retrieval-eval qrels", "qrels.tsv", lambda w: [
        "retrieval-eval", str(w / "run.jsonl"), "--qrels", str(w / "qrels.tsv"), "--format", "json"], "columns"),
    Reader("retrieval-eval --breakdown-file", "labels.jsonl", lambda w: [
        "retrieval-eval", str(w / "run.jsonl"), "--qrels", str(w / "qrels.tsv"), "--breakdown-file",
        str(w / "labels.jsonl"), "--by", "question_type", "--format", "json"], "jsonl"),
    Reader("correlate humans", "humans.json", lambda w: [
        "correlate", str(w / "humans.json"), "--bootstrap", "0", "--format", "json"], "json"),
    # the run is named by its results file; what is read is its sample log beside it
    Reader("correlate --judges", "judged.samples.jsonl", lambda w: [
        "correlate", str(w / "humans.json"), "--bootstrap", "0", "--format", "json", "--judges",
        f"model-a={w / 'judged.jsonl'}"], "jsonl"),
    Reader("export results", "judged.samples.jsonl", lambda w: [
        "export", f"model-a={w / 'judged.jsonl'}", "--out", str(w / "out" / "export.json")], "jsonl"),
    Reader("cxm score predictions", "cxm/predictions/intent.jsonl", lambda w: [
        "cxm", "score", "--task", "intent", "--data", str(w / "cxm"), "--format", "json"], "jsonl"),
    Reader("cxm score data", "cxm/intent.jsonl", lambda w: [
        "cxm", "score", "--task", "intent", "--data", str(w / "cxm"), "--format", "json"], "jsonl"),
    Reader("judge spec", "judges/idk_lexical.yaml", lambda w: [*_judge(w), "--judge-dir", str(w / "judges")], "yaml"),
]


@pytest.fixture(scope="module")
def valid_inputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Small valid inputs for every reader; the run and the judged results are made by ragjudge itself."""
    w = tmp_path_factory.mktemp("fuzz-valid")
    tasks = (MINI / "tasks.jsonl").read_text(encoding="utf-8").splitlines()[:6]
    (w / "tasks.jsonl").write_text("\n".join(tasks) + "\n", encoding="utf-8")
    records = [json.loads(t) for t in tasks]
    queries = [{"_id": r["task_id"], "text": r["input"][-1]["text"]} for r in records]
    (w / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries), encoding="utf-8")
    corpus = (MINI / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[:40]
    (w / "corpus.jsonl").write_text("\n".join(corpus) + "\n", encoding="utf-8")
    qrels = ["query-id\tcorpus-id\tscore"] + [f"{r['task_id']}\t{c['document_id']}\t1" for r in records
                                              for c in r.get("contexts") or []]
    (w / "qrels.tsv").write_text("\n".join(qrels) + "\n", encoding="utf-8")
    labels = [{"task_id": r["task_id"], "question_type": (r.get("Question Type") or ["x"])[0]} for r in records]
    (w / "labels.jsonl").write_text("".join(json.dumps(x) + "\n" for x in labels), encoding="utf-8")
    shutil.copy(REPO / "pipelines" / "bm25.yaml", w / "spec.yaml")
    (w / "judges").mkdir()
    shutil.copy(REPO / "judges" / "idk_lexical.yaml", w / "judges" / "idk_lexical.yaml")
    shutil.copy(FIXTURES / "inspectorraget" / "human_eval.json", w / "humans.json")
    shutil.copy(FIXTURES / "inspectorraget" / "predictions_model_a.jsonl", w / "predictions.jsonl")
    shutil.copytree(CXM, w / "cxm")
    with pytest.MonkeyPatch.context() as mp:
        from ragjudge.cli import main

        for argv in (["retrieve", "--queries", str(w / "queries.jsonl"), "--corpus", str(w / "corpus.jsonl"),
                      "--pipeline", "bm25", "--index-dir", str(w / "indexes"), "--out", str(w / "run.jsonl"),
                      "--format", "json"],
                     ["retrieve", "--queries", str(w / "queries.jsonl"), "--corpus", str(w / "corpus.jsonl"),
                      "--pipeline", "bm25", "--index-dir", str(w / "indexes"), "--out", str(w / "run.trec"),
                      "--format", "json"],
                     ["judge", str(w / "predictions.jsonl"), "--judges", "idk_lexical", "--out",
                      str(w / "judged.jsonl"), "--format", "json"]):
            mp.setattr("sys.argv", ["ragjudge", *argv])
            with pytest.raises(SystemExit) as done:
                main()
            assert done.value.code in (0, None), argv
    return w


def _run(reader: Reader, work: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
         ) -> tuple[int, str, str]:
    shutil.rmtree(work / "out", ignore_errors=True)
    return run_cli(reader.argv(work), monkeypatch, capsys)


def _traceback(reader: Reader, work: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The crash again with RAGJUDGE_DEBUG=1, so a failure shows where to fix it."""
    import traceback

    from ragjudge.cli import main

    monkeypatch.setenv("RAGJUDGE_DEBUG", "1")
    monkeypatch.setattr(sys, "argv", ["ragjudge", *reader.argv(work)])
    try:
        main()
    except BaseException:  # noqa: BLE001 - we want whatever it was
        return traceback.format_exc()[-3000:]
    finally:
        monkeypatch.delenv("RAGJUDGE_DEBUG")
    return "(no crash the second time)"


@pytest.mark.parametrize("reader", READERS, ids=[r.name for r in READERS])
def test_mutated_inputs_fail_cleanly(reader: Reader, valid_inputs: Path, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("RAGJUDGE_MAX_LINE_MB", "1")
    monkeypatch.setenv("COLUMNS", "80")
    work = tmp_path / "w"
    shutil.copytree(valid_inputs, work, ignore=shutil.ignore_patterns("indexes", "out"))
    target = work / reader.target
    original = target.read_bytes()
    code, _, err = _run(reader, work, monkeypatch, capsys)
    assert code == 0, f"{reader.name}: the valid input fails: {err}"

    rng = random.Random(f"{SEED}-{reader.name}")
    outcomes = []
    for mutate in reader.mutations():
        data = mutate(original, rng)
        target.write_bytes(data)
        code, _, err = _run(reader, work, monkeypatch, capsys)
        label = f"{reader.name} / {mutate.__name__}"
        if "internal error" in err or "Traceback" in err:
            pytest.fail(f"{label}: {err[-1000:]}\n{_traceback(reader, work, monkeypatch)}")
        assert code in (0, 1, 2), f"{label}: exit {code}: {err[-2000:]}"
        if code == 2:
            lines = [line for line in err.splitlines() if line.strip()]
            assert len(lines) == 1 and lines[0].startswith("error: "), f"{label}: stderr is not one line: {err}"
        if mutate in STRICT:
            assert code == 2, f"{label}: a broken input was accepted (exit {code})"
            assert str(target) in err, f"{label}: the error does not name the file: {err}"
        if mutate is non_utf8:
            assert "not UTF-8 text" in err and "byte offset" in err and f"{target}:" in err, err
        outcomes.append(code)
    target.write_bytes(original)
    assert outcomes.count(2) >= 4, f"{reader.name}: too few mutations were refused: {outcomes}"

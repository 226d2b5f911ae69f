"""Your own RAG app's records (issue 33, item 1): plain question/answer/contexts/reference records under ragjudge's,
RAGAS's and DeepEval's field names, from a list, a DataFrame, JSONL, JSON, CSV or Parquet, and multi-turn `messages`;
every spelling gives the same samples and the same scores, `ragjudge judge rows.csv` the same figures as
`ragjudge.evaluate`, and a bad record is one line naming the record and the field."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import ragjudge
from conftest import REPO, run_cli
from ragjudge.errors import InputError
from ragjudge.formats.rag_records import read_rag_records, rag_records

ROWS = REPO / "examples" / "rag-app" / "rows.csv"
MODEL_FLOATS = 1e-4


def ours() -> list[dict[str, Any]]:
    with ROWS.open(newline="") as fh:
        return [{"question": r["question"], "answer": r["answer"], "contexts": json.loads(r["contexts"]),
                 "reference": r["reference"], "labels": json.loads(r["labels"])} for r in csv.DictReader(fh)]


def as_ragas(row: dict[str, Any]) -> dict[str, Any]:
    return {"user_input": row["question"], "response": row["answer"], "retrieved_contexts": row["contexts"],
            "reference": row["reference"], "labels": row["labels"]}


def as_deepeval(row: dict[str, Any]) -> dict[str, Any]:
    return {"input": row["question"], "actual_output": row["answer"], "retrieval_context": row["contexts"],
            "expected_output": row["reference"], "labels": row["labels"]}


def values(result: ragjudge.EvalResult) -> list[dict[str, float]]:
    return [s.values() for s in result.samples]


@pytest.fixture(scope="module")
def plain() -> ragjudge.EvalResult:
    return ragjudge.evaluate(ours(), judges=["rb_alg"], show_progress=False)


def test_the_three_spellings_and_every_container_give_the_same_samples_and_scores(plain: ragjudge.EvalResult,
                                                                                 tmp_path: Path) -> None:
    rows = ours()
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(as_ragas(r)) + "\n" for r in rows))
    (tmp_path / "rows.json").write_text(json.dumps([as_deepeval(r) for r in rows]))
    pd.DataFrame([as_ragas(r) for r in rows]).to_parquet(tmp_path / "rows.parquet")
    pd.DataFrame([as_ragas(r) for r in rows]).to_csv(tmp_path / "ragas.csv", index=False)  # lists as Python reprs
    sources: list[Any] = [[as_ragas(r) for r in rows], [as_deepeval(r) for r in rows], pd.DataFrame(rows), ROWS,
                          tmp_path / "rows.jsonl", tmp_path / "rows.json", tmp_path / "rows.parquet",
                          tmp_path / "ragas.csv"]
    want = values(plain)
    assert len(want) == 6 and all("RB_agg" in v for v in want)
    for source in sources:
        result = ragjudge.evaluate(source, metrics=["rb_alg"], show_progress=False)
        got = values(result)
        assert [s.id for s in result.samples] == ["1", "2", "3", "4", "5", "6"]  # ids made from positions
        for a, b in zip(got, want, strict=True):
            assert a.keys() == b.keys() and all(a[k] == pytest.approx(b[k], rel=MODEL_FLOATS) for k in a), source
    assert result.summary.metrics["RB_agg"].value == pytest.approx(plain.summary.metrics["RB_agg"].value,
                                                                   rel=MODEL_FLOATS)


def test_the_dataframe_has_the_columns_ragas_users_expect(plain: ragjudge.EvalResult) -> None:
    df = plain.to_pandas()
    assert list(df.columns[:5]) == ["sample_id", "question", "answer", "contexts", "reference"]
    first = ours()[0]
    row = df.iloc[0]
    assert (row["question"], row["answer"], row["contexts"], row["reference"], row["topic"]) == \
        (first["question"], first["answer"], first["contexts"], first["reference"], "water")
    assert set(plain.summary.breakdowns) == {"topic"}  # the records' labels are the breakdowns


def test_judge_on_a_csv_gives_the_same_figures(plain: ragjudge.EvalResult, tmp_path: Path, monkeypatch,
                                               capsys) -> None:
    code, out, err = run_cli(["judge", str(ROWS), "--judges", "rb_alg", "--out", str(tmp_path / "rows.judged.jsonl"),
                              "--format", "json"], monkeypatch, capsys)
    assert code == 0, err
    summary = json.loads(out)
    assert summary["bench"] == "rag" and summary["n_samples"] == 6
    assert summary["metrics"]["RB_agg"]["value"] == pytest.approx(plain.summary.metrics["RB_agg"].value,
                                                                   rel=MODEL_FLOATS)
    loaded = ragjudge.load_run(tmp_path / "rows.judged.jsonl")  # the run is its sample log and summary
    assert [s.question for s in loaded.samples] == [r["question"] for r in ours()]


def test_multi_turn_messages_are_the_conversation(tmp_path: Path) -> None:
    messages = [{"role": "system", "content": "You answer insurance questions."},
                {"role": "user", "content": "Hi, I have policy 42."},
                {"role": "assistant", "content": "Hello! How can I help with policy 42?"},
                {"role": "user", "content": "What does it cover?"}]
    [record] = rag_records([{"messages": messages, "answer": "Water damage from burst pipes."}])
    assert [(t.speaker, t.text) for t in record.turns] == [("user", "Hi, I have policy 42."),
                                                            ("agent", "Hello! How can I help with policy 42?"),
                                                            ("user", "What does it cover?")]
    [ragas] = rag_records([{"user_input": messages[1:], "response": "Water damage from burst pipes."}])
    assert ragas.turns == record.turns and ragas.question == "What does it cover?"
    result = ragjudge.evaluate([{"messages": messages, "answer": "Water damage from burst pipes.",
                                 "contexts": ["Policy 42 covers water damage caused by burst or leaking pipes."],
                                 "reference": "Water damage from burst or leaking pipes."}], judges=["rb_alg"],
                               show_progress=False)
    [sample] = result.samples
    assert [m.role for m in sample.input] == ["user", "assistant", "user"] and sample.question == "What does it cover?"


@pytest.mark.parametrize("record, message", [
    ({"question": "q", "answr": "a"}, "data[0]: field 'answr': is not a field of a RAG record (accepted: id, "),
    ({"question": "q", "answer": 3}, "data[0]: field 'answer': must be text, got a number"),
    ({"question": "q", "answer": "a", "contexts": "one passage"},
     "data[0]: field 'contexts': must be a list of passages (strings or {id, text}), got a string"),
    ({"user_input": "q", "question": "q", "answer": "a"}, "data[0]: field 'question': gives the question twice"),
    ({"answer": "a"}, "data[0]: field 'question': is missing: give a question (or messages) under one of: "),
    ({"messages": [{"role": "user", "content": "q"}, {"role": "bot", "content": "a"}], "answer": "a"},
     "data[0]: field 'messages[1].role': role must be user or assistant, got 'bot'"),
])
def test_a_bad_record_is_one_line_naming_the_field(record: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError) as info:
        ragjudge.evaluate([record], judges=["rb_alg"], show_progress=False)
    assert str(info.value).startswith(message), str(info.value)


def test_ids_are_kept_or_made_and_never_repeat(tmp_path: Path) -> None:
    assert [r.id for r in rag_records([{"id": "a", "question": "q"}, {"question": "q"}])] == ["a", "2"]
    with pytest.raises(InputError, match="repeats id 'a'"):
        rag_records([{"id": "a", "question": "q"}, {"id": "a", "question": "r"}])
    bad = tmp_path / "bad.csv"
    bad.write_text('question,contexts\nq,"[unclosed"\n')
    with pytest.raises(InputError) as info:
        read_rag_records(bad)
    assert str(info.value) == f"{bad}:2: field 'contexts': must be a JSON list or object (or a Python list literal)"


RAGAS_METRICS = ["faithfulness", "answer_relevancy", "context_precision", "context_recall", "answer_correctness"]


@pytest.fixture(scope="module")
def judge_server():
    from ragjudge.testing.openai_server import OpenAIServer
    from ragjudge.testing.ragas_model import ragas_model

    with OpenAIServer(ragas_model()) as server:
        yield server


def test_the_metrics_rag_engineers_reach_for_first_on_plain_records(judge_server, tmp_path: Path, monkeypatch,
                                                                     capsys) -> None:
    """Issue 33's headline: the five RAGAS metrics on plain dicts, on the same rows under RAGAS's and DeepEval's
    names, and on multi-turn `messages` rows, against the local server; every metric scored, the same scores for
    the three spellings, and `ragjudge judge rows.csv` the same figures."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    run = dict(metrics=RAGAS_METRICS, judge_models=["openai/judge"], api_base=judge_server.base_url,
               show_progress=False)
    rows = ours()
    plain = ragjudge.evaluate(rows, **run)
    assert set(plain.summary.metrics) == set(RAGAS_METRICS)
    assert all(plain.summary.metrics[m].n == 6 and plain.summary.metrics[m].errors == 0 for m in RAGAS_METRICS)
    assert len({round(plain.summary.metrics[m].value, 6) for m in RAGAS_METRICS}) > 1  # real, different figures
    df = plain.to_pandas()
    assert list(df.columns[:5]) == ["sample_id", "question", "answer", "contexts", "reference"]
    assert set(RAGAS_METRICS) <= set(df.columns)
    want = values(plain)
    for spelled in ([as_ragas(r) for r in rows], [as_deepeval(r) for r in rows]):
        got = values(ragjudge.evaluate(spelled, **run))
        for a, b in zip(got, want, strict=True):
            assert a.keys() == b.keys() and all(a[k] == pytest.approx(b[k], rel=MODEL_FLOATS) for k in a)

    turns = [{"messages": [{"role": "user", "content": "I hold policy 42."},
                           {"role": "assistant", "content": "Noted: policy 42."},
                           {"role": "user", "content": r["question"]}], "answer": r["answer"],
              "contexts": r["contexts"], "reference": r["reference"]} for r in rows]
    multi = ragjudge.evaluate(turns, **run)
    assert all(set(s.values()) == set(RAGAS_METRICS) for s in multi.samples)
    assert any("I hold policy 42." in r.last_user for r in judge_server.requests)  # judged with its conversation

    code, out, err = run_cli(["judge", str(ROWS), "--judges", ",".join(RAGAS_METRICS), "--judge-models",
                              "openai/judge", "--api-base", judge_server.base_url, "--out",
                              str(tmp_path / "rows.jsonl"), "--format", "json"], monkeypatch, capsys)
    assert code == 0, err
    figures = json.loads(out)["metrics"]
    for m in RAGAS_METRICS:
        assert figures[m]["value"] == pytest.approx(plain.summary.metrics[m].value, rel=MODEL_FLOATS), m

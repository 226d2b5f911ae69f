"""DialSim's sample log: every line of the shipped example's run validates against `ragjudge schema sample` and
carries what the mapping promises (bench/dialsim/samples.py); the failure shapes (a judge's unparsable reply, an
answer that failed, an output journaled before the memory's sessions were recorded) keep their errors."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from conftest import run_cli, run_cli_once
from dialsim_helpers import MINI_DIR

from ragjudge.bench.dialsim.plan import OPTION_LETTERS, read_plan
from ragjudge.bench.dialsim.samples import question_sample
from ragjudge.bench.dialsim.summary import BREAKDOWNS
from ragjudge.engine.bench import SampleResult
from ragjudge.formats.samples import read_samples

EXAMPLE = ["eval", "--bench", "dialsim", "--data", str(MINI_DIR), "--gen", "mc-lexical", "-T", "memory=session",
           "-T", "retriever=bm25"]
"""The docs' first command (docs/benches/dialsim.md, Running it)."""


@pytest.fixture(scope="module")
def example_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("dialsim") / "run"
    code, _, err = run_cli_once([*EXAMPLE, "--out", str(folder)])
    assert code == 0, err
    return folder


def test_every_line_of_the_example_run_validates_against_the_published_schema(example_run: Path, monkeypatch,
                                                                               capsys) -> None:
    code, printed, err = run_cli(["schema", "sample"], monkeypatch, capsys)
    assert code == 0, err
    schema = json.loads(printed)
    lines = [json.loads(line) for line in (example_run / "samples.jsonl").read_text().splitlines()]
    summary = json.loads((example_run / "summary.json").read_text())
    assert len(lines) == summary["n_samples"] == 15
    for line in lines:
        jsonschema.validate(line, schema)
    assert not (example_run / "results.jsonl").exists()  # no record format of its own: the sample log is the record


def test_the_example_runs_samples_carry_the_mapping(example_run: Path) -> None:
    samples = read_samples(example_run / "samples.jsonl")
    plan = {q.id: q for q in read_plan(example_run / "plan.jsonl")}
    summary = json.loads((example_run / "summary.json").read_text())
    assert set(summary["breakdowns"]) == set(BREAKDOWNS)
    for s in samples:
        q = plan[s.id]
        assert s.input == f"{q.asker}: {q.question}\n" + "\n".join(
            f"\t{letter} {option}" for letter, option in zip(OPTION_LETTERS, q.options, strict=True))
        assert s.question == s.input and s.target == f"{q.gold} {q.options[OPTION_LETTERS.index(q.gold)]}"
        assert s.output in OPTION_LETTERS and s.error is None
        assert [p.id for p in s.target_contexts] == [f"session-{i}" for i in q.evidence_sessions or []]
        assert s.contexts and all(p.id and p.title and p.title.startswith("[Date: ") and p.score is not None
                                  for p in s.contexts)
        scores = [p.score for p in s.contexts]
        assert scores == sorted(scores, reverse=True)  # retrieval: best first
        assert set(s.scores) == {"accuracy", "accuracy_calibrated", "declined"}
        assert s.scores["accuracy"].value == (1.0 if s.scores["accuracy"].label == "correct" else 0.0)
        assert s.scores["declined"].value == (1.0 if s.output == "(E)" else 0.0)
        assert s.labels == {"seed": str(q.seed), "show": q.show, "source": q.source, "type": q.type,
                            "answerability": "answerable" if q.answerable else "unanswerable",
                            **({"hop": q.hop} if q.hop else {})}
        assert {"episode", "scene", "session", "date", "asker", "agent", "options", "gold", "latency"} <= set(s.metadata)
    strict = [s.scores["accuracy"].value for s in samples]
    assert sum(v or 0 for v in strict) / len(strict) == pytest.approx(summary["metrics"]["accuracy"]["value"],
                                                                      abs=1e-6)


def test_load_run_gives_each_questions_row(example_run: Path) -> None:
    import ragjudge

    frame = ragjudge.load_run(example_run).to_pandas()
    samples = read_samples(example_run / "samples.jsonl")
    assert list(frame.columns[:5]) == ["sample_id", "question", "answer", "contexts", "reference"]
    assert {"seed", "show", "source", "hop", "answerability", "type", "accuracy", "accuracy_calibrated",
            "declined"} <= set(frame.columns)
    first = frame.iloc[0]
    assert (first["question"], first["answer"], first["reference"]) == (samples[0].input, samples[0].output,
                                                                        samples[0].target)
    assert list(first["contexts"]) == [p.id for p in samples[0].contexts]


def test_the_oracle_memory_recalls_only_evidence_sessions(tmp_path: Path, monkeypatch, capsys) -> None:
    code, _, err = run_cli(["eval", "--bench", "dialsim", "--data", str(MINI_DIR), "--gen", "mc-lexical", "-T",
                            "memory=oracle", "--out", str(tmp_path / "run")], monkeypatch, capsys)
    assert code == 0, err
    samples = read_samples(tmp_path / "run" / "samples.jsonl")
    assert any(s.contexts for s in samples)
    for s in samples:
        evidence = {p.id for p in s.target_contexts}
        assert {p.id for p in s.contexts} <= evidence and all(p.score is None for p in s.contexts)


def _result(output: dict, score: dict | None) -> SampleResult:
    from ragjudge.bench.dialsim.plan import PlannedQuestion

    q = PlannedQuestion(id="mini/0/S01E01/2", show="mini", seed=0, names="generic", episode="S01E01", scene="2",
                        session=1, date="March 4, 2021", ask_after=5, agent="Mary", asker="Karen", source="temporal",
                        type="cur_past", question_id="0", question="who is David's sister?",
                        options=["Susan", "Mrs. Alvarez", "Priyanka", "David", "I don't know."], answer="Susan",
                        gold="(A)", evidence_sessions=None)
    return SampleResult(q, output, {"dialsim": score} if score is not None else {})


def test_a_judge_failure_keeps_its_error_and_raw_reply_never_a_value() -> None:
    out = {"answer": "Nobody knows.", "memory": ["[Date: March 4, 2021, Session #1]"], "memory_sessions": [0],
           "memory_scores": [0.5], "latency": 0.1, "cached": False, "timed_out": False}
    score = {"error": "the judge's reply is unparsable: no JSON", "judge_raw": "certainly", "judged_by": "openai/j"}
    s = question_sample(_result(out, score), "open")
    assert s.input == "Karen: who is David's sister?" and s.target == "Susan" and s.output == "Nobody knows."
    strict = s.scores["accuracy"]
    assert (strict.value, strict.error, strict.raw, strict.model, strict.judge) == (
        None, score["error"], "certainly", "openai/j", "dialsim_judge")
    assert s.scores["accuracy_calibrated"].error == score["error"] and s.scores["accuracy_calibrated"].raw is None
    assert "declined" not in s.scores and "committed" not in s.metadata and s.labels["hop"] == "two-hop"
    assert s.target_contexts == [] and "evidence_sessions" not in s.metadata


def test_a_failed_answer_is_the_samples_error_with_no_output() -> None:
    s = question_sample(_result({"error": "refused"}, {"error": "no output to score: refused"}), "mc-nl")
    assert s.error == "refused" and s.output is None and s.contexts == []
    assert s.errors() == {"solve": "refused", "accuracy": "no output to score: refused",
                          "accuracy_calibrated": "no output to score: refused"}
    assert s.input.endswith("Susan? or Mrs. Alvarez? or Priyanka? or David? or you don't know?")
    assert s.target == "Susan"


def test_an_output_journaled_before_the_memorys_sessions_were_recorded_keeps_its_labels() -> None:
    out = {"answer": "(A)", "memory": ["[Date: March 4, 2021, Session #1]", "[Date: March 4, 2021, Session #2]"],
           "memory_scores": [0.9, 0.2]}
    score = {"verdict": "correct", "calibrated": "correct", "value": 1, "calibrated_value": 1, "declined": False,
             "committed": True, "choice": "(A)", "judged_by": "rule"}
    s = question_sample(_result(out, score), "mc")
    assert [(p.id, p.title, p.score) for p in s.contexts] == [
        (None, "[Date: March 4, 2021, Session #1]", 0.9), (None, "[Date: March 4, 2021, Session #2]", 0.2)]
    assert s.target == "(A) Susan" and s.scores["accuracy"].details == {"judged_by": "rule", "choice": "(A)"}
    assert s.metadata["committed"] is True and s.scores["declined"].value == 0.0

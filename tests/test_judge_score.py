"""One model from the judge to the sample log (issue 42, item 1): every judge returns the sample log's `Score`
(`JudgeResult` is gone); the journal, MTRAG's results lines and the pytest report keep the shape they had before
(`Score.record`: `judge` and `metric` first, `details` always, no empty panel), so old runs resume and every file
compares byte for byte; the sample log and its schema leave `metric` out (a score is filed under its metric)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ragjudge
import ragjudge.models
from conftest import MTRAG_FIXTURES, run_cli
from ragjudge.formats.jsonl import dumps
from ragjudge.formats.samples import RECORD_ORDER, Sample, Score, json_schema
from ragjudge.judges import JudgeContext, JudgeRegistry, JudgedItem
from ragjudge.models import Turn
from ragjudge.testing.openai_server import OpenAIServer
from ragjudge.testing.replies import by_model

RESPONSES = MTRAG_FIXTURES / "generation" / "responses-10.jsonl"

# Written by the ragjudge before the fold (JudgeResult.model_dump(exclude_none=True) through the journal's writer).
BEFORE = [
    '{"judge": "rb_llm", "metric": "RB_llm", "error": "only 1 of 2 panel members answered (openai/b: no rating '
    'found)", "model": "openai/a,openai/b", "prompt_tokens": 702, "completion_tokens": 35, "latency": 0.5, "members": '
    '[{"judge": "rb_llm", "metric": "RB_llm", "value": 0.8, "label": "8", "rationale": "Good.\\nRating: [[8]]", "raw": '
    '"Good.\\nRating: [[8]]", "model": "openai/a", "prompt_tokens": 351, "completion_tokens": 30, "latency": 0.25, '
    '"details": {"cached": false}}, {"judge": "rb_llm", "metric": "RB_llm", "raw": "I would rather not.", "error": '
    '"no rating found", "model": "openai/b", "prompt_tokens": 351, "completion_tokens": 5, "latency": 0.5, "details": '
    '{"cached": true}}], "details": {"members_ok": 1, "members_total": 2}}',
    '{"judge": "rl_f", "metric": "RL_F", "model": "openai/a", "details": {"skipped": "no passages"}}',
    '{"judge": "idk_lexical", "metric": "idk_lexical", "value": 1.0, "label": "yes", "rationale": "declines: \\"I '
    'don\'t know.\\"", "model": "patterns", "details": {}}',
]


async def test_a_judge_returns_the_sample_logs_score() -> None:
    assert not hasattr(ragjudge.models, "JudgeResult")  # one model: the Score
    judge = JudgeRegistry().build("idk_lexical")
    item = JudgedItem(id="c::1", messages=[Turn(speaker="user", text="When does the ferry leave?")],
                      answer="I'm sorry, I don't know.")
    [score] = await judge.judge([item], JudgeContext())
    assert type(score) is Score and score.ok and not score.failed
    assert (score.judge, score.metric, score.value, score.label) == ("idk_lexical", "idk_lexical", 1.0, "yes")
    assert judge.result(error="boom").ok is False and judge.result(error="boom").metric == "idk_lexical"


@pytest.mark.parametrize("line", BEFORE, ids=["panel", "skipped", "lexical"])
def test_a_verdict_is_recorded_as_before_the_fold(line: str) -> None:
    """An old journal line reads as a Score and is written back byte for byte (what resuming an old run needs)."""
    score = Score.model_validate(json.loads(line))
    assert dumps(score.record()) == line
    assert all(m.metric == "RB_llm" for m in score.members)


def test_the_record_names_every_field_of_a_score() -> None:
    assert sorted(RECORD_ORDER) == sorted(Score.model_fields)


def test_the_sample_log_leaves_the_metric_out() -> None:
    score = Score.model_validate(json.loads(BEFORE[0]))
    line = Sample(id="c::1", input="q?", scores={"RB_llm": score}).to_dict()["scores"]["RB_llm"]
    assert "metric" not in line and all("metric" not in m for m in line["members"])
    assert list(line)[:3] == ["error", "judge", "model"]  # the sample log's own order
    assert Sample(id="x", input="q?", scores={"m": Score(value=1.0, metric="m")}).to_dict()["scores"] == \
        {"m": {"value": 1.0}}  # no empty panel, no metric
    assert "metric" not in json_schema()["$defs"]["Score"]["properties"]


def _masked(record: dict) -> str:
    """The record as JSON text in its own key order, latencies (the only figures that vary) masked."""
    def walk(value):
        if isinstance(value, dict):
            return {k: "<latency>" if k == "latency" else walk(v) for k, v in value.items()}
        return [walk(v) for v in value] if isinstance(value, list) else value
    return json.dumps(walk(record))


def test_a_judged_file_writes_each_verdict_in_its_files_shape(tmp_path: Path, monkeypatch, capsys) -> None:
    """A panel with one member that cannot be read, through the local server: the journal and the results line keep
    the record's shape (judge and metric first), the sample log its own (no metric), the same verdict in all three."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with OpenAIServer(by_model({"a": "Close to the reference.\nRating: [[8]]", "b": "I would rather not."})) as server:
        code, _, err = run_cli(["judge", str(RESPONSES), "--judges", "rb_llm,idk_lexical", "--judge-models",
                                "openai/a,openai/b", "--min-panel", "1", "--api-base", server.base_url,
                                "--out", str(tmp_path / "judged.jsonl"), "--limit", "2"], monkeypatch, capsys)
    assert code == 0, err
    journal = [json.loads(x) for x in (tmp_path / "judged.judgements.jsonl").read_text(encoding="utf-8").splitlines()]
    panel = next(r["value"] for r in journal if r["stage"] == "rb_llm" and r["value"].get("members"))
    assert list(panel) == ["judge", "metric", "value", "label", "rationale", "model", "prompt_tokens",
                           "completion_tokens", "latency", "members", "details"]
    assert [list(m) for m in panel["members"]] == [
        ["judge", "metric", "value", "label", "rationale", "raw", "model", "prompt_tokens", "completion_tokens",
         "latency", "details"],
        ["judge", "metric", "rationale", "raw", "error", "model", "prompt_tokens", "completion_tokens", "latency",
         "details"]]
    lexical = next(r["value"] for r in journal if r["stage"] == "idk_lexical")
    assert list(lexical) == ["judge", "metric", "value", "label", "rationale", "model", "details"]

    first = json.loads((tmp_path / "judged.jsonl").read_text(encoding="utf-8").splitlines()[0])
    judges = first["ragjudge"]["judges"]
    key = first["task_id"]
    by_stage = {r["stage"]: r["value"] for r in journal if r["key"].replace("<::>", "::") == key.replace("<::>", "::")}
    assert _masked(judges["rb_llm"]) == _masked(by_stage["rb_llm"])
    assert _masked(judges["idk_lexical"]) == _masked(by_stage["idk_lexical"])

    sample = json.loads((tmp_path / "judged.samples.jsonl").read_text(encoding="utf-8").splitlines()[0])
    logged = sample["scores"]["RB_llm"]
    assert "metric" not in logged and [m["model"] for m in logged["members"]] == ["openai/a", "openai/b"]
    assert logged["members"][1] == {k: v for k, v in judges["rb_llm"]["members"][1].items() if k != "metric"}
    assert Score.model_validate(by_stage["rb_llm"]).model_dump() == Score.model_validate(logged).model_dump()


def test_a_sample_in_memory_equals_the_one_read_back(tmp_path: Path, monkeypatch) -> None:
    """The judges' Scores carry their metric; the samples built from them do not (nor their panels' members), as
    reading the log back gives: for plain records and for MTRAG rows."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    rows = {"rag": [{"id": "q1", "question": "Can I pay monthly?", "answer": "No: premiums are billed once a year.",
                     "contexts": ["Premiums are billed once a year."], "reference": "No, once a year."}],
            "mtrag": [json.loads(x) for x in RESPONSES.read_text(encoding="utf-8").splitlines()[:2]]}
    with OpenAIServer(by_model({"a": "Close.\nRating: [[8]]", "b": "Far.\nRating: [[4]]"})) as server:
        for name, data in rows.items():
            result = ragjudge.evaluate(data, ["rb_llm", "idk_lexical"], ["openai/a", "openai/b"],
                                       api_base=server.base_url, out=tmp_path / name, show_progress=False)
            assert all(len(s.scores["RB_llm"].members) == 2 for s in result.samples), name
            assert result.samples == ragjudge.load_run(tmp_path / name).samples, name

"""Issue 41, items 1 and 7: nothing silent on plain records. A judge that cannot apply to a record (no passages for
RB_alg, no answer) records it as not applicable with the reason, counted apart (summary, table, report, DataFrame),
never as a 0 inside the mean, while MTRAG's benches keep their protocol's 0; a field that no record has is one line
naming it and the file (exit 2), from the CLI and the API; `--judges ''` is a usage error; the table's errors and the
closing line count the same samples; every metric has its DataFrame column and a reason column; ragas's log lines for
failures ragjudge records are not printed."""

from __future__ import annotations

import asyncio
import csv
import json
import logging
import re
import statistics
from pathlib import Path
from typing import Any

import pytest

import ragjudge
from conftest import REPO, model_close, run_cli
from ragjudge.errors import InputError, UsageError
from ragjudge.bench.mtrag.items import judged_item
from ragjudge.judges import JudgeContext, JudgedItem, JudgeRegistry
from ragjudge.models import Prediction, Task, Turn
from ragjudge.testing.openai_server import OpenAIServer, Reply

ROWS = REPO / "examples" / "rag-app" / "rows.csv"


def rows() -> list[dict[str, Any]]:
    with ROWS.open(newline="") as fh:
        return [{**r, "contexts": json.loads(r["contexts"]), "labels": json.loads(r["labels"])}
                for r in csv.DictReader(fh)]


def write_csv(path: Path, records: list[dict[str, Any]]) -> Path:
    fields = list(dict.fromkeys(k for r in records for k in r))
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        for r in records:
            writer.writerow({k: json.dumps(v) if isinstance(v, (list, dict)) else v for k, v in r.items()})
    return path


@pytest.fixture(scope="module")
def full() -> ragjudge.EvalResult:
    return ragjudge.evaluate(rows(), judges=["rb_alg"], show_progress=False)


# -- not applicable, never a 0 ----------------------------------------------------------------------------------
def test_empty_contexts_are_not_applicable_for_rb_alg_on_plain_records(full: ragjudge.EvalResult) -> None:
    """Was RB_agg 0.0 inside the mean (0.617 fell to 0.471): now left out, and the mean of the others unchanged."""
    records = rows()
    records[0]["contexts"] = []
    del records[2]["contexts"]
    result = ragjudge.evaluate(records, judges=["rb_alg"], show_progress=False)
    metric = result.summary.metrics["RB_agg"]
    assert (metric.n, metric.errors, metric.not_applicable) == (4, 0, 2)
    others = [s.scores["RB_agg"].value for s in full.samples if s.id not in ("1", "3")]
    assert model_close(metric.value, statistics.fmean(others))  # type: ignore[arg-type]
    for sid in ("1", "3"):
        score = next(s for s in result.samples if s.id == sid).scores["RB_agg"]
        assert score.value is None and score.error is None and score.details["skipped"].startswith("no passages")
    water = result.summary.breakdowns["topic"].groups["water"].metrics["RB_agg"]
    assert (water.n, water.not_applicable) == (1, 1)


def test_rb_alg_keeps_mtrag_protocol_zero_without_passages() -> None:
    """MTRAG's benches score a task without passages RB_agg 0 as the official scripts do (their figures stay as
    they were); the plain-records option makes it not applicable; a wrong option value names it."""
    task = Task(task_id="t::1", conversation_id="t", turn=1, input=[Turn(speaker="user", text="What is covered?")],
                contexts=[], targets=[Turn(speaker="agent", text="Policy 42 covers water damage.")])
    item = judged_item(task, Prediction(task_id="t::1", text="Policy 42 covers water damage from pipes."))
    registry = JudgeRegistry()
    [mtrag] = asyncio.run(registry.build("rb_alg").judge([item], JudgeContext()))
    assert mtrag.value == 0.0 and "BertKPrec" not in mtrag.details
    [plain] = asyncio.run(registry.build("rb_alg", {"no_passages": "not_applicable"}).judge([item], JudgeContext()))
    assert plain.value is None and plain.details["skipped"].startswith("no passages")
    with pytest.raises(InputError, match=r"rb_alg.yaml: field 'options.no_passages': must be one of zero, "
                                         r"not_applicable, got 'never'"):
        registry.build("rb_alg", {"no_passages": "never"})


def test_a_record_without_an_answer_is_not_applicable_and_nothing_errs(tmp_path: Path, monkeypatch, capsys) -> None:
    """Was the solver's error: exit 1, "1 sample(s) had errors" under a table saying errors 0."""
    records = rows()
    records[1]["answer"] = ""  # an empty CSV cell: no answer
    path = write_csv(tmp_path / "rows.csv", records)
    code, out, err = run_cli(["judge", str(path), "--out", str(tmp_path / "run.jsonl"), "--format", "json"],
                             monkeypatch, capsys)
    assert code == 0, err
    assert "had errors" not in err
    metric = json.loads(out)["metrics"]["RB_agg"]
    assert (metric["n"], metric["errors"], metric["not_applicable"]) == (5, 0, 1)
    [sample] = [json.loads(line) for line in (tmp_path / "run.samples.jsonl").read_text().splitlines()
                if json.loads(line)["id"] == "2"]
    assert sample["scores"]["RB_agg"]["details"]["skipped"].startswith("no answer")
    assert "error" not in sample and "error" not in sample["scores"]["RB_agg"]


def test_no_answer_column_is_one_line_naming_the_field_and_the_file(tmp_path: Path, monkeypatch, capsys) -> None:
    records = [{k: v for k, v in r.items() if k != "answer"} for r in rows()]
    path = write_csv(tmp_path / "rows.csv", records)
    code, out, err = run_cli(["judge", str(path), "--out", str(tmp_path / "run.jsonl")], monkeypatch, capsys)
    assert code == 2 and out == ""
    assert err == (f"error: {path}: field 'answer': no record has it: give it under one of: answer, response, "
                   "actual_output\n")


def test_no_answer_from_python_is_an_input_error_naming_data() -> None:
    """Was no error at all, and `summary.headline` None."""
    records = [{k: v for k, v in r.items() if k != "answer"} for r in rows()]
    with pytest.raises(InputError) as raised:
        ragjudge.evaluate(records, show_progress=False)
    assert str(raised.value) == ("data: field 'answer': no record has it: give it under one of: answer, response, "
                                 "actual_output")


def test_a_judge_named_for_a_field_no_record_has_is_refused() -> None:
    records = [{k: v for k, v in r.items() if k != "reference"} for r in rows()]
    with pytest.raises(InputError, match=r"^data: field 'reference': no record has it \(judge rb_alg needs it\)"):
        ragjudge.evaluate(records, judges=["rb_alg"], show_progress=False)
    with pytest.raises(InputError, match=r"^data: field 'reference': no record has it \(judge rb_alg needs it\)"):
        ragjudge.evaluate(records, show_progress=False)  # the default judge, which nothing here is for
    records = [{k: v for k, v in r.items() if k != "contexts"} for r in rows()]
    with pytest.raises(InputError, match=r"^data: field 'contexts': no record has it \(judge rb_alg needs it\)"):
        ragjudge.evaluate(records, judges=["rb_alg"], show_progress=False)


# -- usage ------------------------------------------------------------------------------------------------------
def test_empty_judges_is_a_usage_error(monkeypatch, capsys, tmp_path: Path) -> None:
    """Was exit 0 having judged nothing."""
    code, out, err = run_cli(["judge", str(ROWS), "--judges", "", "--out", str(tmp_path / "r.jsonl")], monkeypatch,
                             capsys)
    assert (code, out) == (2, "")
    assert err == "error: --judges names nothing: name at least one, or leave it out for the default\n"
    code, _, err = run_cli(["eval", "--bench", "rag", "--data", str(ROWS), "-T", "judges=", "--out",
                            str(tmp_path / "e")], monkeypatch, capsys)
    assert code == 2 and err == "error: -T judges names nothing: name at least one, or leave it out for the default\n"
    assert not (tmp_path / "r.summary.json").exists()
    for given, name in (({"judges": []}, "judges"), ({"metrics": ""}, "metrics"), ({"judges": " , "}, "judges")):
        with pytest.raises(UsageError, match=f"^{name} names nothing: name at least one judge"):
            ragjudge.evaluate(rows(), show_progress=False, **given)


# -- LLM judges through the local server ------------------------------------------------------------------------
def unreadable(request: Any) -> Reply:
    """A judge model whose answers ragas can never parse: every faithfulness item an error."""
    return Reply(content="I would rather not answer in JSON.")


@pytest.fixture
def llm(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with OpenAIServer(unreadable) as server:
        yield server


def test_the_errors_column_and_the_closing_line_count_the_same_samples(llm: OpenAIServer, tmp_path: Path,
                                                                        monkeypatch, capsys) -> None:
    records = rows()
    records[3]["answer"] = ""  # not applicable: neither an error nor a figure
    path = write_csv(tmp_path / "rows.csv", records)
    code, out, err = run_cli(["judge", str(path), "--judges", "faithfulness,rb_alg", "--judge-models",
                              "openai/judge", "--api-base", llm.base_url, "--out", str(tmp_path / "run.jsonl")],
                             monkeypatch, capsys)
    assert code == 1
    row = next(line for line in out.splitlines() if line.strip().startswith("faithfulness"))
    assert row.split()[-3:] == ["0", "5", "1"], row  # n 0, errors 5, n/a 1
    assert re.search(r"^5 sample\(s\) had errors", err, re.MULTILINE), err
    summary = json.loads((tmp_path / "run.summary.json").read_text())
    assert summary["n_errors"] == summary["metrics"]["faithfulness"]["errors"] == 5
    assert summary["metrics"]["faithfulness"]["not_applicable"] == summary["metrics"]["RB_agg"]["not_applicable"] == 1


def test_to_pandas_has_every_metric_and_why_a_value_is_missing(llm: OpenAIServer) -> None:
    """Was: a metric whose every sample errored had no column."""
    records = rows()
    records[0]["contexts"] = []
    result = ragjudge.evaluate(records, judges=["faithfulness", "rb_alg"], judge_models=["openai/judge"],
                               api_base=llm.base_url, show_progress=False)
    df = result.to_pandas()
    columns = list(df.columns)
    assert columns[columns.index("faithfulness") + 1] == "faithfulness_reason" and columns[-2:] == ["RB_agg", "RB_agg_reason"]
    assert df["faithfulness"].isna().all() and df["faithfulness"].dtype == float
    assert df.loc[0, "faithfulness_reason"] == "not applicable: no passages"
    assert all(r.startswith("error: ") and "could not use the judge's output" in r for r in df["faithfulness_reason"][1:])
    assert df.loc[0, "RB_agg_reason"].startswith("not applicable: no passages")
    assert df["RB_agg"][1:].notna().all() and df["RB_agg_reason"][1:].isna().all()


def test_ragas_parse_failures_are_not_logged_again(llm: OpenAIServer, caplog: pytest.LogCaptureFixture) -> None:
    """ragas logs "Prompt ... failed to parse output" once per failed record, although the record's error says it
    already: dropped inside ragjudge's own ragas calls, kept for anyone else's."""
    caplog.set_level(logging.WARNING)
    result = ragjudge.evaluate(rows()[:2], judges=["faithfulness"], judge_models=["openai/judge"],
                               api_base=llm.base_url, show_progress=False)
    assert result.summary.metrics["faithfulness"].errors == 2
    assert not [r for r in caplog.records if r.name.startswith("ragas")], caplog.text
    logging.getLogger("ragas.prompt.pydantic_prompt").error("Prompt %s failed to parse output: %s", "theirs", "x")
    assert "Prompt theirs failed to parse output" in caplog.text  # outside our calls ragas's logging is untouched


# -- the table and the report -----------------------------------------------------------------------------------
def test_the_table_and_the_report_show_not_applicable(tmp_path: Path, monkeypatch, capsys) -> None:
    records = rows()
    records[0]["contexts"] = []
    path = write_csv(tmp_path / "rows.csv", records)
    code, out, err = run_cli(["judge", str(path), "--out", str(tmp_path / "run.jsonl")], monkeypatch, capsys)
    assert code == 0, err
    header = next(line for line in out.splitlines() if line.strip().startswith("metric"))
    assert header.split()[-3:] == ["n", "errors", "n/a"]
    row = next(line for line in out.splitlines() if line.strip().startswith("RB_agg"))
    assert row.split()[-3:] == ["5", "0", "1"]
    assert "n/a: samples the metric does not apply to" in out
    code, _, err = run_cli(["report", str(tmp_path / "run.samples.jsonl"), "--out", str(tmp_path / "r.html")],
                           monkeypatch, capsys)
    assert code == 0, err
    html = (tmp_path / "r.html").read_text()
    assert "n/a: samples the metric does not apply to" in html and "tasks it does not apply to" in html
    assert html.count('<th scope="col">n/a</th>') == 2  # the metrics table and the judges table


def test_a_bench_metric_counts_the_samples_whose_output_failed_as_errors() -> None:
    """The cause of "N sample(s) had errors" under a table saying errors 0: a metric's errors left out the samples
    whose output failed (their score is `Scorer.unscorable`'s error), which the closing line counts."""
    from ragjudge.engine.bench import Bench, BenchOptions, MetricInfo, SampleResult

    class Tiny(Bench[BenchOptions, str]):
        name = "tiny"
        Options = BenchOptions
        metrics = (MetricInfo("accuracy", "right answers"),)

        def load(self) -> list[str]:
            return []

        def solver(self, ctx: Any) -> Any:
            raise NotImplementedError

    results = [SampleResult("a", {"text": "x"}, {"accuracy": {"value": 1.0}}),
               SampleResult("b", {"error": "timeout"}, {"accuracy": {"error": "no output to score: timeout"}}),
               SampleResult("c", {"text": "y"}, {"accuracy": {"error": "judge failed"}})]
    summary = Tiny(BenchOptions()).summary(results, Tiny(BenchOptions()).mean_metrics(results))
    assert summary.metrics["accuracy"].errors == summary.n_errors == 2
    assert (summary.metrics["accuracy"].n, summary.metrics["accuracy"].value) == (1, 1.0)

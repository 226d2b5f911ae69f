"""The Python API (`ragjudge.evaluate`, `evaluate_async`, `run_bench`, `load_run`): the same runs as the CLI,
in-process, offline (idk_lexical and rb_alg judges, the extractive generator, shipped examples and fixtures)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import ragjudge
from conftest import MTRAG_FIXTURES, REPO, assert_json_equal, model_derived, run_cli_once
from ragjudge.errors import InputError, UsageError

RESPONSES = MTRAG_FIXTURES / "generation" / "responses-10.jsonl"
MINI = REPO / "examples" / "mini" / "tasks.jsonl"
JUDGES = ["idk_lexical", "rb_alg"]
MODEL_FLOATS = model_derived(r"Bert|RB_(alg|agg)")


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def without_run(summary: dict[str, Any]) -> dict[str, Any]:
    """A summary less `run` (the input's path, the seconds taken): what two runs on the same data share."""
    return {k: v for k, v in summary.items() if k != "run"}


@pytest.fixture(scope="module")
def cli_judged(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    out = tmp_path_factory.mktemp("cli") / "judged.jsonl"
    code, stdout, stderr = run_cli_once(["judge", str(RESPONSES), "--judges", ",".join(JUDGES), "--out", str(out),
                                         "--format", "json"])
    assert code == 0, stderr
    return json.loads(stdout), out


@pytest.fixture(scope="module")
def from_list() -> ragjudge.EvalResult:
    return ragjudge.evaluate(records(RESPONSES), judges=JUDGES, show_progress=False)


@pytest.mark.parametrize("kind", ["list", "dataframe", "path"])
def test_evaluate_gives_the_cli_summary(kind: str, cli_judged: tuple[dict[str, Any], Path],
                                        from_list: ragjudge.EvalResult) -> None:
    data: Any = {"list": None, "dataframe": pd.DataFrame(records(RESPONSES)), "path": RESPONSES}[kind]
    result = from_list if data is None else ragjudge.evaluate(data, judges=JUDGES, show_progress=False)
    want, _ = cli_judged
    assert_json_equal(without_run(result.summary.to_dict()), without_run(want), MODEL_FLOATS)
    assert result.summary.headline is not None and result.summary.metrics["RB_agg"].n == 10
    assert len(result.samples) == 10


def test_sync_evaluate_inside_a_running_loop(cli_judged: tuple[dict[str, Any], Path]) -> None:
    async def cell() -> ragjudge.EvalResult:  # a Jupyter cell: a loop is running, the call is synchronous
        return ragjudge.evaluate(RESPONSES, judges=["idk_lexical"], show_progress=False)

    result = asyncio.run(cell())
    want, _ = cli_judged
    assert result.summary.metrics["idk_lexical"] == ragjudge.load_run(cli_judged[1]).summary.metrics["idk_lexical"]
    assert result.summary.n_samples == want["n_samples"]


def test_evaluate_async() -> None:
    async def main() -> tuple[ragjudge.EvalResult, ragjudge.EvalResult]:
        return await asyncio.gather(
            ragjudge.evaluate_async(RESPONSES, judges=["idk_lexical"], show_progress=False),
            ragjudge.evaluate_async(records(RESPONSES)[:4], judges=["idk_lexical"], show_progress=False))

    whole, part = asyncio.run(main())
    assert (whole.summary.n_samples, part.summary.n_samples) == (10, 4)


def test_a_second_evaluate_on_the_same_out_resumes(tmp_path: Path) -> None:
    first = ragjudge.evaluate(records(RESPONSES), judges=["idk_lexical"], out=tmp_path, show_progress=False)
    journal = tmp_path / "judgements.jsonl"
    lines = journal.read_text().splitlines()
    assert len(lines) == 10
    second = ragjudge.evaluate(records(RESPONSES), judges=["idk_lexical"], out=tmp_path, show_progress=False)
    assert journal.read_text().splitlines() == lines  # nothing judged again
    assert second.summary.metrics == first.summary.metrics
    assert second.path == tmp_path / "samples.jsonl"


def test_without_out_nothing_is_written_and_the_result_is_the_run_in_memory(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = ragjudge.evaluate(records(RESPONSES), judges=["idk_lexical"], show_progress=False)
    assert result.path is None and result.files is None and list(tmp_path.iterdir()) == []
    assert result.run_info["n_samples"] == 10 and result.run_info["bench"] == "mtrag"
    assert result.report(tmp_path / "report.html").is_file()  # the report draws a run kept in memory too


def test_load_run_of_a_judge_results_file(cli_judged: tuple[dict[str, Any], Path],
                                          from_list: ragjudge.EvalResult) -> None:
    want, path = cli_judged
    loaded = ragjudge.load_run(path)
    assert without_run(loaded.summary.to_dict()) == without_run(want)
    assert [s.id for s in loaded.samples] == [r["task_id"] for r in records(path)]
    got, expected = loaded.to_pandas(), from_list.to_pandas()
    assert list(got.columns) == list(expected.columns)
    assert got["sample_id"].tolist() == expected["sample_id"].tolist()
    assert got["idk_lexical"].tolist() == expected["idk_lexical"].tolist()


def test_to_pandas_has_a_row_per_sample_a_column_per_metric_and_the_labels(from_list: ragjudge.EvalResult) -> None:
    df = from_list.to_pandas()
    assert df.shape[0] == 10
    assert list(df.columns[:5]) == ["sample_id", "question", "answer", "contexts", "reference"]
    assert {"answerability", "domain", "turn", "question_type"} <= set(df.columns)
    assert {"idk_lexical", "BertKPrec", "RB_agg", "RougeL_stemFalse"} <= set(df.columns)
    first, task = from_list.samples[0], records(RESPONSES)[0]
    row = df.iloc[0]
    assert row["RB_agg"] == first.scores["RB_agg"].value
    assert row["answerability"] == task["answerability"][0]
    assert row["question"] == next(t["text"] for t in reversed(task["input"]) if t["speaker"] == "user")
    assert row["answer"] == task["predictions"][0]["text"]
    assert row["contexts"] == [c["text"] for c in task["contexts"]]
    assert row["reference"] == task["targets"][0]["text"]
    assert set(df["domain"]) >= {"clapnq"}


def test_evaluate_with_a_generator_matches_a_cli_eval_run_folder(tmp_path: Path) -> None:
    folder = tmp_path / "cli"
    code, stdout, stderr = run_cli_once(["eval", "--bench", str(MINI), "--gen", "extractive", "--judges",
                                         "idk_lexical", "--out", str(folder), "--format", "json"])
    assert code == 0, stderr
    loaded = ragjudge.load_run(folder)
    result = ragjudge.evaluate(MINI, judges=["idk_lexical"], gen="extractive", show_progress=False)
    assert without_run(result.summary.to_dict()) == without_run(json.loads(stdout))
    assert without_run(loaded.summary.to_dict()) == without_run(json.loads(stdout))
    pd.testing.assert_frame_equal(loaded.to_pandas(), result.to_pandas())


def test_run_bench_on_a_non_mtrag_bench() -> None:
    result = ragjudge.run_bench("cdr", data=REPO / "examples" / "cdr-mini", show_progress=False)
    assert result.bench == "cdr" and result.summary.n_samples == 10
    assert result.summary.headline is not None and result.summary.headline.metric == "nDCG@10"
    df = result.to_pandas()
    assert df.shape[0] == 10 and {"sample_id", "question", "contexts", "nDCG@10", "R@10"} <= set(df.columns)
    assert df["nDCG@10"].mean() == pytest.approx(result.summary.metrics["nDCG@10"].value, abs=1e-6)


def test_run_bench_refuses_an_option_the_bench_does_not_have() -> None:
    with pytest.raises(UsageError, match=r"unknown option options\['colour'\] for bench cdr"):
        ragjudge.run_bench("cdr", data=REPO / "examples" / "cdr-mini", options={"colour": "red"},
                           show_progress=False)
    with pytest.raises(UsageError, match="run_bench\\(\\) got an unknown keyword argument 'colour'"):
        ragjudge.run_bench("cdr", data=REPO / "examples" / "cdr-mini", colour="red", show_progress=False)


@pytest.mark.parametrize("kwargs, message", [
    ({"judges": [1]}, "judges: each value must be text, got 1"),
    ({"limit": 0}, "limit must be a whole number >= 1, got 0"),
    ({"concurrency": "many"}, "concurrency must be a whole number >= 1, got 'many'"),
    ({"options": {"min_panel": 0}}, "options['min_panel'] must be a whole number >= 1, got 0"),
    ({"judges": ["idk_lexical"], "metrics": ["idk_lexical"]}, "give judges= or metrics= (the same thing), not both"),
])
def test_a_bad_option_is_one_line_naming_the_parameter(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError) as info:
        ragjudge.evaluate(RESPONSES, show_progress=False, **kwargs)
    assert str(info.value) == message


def test_metrics_is_judges_by_its_ragas_name() -> None:
    by_metrics = ragjudge.evaluate(RESPONSES, metrics=["idk_lexical"], show_progress=False)
    assert list(by_metrics.summary.metrics) == ["idk_lexical", "answerability_acc"]


def test_report_writes_html(from_list: ragjudge.EvalResult, tmp_path: Path) -> None:
    path = from_list.report(tmp_path / "report.html")
    assert path.is_file() and path.read_text(encoding="utf-8").lstrip().lower().startswith("<!doctype html")


def test_a_record_missing_a_field_is_an_input_error_naming_it() -> None:
    data = records(RESPONSES)
    del data[3]["input"]
    with pytest.raises(InputError) as info:
        ragjudge.evaluate(data, judges=["idk_lexical"], show_progress=False)
    assert str(info.value).startswith(f"data[3] (task_id {data[3]['task_id']!r}): field 'input'"), str(info.value)


def test_public_names() -> None:
    assert set(ragjudge.__all__) >= {"evaluate", "evaluate_async", "run_bench", "load_run", "EvalResult"}
    with pytest.raises(AttributeError):
        ragjudge.no_such_name  # noqa: B018

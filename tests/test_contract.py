"""The result contract (`ragjudge.engine.summary`): the published schema is the model's, impossible figures are
refused where they are made, and `ragjudge schema summary` prints what the docs show."""

from __future__ import annotations

import json

import jsonschema
import pytest
from pydantic import ValidationError

from conftest import REPO, run_cli
from ragjudge.engine.summary import SCHEMA_ID, MetricCatalog, MetricInfo, Summary, headline_of, json_schema

CATALOG = MetricCatalog([MetricInfo("acc", "accuracy"), MetricInfo("cases", "how many cases", None, kind="count"),
                         MetricInfo("R@*", "recall at k"), MetricInfo("invented", "invented answers", False,
                                                                      kind="rate")], "demo")


def summary(**changes) -> dict:
    metrics = {"acc": CATALOG.metric("acc", 0.5, n=4), "cases": CATALOG.metric("cases", 4),
               "R@5": CATALOG.metric("R@5", 0.25, n=4)}
    base = Summary(bench="demo", title="demo: 4 samples", n_samples=4, n_errors=0, metrics=metrics,
                   headline=headline_of(metrics, ["acc"], "samples")).to_dict()
    base.update(changes)
    return base


def test_the_published_schema_is_the_models() -> None:
    published = json.loads((REPO / "docs" / "summary.schema.json").read_text(encoding="utf-8"))
    assert published == json_schema(), "docs/summary.schema.json is stale: `ragjudge schema summary > docs/...`"


def test_schema_command_prints_it(monkeypatch, capsys) -> None:
    code, out, err = run_cli(["schema", "summary"], monkeypatch, capsys)
    assert code == 0, err
    assert json.loads(out) == json_schema() and json.loads(out)["$id"] == SCHEMA_ID
    code, _, err = run_cli(["schema", "summaries"], monkeypatch, capsys)
    assert code == 2 and err == "error: unknown schema 'summaries' (available: summary, sample, labels)\n"


def test_a_summary_validates_against_the_json_schema_and_round_trips() -> None:
    data = summary()
    jsonschema.validate(data, json_schema())
    assert data["schema"] == SCHEMA_ID and data["headline"] == {"metric": "acc", "value": 0.5,
                                                                 "text": "acc 0.500 over 4 samples"}
    assert Summary.model_validate(data).to_dict() == data
    assert (data["metrics"]["cases"]["kind"], data["metrics"]["cases"]["higher_is_better"]) == ("count", None)
    assert data["metrics"]["R@5"]["description"] == "recall at k"  # a family declared once by pattern


@pytest.mark.parametrize("change, message", [
    (lambda d: d["metrics"]["acc"].update(value=1.5), "metric acc: a score must be in [0, 1], got 1.5"),
    (lambda d: d["metrics"]["cases"].update(value=2.5), "metric cases: a count must be a whole number >= 0"),
    (lambda d: d["metrics"]["cases"].update(value=-1), "metric cases: a count must be a whole number >= 0"),
    (lambda d: d["metrics"]["acc"].update(value=float("nan")), "is not a finite number"),
    (lambda d: d.update(headline={"metric": "nope", "value": 1, "text": "x"}), "headline metric 'nope'"),
    (lambda d: d.update(breakdowns={"turn": {"title": "t", "label": "turn", "columns": [], "groups": {
        "first": {"n": 1, "metrics": {"f1": {"value": 0.5}}}}}}), "metric 'f1' is not in `metrics`"),
    (lambda d: d.update(breakdowns={"turn": {"title": "t", "label": "turn", "columns": ["acc", "f1"], "groups": {}}}),
     "shows unknown metric(s) ['f1']"),
    (lambda d: d.update(extra_field=1), "Extra inputs are not permitted"),
])
def test_impossible_summaries_are_refused(change, message: str) -> None:
    data = summary()
    change(data)
    with pytest.raises(ValidationError, match=None) as caught:
        Summary.model_validate(data)
    assert message in str(caught.value)


def test_an_undeclared_metric_is_a_bench_bug() -> None:
    with pytest.raises(KeyError, match="demo: metric 'f1' is not declared"):
        CATALOG.metric("f1", 0.5)


def test_to_json_is_text_and_to_dict_a_dict() -> None:
    """Issue 33: pandas' and pydantic's convention, which users bring: `to_json()` a string, `to_dict()` a dict."""
    from ragjudge.formats.samples import Sample, Score

    result = Summary.model_validate(summary())
    assert isinstance(result.to_json(), str) and json.loads(result.to_json()) == result.to_dict()
    sample = Sample(id="s1", input="q", scores={"acc": Score(value=1.0)})
    assert isinstance(sample.to_json(), str) and json.loads(sample.to_json()) == sample.to_dict()
    assert sample.to_dict()["schema"] == "ragjudge.sample/1"

"""`ragjudge correlate`: statistics against scipy/krippendorff/hand computation, the InspectorRAGet reader on
our own fixtures (string, numeric and categorical values, missing annotators), the CLI and its errors."""

from __future__ import annotations

import csv
import io
import json
import math
import sys
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from scipy import stats as sps

from ragjudge.cli import main
from ragjudge.correlation import load_humans
from ragjudge.correlation.aggregate import Scale, aggregate
from ragjudge.correlation.agreement import _kappa_formula, item_agrees, mtrag_agreement
from ragjudge.correlation.dataset import ItemKey
from ragjudge.correlation.idk import clarification_agreement, idk_accuracy
from ragjudge.correlation.stats import (
    correlate,
    draw_tasks,
    inverse_frequency_weights,
    resample_stats,
    scipy_correlations,
    weighted_correlations,
)
from ragjudge.errors import InputError
from ragjudge.formats.inspectorraget import read_inspectorraget

FIXTURES = Path(__file__).parent / "fixtures" / "inspectorraget"
HUMANS = FIXTURES / "human_eval.json"
HUMAN_DIMS = ["faithfulness", "appropriateness", "naturalness", "completeness"]


def run_cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, str, str]:
    """The real console entry point in-process: (exit code, stdout, stderr)."""
    monkeypatch.setattr(sys, "argv", ["ragjudge", *args])
    monkeypatch.setenv("COLUMNS", "200")
    with pytest.raises(SystemExit) as exc:
        main()
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


# ------------------------------------------------------------------------------------------- statistics


def test_unweighted_correlations_equal_scipy_with_ties() -> None:
    rng = np.random.default_rng(3)
    x = np.round(rng.random(40), 1)  # ties in the judge
    y = rng.integers(1, 5, 40).astype(float)  # a 4-point human scale: many ties
    result = correlate(x, y)
    expected = {"spearman": sps.spearmanr(x, y), "kendall": sps.kendalltau(x, y), "pearson": sps.pearsonr(x, y)}
    for stat, res in expected.items():
        assert result[stat].value == pytest.approx(res.statistic, abs=1e-12)
        assert result[stat].p == pytest.approx(res.pvalue, rel=1e-9)
        assert result[stat].ci_low is None  # no bootstrap asked


def test_equal_weights_give_scipy_statistics() -> None:
    rng = np.random.default_rng(4)
    x, y = rng.random(25), rng.integers(1, 4, 25).astype(float)
    weighted = weighted_correlations(x, y, np.full(25, 0.37))
    plain = scipy_correlations(x, y)
    for stat in plain:
        assert weighted[stat][0] == pytest.approx(plain[stat][0], abs=1e-12)


def test_inverse_frequency_weighting_on_a_hand_computed_case() -> None:
    # Human scores 1,1,1,2: the three 1s weigh 1/3 each, the 2 weighs 1 (each score value weighs 1 in total).
    judge = np.array([1.0, 2.0, 3.0, 10.0])
    human = np.array([1.0, 1.0, 1.0, 2.0])
    assert inverse_frequency_weights(human).tolist() == pytest.approx([1 / 3, 1 / 3, 1 / 3, 1.0])
    # Spearman: ranks rx = 1,2,3,4 and ry = 2,2,2,4; weighted means 3 and 3; deviations (-2,-1,0,1), (-1,-1,-1,1):
    #   cov = 1/3·(2+1+0) + 1 = 2, var_x = 1/3·(4+1+0) + 1 = 8/3, var_y = 1/3·3 + 1 = 2 → ρ = 2/√(16/3) = √3/2.
    # Kendall: concordant pairs are (i,4), i = 1..3, weight 1/3 each → 1; pairs untied in x weigh 3·1/9 + 3·1/3 = 4/3,
    #   pairs untied in y weigh 1 → τ = 1/√(4/3) = √3/2.
    # Pearson: means 6 and 1.5, deviations (-5,-4,-3,4), (-.5,-.5,-.5,.5): cov = 1/3·6 + 2 = 4,
    #   var_x = 1/3·50 + 16 = 98/3, var_y = 1/3·.75 + .25 = .5 → r = 4/√(49/3) = 4√3/7.
    result = correlate(judge, human, weighting="inverse-frequency")
    assert result["spearman"].value == pytest.approx(math.sqrt(3) / 2, abs=1e-12)
    assert result["kendall"].value == pytest.approx(math.sqrt(3) / 2, abs=1e-12)
    assert result["pearson"].value == pytest.approx(4 * math.sqrt(3) / 7, abs=1e-12)
    # Unweighted they differ: ρ = 3/√15, τ-b = 3/√18.
    plain = correlate(judge, human)
    assert plain["spearman"].value == pytest.approx(3 / math.sqrt(15))
    assert plain["kendall"].value == pytest.approx(3 / math.sqrt(18))
    # p-values use n_eff = (Σw)²/Σw² = 4/(4/3) = 3: t = ρ·√((n_eff-2)/(1-ρ²)) = √3 with 1 degree of freedom.
    assert result["spearman"].p == pytest.approx(2 * sps.t.sf(math.sqrt(3), 1))


def test_resample_statistics_equal_scipy_on_the_materialised_resample() -> None:
    rng = np.random.default_rng(5)
    n = 30
    x = np.round(rng.random(n), 1)
    y = rng.integers(1, 5, n).astype(float)
    multiplicity = rng.integers(0, 3, size=(4, n)).astype(float)
    rows = resample_stats(x, y, multiplicity)
    weighted_rows = resample_stats(x, y, multiplicity, "inverse-frequency")
    for b in range(4):
        idx = np.repeat(np.arange(n), multiplicity[b].astype(int))
        expected = scipy_correlations(x[idx], y[idx])
        expected_w = weighted_correlations(x[idx], y[idx], inverse_frequency_weights(y[idx]))
        for stat in expected:
            assert rows[stat][b] == pytest.approx(expected[stat][0], abs=1e-10)
            assert weighted_rows[stat][b] == pytest.approx(expected_w[stat][0], abs=1e-10)


def test_bootstrap_resamples_tasks_and_is_reproducible() -> None:
    rng = np.random.default_rng(6)
    tasks = np.repeat(np.arange(8), 3)  # three models answered each of 8 tasks
    x = rng.random(24)
    y = np.clip(np.round(x * 4 + rng.normal(0, 1, 24)), 1, 4)
    draws = draw_tasks(8, 300, seed=11)
    assert draws.shape == (300, 8) and (draws.sum(axis=1) == 8).all()
    result = correlate(x, y, tasks=tasks, task_draws=draws)
    # Brute force: materialise every resample (all items of each drawn task), scipy, percentiles.
    values = []
    for row in draws:
        idx = np.concatenate([np.flatnonzero(tasks == t) for t in range(8) for _ in range(int(row[t]))])
        values.append(sps.spearmanr(x[idx], y[idx]).statistic)
    low, high = np.percentile([v for v in values if np.isfinite(v)], [2.5, 97.5])
    assert result["spearman"].ci_low == pytest.approx(low, abs=1e-10)
    assert result["spearman"].ci_high == pytest.approx(high, abs=1e-10)
    again = correlate(x, y, tasks=tasks, task_draws=draw_tasks(8, 300, seed=11))
    other = correlate(x, y, tasks=tasks, task_draws=draw_tasks(8, 300, seed=12))
    assert again["kendall"].ci_low == result["kendall"].ci_low
    assert other["kendall"].ci_low != result["kendall"].ci_low


def test_too_few_items_give_no_statistics() -> None:
    result = correlate(np.array([1.0, 2.0]), np.array([2.0, 1.0]))
    assert all(e.value is None and e.p is None for e in result.values())
    constant = correlate(np.array([1.0, 1.0, 1.0, 1.0]), np.array([1.0, 2.0, 3.0, 4.0]))
    assert constant["spearman"].value is None


# ------------------------------------------------------------------------------------------- agreement


@pytest.mark.parametrize(("positions", "agrees"), [
    ([3, 3, 3], True), ([3, 3, 4], True), ([3, 2, 3], True), ([3, 3, 1], False), ([2, 3, 4], False),
    ([4, 4], True), ([3, 4], False), ([3, 3, 3, 4], True), ([3, 3, 4, 4], False), ([1, 1, 1, 3], False),
])
def test_mtrag_agreement_definition(positions: list[int], agrees: bool) -> None:
    assert item_agrees(positions) is agrees


def test_mtrag_agreement_share_ignores_single_ratings() -> None:
    assert mtrag_agreement([[3, 3, 4], [1, 3, 4], [2]]) == (0.5, 0.0)
    assert mtrag_agreement([[2]]) == (None, None)


def test_scale_positions() -> None:
    assert Scale.infer([], levels=[0, 0.5, 1]).position(0.5) == 1
    assert Scale.infer([1, 2, 4]).position(4) == 3  # integer data: step 1, even if 3 was never given
    assert Scale.infer([0.1, 0.3, 0.2]).position(0.3) == 2


def test_aggregators() -> None:
    assert aggregate([4, 3, 4], "majority") == 4
    assert aggregate([3, 4], "majority") == 3.5  # a tie falls back to the median
    assert aggregate([1, 2, 4], "average") == pytest.approx(7 / 3)
    assert aggregate([1, 2, 4, 4], None) == 3.0
    assert aggregate([], "median") is None


def test_kappa_formula_equals_sklearn() -> None:
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(7)
    a, b = rng.integers(1, 5, 50), rng.integers(1, 5, 50)
    b[:25] = a[:25]
    assert _kappa_formula(list(a), list(b), False) == pytest.approx(sklearn_metrics.cohen_kappa_score(a, b))
    assert _kappa_formula(list(a), list(b), True) == pytest.approx(
        sklearn_metrics.cohen_kappa_score(a, b, weights="quadratic"))


def test_idk_accuracy_counts() -> None:
    values = {1: 1.0, 2: 0.5, 3: 0.0, 4: 1.0, 5: 0.0}
    labels = {1: "UNANSWERABLE", 2: "PARTIAL", 3: "UNANSWERABLE", 4: "ANSWERABLE", 5: "CONVERSATIONAL"}
    result = idk_accuracy(values, labels)
    assert result["n"] == 4 and result["accuracy"] == 0.5  # 1 and 2 right; 3 and 4 wrong; 5 not scored
    assert result["by_answerability"]["CONVERSATIONAL"] == {"n": 1, "scored": 0, "yes": 0, "partial": 0, "no": 1,
                                                           "accuracy": None}
    assert idk_accuracy(values, labels, conversational_as_unanswerable=True)["accuracy"] == 0.4


def test_underspecified_tasks_scored_as_the_official_conditioning() -> None:
    """UNDERSPECIFIED: right iff the response asks for clarification, whatever the IDK judge says; unscored
    without the clarification judge's value."""
    idk = {1: 1.0, 2: 0.0, 3: 1.0, 4: 0.0, 5: 1.0}
    labels = {1: "UNDERSPECIFIED", 2: "UNDERSPECIFIED", 3: "UNDERSPECIFIED", 4: "UNDERSPECIFIED", 5: "UNANSWERABLE"}
    asks = {1: 1.0, 2: 1.0, 3: 0.0, 4: 0.0}
    result = idk_accuracy(idk, labels, underspecified=asks)
    assert result["by_answerability"]["UNDERSPECIFIED"]["scored"] == 4
    assert result["by_answerability"]["UNDERSPECIFIED"]["accuracy"] == 0.5  # 1 and 2 ask; 3 and 4 do not
    assert result["n"] == 5 and result["accuracy"] == 3 / 5
    assert idk_accuracy(idk, labels)["by_answerability"]["UNDERSPECIFIED"]["scored"] == 0  # no clarification judge
    assert idk_accuracy(idk, labels, underspecified={1: 1.0})["by_answerability"]["UNDERSPECIFIED"]["scored"] == 1


def test_clarification_agreement_counts() -> None:
    values = {1: 1.0, 2: 0.0, 3: 1.0, 4: 0.0, 5: 0.0, 6: 1.0}
    labels = {1: "UNDERSPECIFIED", 2: "UNDERSPECIFIED", 3: "ANSWERABLE", 4: "PARTIAL", 5: "UNANSWERABLE", 6: None}
    result = clarification_agreement(values, labels)
    assert {k: result[k] for k in ("n", "tp", "fn", "fp", "tn", "n_unlabelled")} == {
        "n": 5, "tp": 1, "fn": 1, "fp": 1, "tn": 2, "n_unlabelled": 1}
    assert (result["agreement"], result["precision"], result["recall"]) == (3 / 5, 1 / 2, 1 / 2)
    assert result["by_answerability"]["UNDERSPECIFIED"] == {"n": 2, "asks": 1, "share": 0.5}
    none = clarification_agreement({1: 0.0}, {1: "ANSWERABLE"})
    assert none["precision"] is None and none["recall"] is None and none["agreement"] == 1.0


def test_correlate_understands_the_clarification_judge(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """On the MTRAG-UN fixture (tests/fixtures/mtrag-un): a08 and a09 ask for clarification, a10 answers, no other
    prediction asks; the IDK table scores the three UNDERSPECIFIED tasks by underspecified_eval."""
    from ragjudge.testing.conformance.downstream import made_up_ratings

    run, exported = tmp_path / "run", tmp_path / "export.json"
    code, _, err = run_cli(capsys, monkeypatch, "judge", str(Path(__file__).parent / "fixtures" / "mtrag-un" /
                                                             "predictions.jsonl"),
                           "--judges", "idk_lexical,underspecified_lexical", "--out", str(run))
    assert code == 0, err
    code, _, err = run_cli(capsys, monkeypatch, "export", str(run), "--out", str(exported))
    assert code == 0, err
    humans, model = made_up_ratings(json.loads(exported.read_text()))
    (tmp_path / "humans.json").write_text(json.dumps(humans))
    args = ["correlate", str(tmp_path / "humans.json"), "--judges", f"{model}={run}", "--bootstrap", "0"]
    code, out, err = run_cli(capsys, monkeypatch, *args, "--format", "json")
    assert code == 0, err
    report = json.loads(out)
    clar = report["clarification"]["underspecified_eval"]
    assert {k: clar[k] for k in ("n", "tp", "fn", "fp", "tn")} == {"n": 10, "tp": 2, "fn": 1, "fp": 0, "tn": 7}
    assert (clar["agreement"], clar["precision"], clar["recall"]) == (0.9, 1.0, 2 / 3)
    idk = report["idk_accuracy"]["idk_lexical"]
    assert idk["underspecified_by"] == "underspecified_eval"
    under = idk["by_answerability"]["UNDERSPECIFIED"]
    assert (under["n"], under["scored"], under["accuracy"]) == (3, 3, 2 / 3)
    code, out, err = run_cli(capsys, monkeypatch, *args)
    assert code == 0, err
    assert "Clarification judges vs the UNDERSPECIFIED class" in out and "official conditioning" in out
    (tmp_path / "corr.json").write_text(json.dumps(report))  # the report's Humans tab shows the same table
    code, _, err = run_cli(capsys, monkeypatch, "report", str(run), "--correlate", str(tmp_path / "corr.json"),
                           "--out", str(tmp_path / "r.html"))
    assert code == 0, err
    html = (tmp_path / "r.html").read_text()
    assert "Clarification judges vs the UNDERSPECIFIED class" in html and "underspecified_eval" in html
    code, out, err = run_cli(capsys, monkeypatch, *args, "--format", "json", "--clarification-metrics", "none")
    assert code == 0, err
    report = json.loads(out)
    assert report["clarification"] == {} and report["idk_accuracy"]["idk_lexical"]["underspecified_by"] is None


# ------------------------------------------------------------------------------------------- reader


def test_reader_tolerates_strings_numbers_categories_and_missing_annotators() -> None:
    ds = load_humans(HUMANS)
    assert list(ds.humans) == HUMAN_DIMS  # the text metric faithfulness_reason is not a dimension
    assert list(ds.judges) == ["Bert-KPrec", "fm_faithfulness", "panel_rating", "idk_eval"]
    faith, appropriate = ds.humans["faithfulness"], ds.humans["appropriateness"]
    natural, complete = ds.humans["naturalness"], ds.humans["completeness"]
    # "c2::1" in the file; strings "3","4","4" on a categorical 1-4 scale, majority → 4.
    key = ItemKey("c2::1", "model-a")
    assert faith.ratings[key] == {"ann4": 3.0, "ann5": 4.0, "ann1": 4.0} and faith.values[key] == 4.0
    # The file writes "c1<::>1": joined on the normalised id. ann3 left appropriateness empty → 2 annotators.
    key = ItemKey("c1::1", "reference")
    assert appropriate.ratings[key] == {"ann2": 4.0, "ann4": 2.0} and appropriate.values[key] == 3.0
    # Word categories through numeric_value ("mostly yes" = 3, "yes" = 4); two annotators; median 3.5.
    key = ItemKey("c2::2", "model-a")
    assert complete.ratings[key] == {"ann5": 3.0, "ann1": 4.0} and complete.values[key] == 3.5
    # A single annotator; no annotation at all; only a composite value (no annotators to compare).
    assert faith.ratings[ItemKey("c1::3", "model-b")] == {"ann1": 1.0}
    assert ItemKey("c2::3", "model-b") not in faith.values
    assert natural.values[ItemKey("c3::1", "reference")] == 4.0 and ItemKey("c3::1", "reference") not in natural.ratings
    # Algorithm metrics: a categorical judge through numeric_value, and a panel aggregated by its median.
    assert ds.judges["fm_faithfulness"].values[ItemKey("c3::2", "model-a")] == 0.0  # "No"
    panel = ds.judges["panel_rating"]
    assert panel.ratings[ItemKey("c1::1", "model-a")] == {"judge-x": 8.0, "judge-y": 8.0}
    assert len(faith.values) == 23 and len(appropriate.values) == 24
    assert ds.items[ItemKey("c1::2", "model-b")].fields["answerability"] == ("PARTIAL",)
    assert ds.items[ItemKey("c1::2", "model-b")].fields["question_type"] == ("Explanation",)


def test_reader_accepts_the_newer_schema(tmp_path: Path) -> None:
    raw = json.loads(HUMANS.read_text())
    raw["results"] = raw.pop("evaluations")
    for ev in raw["results"]:
        ev["scores"] = ev.pop("annotations")
        ev["output"] = {"type": "text", "value": ev.pop("model_response")}
    newer = tmp_path / "v2.json"
    newer.write_text(json.dumps({**raw, "schema_version": 2}))
    old, new = load_humans(HUMANS), load_humans(newer)
    for dim in HUMAN_DIMS:
        assert new.humans[dim].values == old.humans[dim].values
    assert read_inspectorraget(newer).evaluations[0].model_response.startswith("The lighthouse")


def test_unknown_category_value_is_located(tmp_path: Path) -> None:
    raw = json.loads(HUMANS.read_text())
    raw["evaluations"][5]["annotations"]["faithfulness"]["ann1"] = {"value": "five stars"}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(raw))
    with pytest.raises(InputError) as exc:
        load_humans(bad)
    assert str(exc.value).startswith(f"{bad}: field 'evaluations[5].annotations.faithfulness.ann1.value': "
                                     "'five stars' is not one of the metric's values")


# ------------------------------------------------------------------------------------------- CLI


@pytest.fixture(scope="module")
def report_json() -> dict:
    """`correlate --format json` on the fixture (module-scoped: the CLI runs once for several checks)."""
    mp = pytest.MonkeyPatch()
    out = io.StringIO()
    mp.setattr(sys, "argv", ["ragjudge", "correlate", str(HUMANS), "--format", "json", "--bootstrap", "300"])
    mp.setattr(sys, "stdout", out)
    try:
        with pytest.raises(SystemExit) as exc:
            main()
    finally:
        mp.undo()
    assert exc.value.code == 0
    return json.loads(out.getvalue())


def test_json_report_shape(report_json: dict) -> None:
    expected_keys = {"correlations", "agreement", "judge_agreement", "judge_vs_judge", "idk_accuracy", "best"}
    assert expected_keys <= set(report_json)
    rows = report_json["correlations"]
    assert len(rows) == 4 * 4  # 4 algorithm metrics × 4 human dimensions
    for row in rows:
        assert set(row) == {"judge", "human", "n", "spearman", "kendall", "pearson"}
        for stat in ("spearman", "kendall", "pearson"):
            assert set(row[stat]) == {"value", "ci_low", "ci_high", "p"}
            assert row[stat]["ci_low"] <= row[stat]["ci_high"]
    assert set(report_json["agreement"]) == set(HUMAN_DIMS)
    assert set(report_json["judge_agreement"]) == {"panel_rating"}  # the only judge with several raters


def test_json_correlations_equal_scipy_on_the_joined_vectors(report_json: dict) -> None:
    ds = load_humans(HUMANS)
    for row in report_json["correlations"]:
        judge, human = ds.judges[row["judge"]].values, ds.humans[row["human"]].values
        keys = sorted(set(judge) & set(human))
        x, y = [judge[k] for k in keys], [human[k] for k in keys]
        assert row["n"] == len(keys)
        assert row["spearman"]["value"] == pytest.approx(sps.spearmanr(x, y).statistic, abs=1e-12)
        assert row["spearman"]["p"] == pytest.approx(sps.spearmanr(x, y).pvalue, rel=1e-9)
        assert row["kendall"]["value"] == pytest.approx(sps.kendalltau(x, y).statistic, abs=1e-12)
        assert row["pearson"]["value"] == pytest.approx(sps.pearsonr(x, y).statistic, abs=1e-12)
    # One column checked against an independent parse of the file: appropriateness (median) vs Bert-KPrec.
    raw = json.loads(HUMANS.read_text())
    x, y = [], []
    for ev in raw["evaluations"]:
        ratings = [float(a["value"]) for a in ev["annotations"]["appropriateness"].values() if a["value"] != ""]
        x.append(ev["annotations"]["Bert-KPrec"]["system"]["value"])
        y.append(float(np.median(ratings)))
    row = next(r for r in report_json["correlations"] if (r["judge"], r["human"]) == ("Bert-KPrec", "appropriateness"))
    assert row["n"] == 24 and row["spearman"]["value"] == pytest.approx(sps.spearmanr(x, y).statistic)


def test_krippendorff_alpha_equals_the_package_on_a_hand_built_matrix(report_json: dict) -> None:
    raw = json.loads(HUMANS.read_text())
    annotators = ["ann1", "ann2", "ann3", "ann4", "ann5"]
    columns = []
    for ev in raw["evaluations"]:
        ratings = ev["annotations"].get("faithfulness", {})
        columns.append([float(ratings[a]["value"]) if a in ratings else np.nan for a in annotators])
    matrix = np.array(columns).T  # annotators × items, NaN where an annotator did not rate
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal")
    agreement = report_json["agreement"]["faithfulness"]
    assert agreement["krippendorff_alpha"] == pytest.approx(expected, abs=1e-12)
    assert agreement["n_raters"] == 5
    assert agreement["n_items"] == 22  # 24 items, one with a single annotator, one never annotated
    assert agreement["raters_per_item"] == {"min": 1, "max": 3, "mean": pytest.approx(66 / 23)}  # 21×3 + 2 + 1


def test_mtrag_agreement_on_the_fixture(report_json: dict) -> None:
    raw = json.loads(HUMANS.read_text())
    agree = exact = rated = 0
    for ev in raw["evaluations"]:
        values = [int(a["value"]) for a in ev["annotations"].get("faithfulness", {}).values()]
        if len(values) < 2:
            continue
        rated += 1
        exact += len(set(values)) == 1
        if len(values) == 3:  # MTRAG's words: all the same, or two agree and the third is one step away
            agree += len(set(values)) == 1 or any(
                values.count(v) == 2 and all(abs(w - v) <= 1 for w in values) for v in values)
        else:
            agree += len(set(values)) == 1
    assert report_json["agreement"]["faithfulness"]["mtrag_agreement"] == pytest.approx(agree / rated)
    assert report_json["agreement"]["faithfulness"]["exact_agreement"] == pytest.approx(exact / rated)


def test_idk_accuracy_against_answerability_labels(report_json: dict) -> None:
    # Hand count (conversational turn c2::2 not scored): model-a misses c3::2 (answers an unanswerable question),
    # model-b misses c1::3; the reference is always right → 19 of 21.
    idk = report_json["idk_accuracy"]["idk_eval"]
    assert idk["n"] == 21 and idk["accuracy"] == pytest.approx(19 / 21)
    assert idk["by_answerability"]["UNANSWERABLE"]["accuracy"] == pytest.approx(4 / 6)


def test_weighting_subsets_and_outputs(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                                       tmp_path: Path) -> None:
    code, out, err = run_cli(capsys, monkeypatch, "correlate", str(HUMANS), "--format", "json", "--bootstrap", "50",
                             "--weighting", "inverse-frequency", "--where", "answerability=answerable,partial",
                             "--exclude-model", "reference", "--judge-metrics", "Bert-KPrec,panel_rating",
                             "--human-metrics", "faithfulness,completeness", "--members")
    assert code == 0, err
    report = json.loads(out)
    assert report["models"] == ["model-a", "model-b"] and report["n_rated_items"] == 10  # 5 tasks × 2 models
    assert report["judges"] == ["Bert-KPrec", "panel_rating", "panel_rating[judge-x]", "panel_rating[judge-y]",
                                "panel_rating[judge-z]"]
    ds = load_humans(HUMANS)
    keep = {k for k, item in ds.items.items()
            if k.model != "reference" and item.answerability in ("ANSWERABLE", "PARTIAL")}
    row = next(r for r in report["correlations"] if (r["judge"], r["human"]) == ("Bert-KPrec", "completeness"))
    keys = sorted(keep)
    x = np.array([ds.judges["Bert-KPrec"].values[k] for k in keys])
    y = np.array([ds.humans["completeness"].values[k] for k in keys])
    expected = weighted_correlations(x, y, inverse_frequency_weights(y))
    assert row["spearman"]["value"] == pytest.approx(expected["spearman"][0], abs=1e-12)
    assert row["kendall"]["value"] == pytest.approx(expected["kendall"][0], abs=1e-12)

    png, table = tmp_path / "heat.png", tmp_path / "rows.csv"
    code, out, err = run_cli(capsys, monkeypatch, "correlate", str(HUMANS), "--bootstrap", "50", "--csv", str(table),
                             "--heatmap", str(png), "--exclude-model", "reference")
    assert code == 0, err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rows = list(csv.DictReader(table.open()))
    assert len(rows) == 16 and rows[0]["judge"] == "Bert-KPrec" and float(rows[0]["spearman_ci_low"]) <= 1
    assert "Spearman ρ of judges with human ratings" in out and "Agreement between human annotators" in out
    assert out.count(" *") >= 4  # the best judge of every column is marked
    assert "IDK judges vs answerability labels" in out

    code, out, _ = run_cli(capsys, monkeypatch, "correlate", str(HUMANS), "--format", "csv", "--bootstrap", "0")
    assert code == 0 and out.splitlines()[0].startswith("judge,human,n,spearman,spearman_ci_low")


@pytest.mark.parametrize(("args", "message"), [
    (["--human-metrics", "helpfulness"], "unknown human metric 'helpfulness' (available: faithfulness, "),
    (["--judge-metrics", "faithfulness"], "unknown judge metric 'faithfulness' ('faithfulness' is a human metric)"),
    (["--where", "answerability=UNDERSPECIFIED"], "no items left after --where answerability=UNDERSPECIFIED"),
    (["--where", "colour=red"], "--where: no field 'colour' in the tasks"),
    (["--exclude-model", "model-a,model-b,reference"], "no items left after --exclude-model"),
    (["--exclude-model", "model-z"], "--exclude-model: no model 'model-z'"),
    (["--weighting", "sqrt"], "--weighting must be one of none, inverse-frequency"),
])
def test_usage_errors_are_one_line(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                                   args: list[str], message: str) -> None:
    code, out, err = run_cli(capsys, monkeypatch, "correlate", str(HUMANS), "--bootstrap", "0", *args)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and message in err and err.count("\n") == 1 and "Traceback" not in err


def test_files_that_are_not_inspectorraget_json(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                                                tmp_path: Path) -> None:
    jsonl = FIXTURES / "predictions_model_a.jsonl"
    code, _, err = run_cli(capsys, monkeypatch, "correlate", str(jsonl))
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(f"error: {jsonl}:2: not an InspectorRAGet file: invalid JSON (Extra data")
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"task_id": "x", "predictions": []}))
    code, _, err = run_cli(capsys, monkeypatch, "correlate", str(other))
    assert code == 2 and "not an InspectorRAGet file: expected a JSON object with models, metrics" in err
    array = tmp_path / "array.json"
    array.write_text("[1, 2]")
    code, _, err = run_cli(capsys, monkeypatch, "correlate", str(array))
    assert code == 2 and "expected a JSON object, got a JSON list" in err
    no_humans = tmp_path / "no_humans.json"
    raw = json.loads(HUMANS.read_text())
    raw["metrics"] = [m for m in raw["metrics"] if m["author"] == "algorithm"]
    no_humans.write_text(json.dumps(raw))
    code, _, err = run_cli(capsys, monkeypatch, "correlate", str(no_humans))
    assert code == 2 and "has no human ratings to compare with" in err
    code, _, err = run_cli(capsys, monkeypatch, "correlate", str(tmp_path / "missing.json"))
    assert code == 2 and err == f"error: {tmp_path / 'missing.json'}: file not found\n"


def test_help_shows_member_names_and_the_json_shape(capsys: pytest.CaptureFixture[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _ = run_cli(capsys, monkeypatch, "correlate", "--help")
    assert code == 0
    out = " ".join(out.split())  # help text wraps at the terminal's width
    assert "as NAME[model]" in out  # square brackets are rich markup unless escaped
    assert '"correlations" is the list of rows' in out and '"agreement" maps each human dimension' in out

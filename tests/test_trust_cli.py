"""Labels, which samples to label, and `correlate RUN --labels`: the schema and its readers, the seeded draw, and
agreement figures equal to scipy's and scikit-learn's on an MTRAG run and on a run of the rag bench."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps
from sklearn.metrics import balanced_accuracy_score, cohen_kappa_score, confusion_matrix

from conftest import MINI, run_cli, run_cli_once
from ragjudge.errors import InputError
from ragjudge.trust.labels import Label, by_metric, read_labels


@pytest.fixture(scope="module")
def mtrag_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("trust") / "mini"
    code, _, err = run_cli_once(["eval", "--bench", str(MINI), "--gen", "extractive", "--out", str(out)])
    assert code == 0, err
    return out


def _judged_rag_run(folder: Path, better: bool = False) -> Path:
    """The rag bench judging 36 records (RB_alg, offline): answers that copy, paraphrase or miss the reference;
    `better`: a second system whose answers also copy the reference on every third record it missed."""
    facts = [f"Policy {k} covers {thing} within {k + 3} days." for k, thing in
             enumerate(["water damage", "fire", "theft", "storms", "glass", "travel"] * 6)]
    answers = [fact if k % 3 == 0 or (better and k % 3 == 2 and k % 2 == 0) else
               ("It is covered." if k % 3 == 1 else "Ask the office about parking.") for k, fact in enumerate(facts)]
    records = [{"id": f"r{k}", "question": f"What does policy {k} cover?", "answer": answer, "contexts": [fact],
                "reference": fact} for k, (fact, answer) in enumerate(zip(facts, answers, strict=True))]
    rows = folder / "rows.jsonl"
    rows.write_text("".join(json.dumps(r) + "\n" for r in records))
    code, _, err = run_cli_once(["judge", str(rows), "--out", str(folder / "judged.jsonl")])
    assert code == 0, err
    return folder / "judged.jsonl"


@pytest.fixture(scope="module")
def rag_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _judged_rag_run(tmp_path_factory.mktemp("trust-rag"))


@pytest.fixture(scope="module")
def rag_run_b(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _judged_rag_run(tmp_path_factory.mktemp("trust-rag-b"), better=True)


def _samples(run: Path) -> list[dict]:
    path = run / "samples.jsonl" if run.is_dir() else run.with_name(run.stem + ".samples.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]


def _write_labels(path: Path, rows: list[tuple[str, str, object]]) -> Path:
    path.write_text("".join(json.dumps({"schema": "ragjudge.labels/1", "sample_id": s, "metric": m, "value": v})
                            + "\n" for s, m, v in rows))
    return path


# --------------------------------------------------------------------------- labels


def test_schema_labels_is_printed(monkeypatch, capsys) -> None:
    code, out, _ = run_cli(["schema", "labels"], monkeypatch, capsys)
    schema = json.loads(out)
    assert code == 0 and schema["$id"] == "ragjudge.labels/1"
    assert set(schema["required"]) == {"sample_id", "metric", "value"}
    assert {"annotator", "note"} <= set(schema["properties"])


def test_jsonl_and_csv_labels_read_the_same(tmp_path: Path) -> None:
    jsonl = tmp_path / "labels.jsonl"
    jsonl.write_text(json.dumps({"schema": "ragjudge.labels/1", "sample_id": "a", "metric": "faithfulness",
                                 "value": True, "annotator": "ana"}) + "\n" +
                     json.dumps({"schema": "ragjudge.labels/1", "sample_id": "b", "metric": "faithfulness",
                                 "value": False, "annotator": "ana"}) + "\n" +
                     json.dumps({"schema": "ragjudge.labels/1", "sample_id": "a", "metric": "relevance",
                                 "value": 3, "annotator": "ana"}) + "\n")
    csv = tmp_path / "labels.csv"
    csv.write_text("sample_id,faithfulness,relevance,annotator\na,pass,3,ana\nb,fail,,ana\n")
    by_json, by_csv = read_labels(jsonl), read_labels(csv)
    key = lambda label: (label.sample_id, label.metric)  # noqa: E731
    assert sorted(by_json, key=key) == sorted(by_csv, key=key)
    assert by_metric(by_csv) == {"faithfulness": {"a": 1.0, "b": 0.0}, "relevance": {"a": 3.0}}
    assert Label(sample_id="a", metric="m", value=True).to_dict()["schema"] == "ragjudge.labels/1"


@pytest.mark.parametrize("text, where", [
    ('{"schema": "ragjudge.labels/1", "sample_id": "a", "metric": "m", "value": "maybe"}', "labels.jsonl:2: field 'value'"),
    ('{"schema": "ragjudge.labels/1", "sample_id": "a", "value": 1}', "labels.jsonl:2: field 'metric'"),
    ('{"sample_id": "a", "metric": "m", "value": 1}', "labels.jsonl:2: field 'schema'"),
])
def test_a_bad_label_is_one_line_naming_file_line_and_field(tmp_path: Path, mtrag_run: Path, text: str, where: str,
                                                           monkeypatch, capsys) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text('{"schema": "ragjudge.labels/1", "sample_id": "a", "metric": "m", "value": 1}\n' + text + "\n")
    code, _, err = run_cli(["correlate", str(mtrag_run), "--labels", str(path)], monkeypatch, capsys)
    assert code == 2 and err.count("\n") == 1 and where in err and "Traceback" not in err, err
    bad_cell = tmp_path / "labels.csv"
    bad_cell.write_text("id,faithfulness\na,pass\nb,sometimes\n")
    with pytest.raises(InputError, match="labels.csv:3: field 'faithfulness': must be pass/fail"):
        read_labels(bad_cell)


# --------------------------------------------------------------------------- label-sample


def test_label_sample_is_a_seeded_uniform_draw(mtrag_run: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    code, out, err = run_cli(["label-sample", str(mtrag_run), "--n", "10", "--seed", "0"], monkeypatch, capsys)
    assert code == 0, err
    drawn = json.loads((mtrag_run / "label-sample.json").read_text())
    ids = [s["id"] for s in _samples(mtrag_run)]
    expected = [ids[i] for i in np.random.default_rng(0).permutation(len(ids))[:10]]
    assert drawn["schema"] == "ragjudge.label-sample/1" and drawn["sample_ids"] == expected == out.split()
    code, again, _ = run_cli(["label-sample", str(mtrag_run), "--n", "10", "--seed", "0", "--out",
                              str(tmp_path / "x.json")], monkeypatch, capsys)
    assert again == out
    code, other, _ = run_cli(["label-sample", str(mtrag_run), "--n", "10", "--seed", "1", "--out",
                              str(tmp_path / "y.json")], monkeypatch, capsys)
    assert other != out


def test_label_sample_strata_are_proportional(mtrag_run: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    samples = {s["id"]: s["labels"]["answerability"] for s in _samples(mtrag_run)}
    code, out, err = run_cli(["label-sample", str(mtrag_run), "--n", "20", "--strata", "answerability", "--out",
                              str(tmp_path / "s.json")], monkeypatch, capsys)
    assert code == 0, err
    drawn = out.split()
    assert len(drawn) == len(set(drawn)) == 20
    for value in set(samples.values()):
        share = sum(v == value for v in samples.values()) / len(samples)
        assert abs(sum(samples[i] == value for i in drawn) - 20 * share) < 1  # largest remainders
    code, _, err = run_cli(["label-sample", str(mtrag_run), "--strata", "colour", "--out", str(tmp_path / "t.json")],
                           monkeypatch, capsys)
    assert code == 2 and "--strata colour" in err and err.count("\n") == 1


# --------------------------------------------------------------------------- correlate --labels


def _report(run: Path, labels: Path, monkeypatch, capsys, *extra: str) -> dict:
    code, out, err = run_cli(["correlate", str(run), "--labels", str(labels), "--format", "json", "--bootstrap",
                              "300", *extra], monkeypatch, capsys)
    assert code == 0, err
    return {row["metric"]: row for row in json.loads(out)["metrics"]}


def test_mtrag_run_pass_fail_agreement_equals_sklearn(mtrag_run: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    """idk_lexical (0/1) against a person's pass/fail labels of 30 samples, 5 of them disagreeing."""
    samples = [s for s in _samples(mtrag_run) if "idk_lexical" in s["scores"]][:30]
    judge = np.array([s["scores"]["idk_lexical"]["value"] for s in samples]).astype(bool)
    human = judge.copy()
    human[[1, 4, 9, 16, 25]] ^= True
    labels = _write_labels(tmp_path / "l.jsonl", [(s["id"], "idk_lexical", bool(h))
                                                  for s, h in zip(samples, human, strict=True)])
    row = _report(mtrag_run, labels, monkeypatch, capsys)["idk_lexical"]
    figures = row["agreement"]
    assert row["n_labelled"] == 30 and figures["threshold"] is None
    assert figures["balanced_accuracy"]["value"] == pytest.approx(balanced_accuracy_score(human, judge), abs=1e-12)
    assert figures["kappa"]["value"] == pytest.approx(cohen_kappa_score(human, judge), abs=1e-12)
    (tn, fp), (fn, tp) = confusion_matrix(human, judge, labels=[False, True])
    assert figures["confusion"] == {"tp": tp, "fp": fp, "fn": fn, "tn": tn}
    assert figures["tpr"]["value"] == pytest.approx(tp / (tp + fn)) and figures["fpr"]["value"] == pytest.approx(
        fp / (fp + tn))
    # the intervals: percentiles of scikit-learn's figures on each materialised resample (300, seed 0)
    import warnings

    rows = np.random.default_rng(0).integers(0, len(judge), size=(300, len(judge)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a resample with one class: sklearn warns, the figure is left out
        for name, score in (("balanced_accuracy", balanced_accuracy_score), ("kappa", cohen_kappa_score)):
            values = np.array([score(human[r], judge[r]) for r in rows])
            want = np.percentile(values[np.isfinite(values)], [2.5, 97.5])
            assert [figures[name]["ci_low"], figures[name]["ci_high"]] == pytest.approx(list(want), abs=1e-12), name
    assert sorted(d["sample_id"] for d in row["disagreements"]) == sorted(samples[i]["id"] for i in (1, 4, 9, 16, 25))
    assert row["disagreements"][0]["link"].startswith("report.html#task=")
    means = row["means"]
    assert means["labels only"]["estimate"] == pytest.approx(human.mean())
    assert means["ppi++"]["n_labels"] == 30 and means["ppi++"]["n_samples"] == len(_samples(mtrag_run)) - sum(
        "idk_lexical" not in s["scores"] for s in _samples(mtrag_run))
    assert means["judge only"]["method"] == "judge only"


def test_rag_run_numeric_agreement_equals_scipy(rag_run: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    samples = _samples(rag_run)
    judge = np.array([s["scores"]["RB_agg"]["value"] for s in samples])
    human = np.round(np.clip(judge + np.random.default_rng(0).normal(0, 0.15, len(judge)), 0, 1) * 4) / 4
    labels = _write_labels(tmp_path / "n.jsonl", [(s["id"], "RB_agg", float(h))
                                                  for s, h in zip(samples, human, strict=True)][:30])
    row = _report(rag_run, labels, monkeypatch, capsys)["RB_agg"]
    figures = row["agreement"]
    assert row["n_labelled"] == 30 and figures["kind"] == "number"
    assert figures["spearman"]["value"] == pytest.approx(sps.spearmanr(judge[:30], human[:30]).statistic, abs=1e-12)
    assert figures["kendall"]["value"] == pytest.approx(sps.kendalltau(judge[:30], human[:30]).statistic, abs=1e-12)
    assert figures["mae"]["value"] == pytest.approx(np.abs(judge[:30] - human[:30]).mean(), abs=1e-12)
    assert figures["mae"]["ci_low"] <= figures["mae"]["value"] <= figures["mae"]["ci_high"]
    assert row["means"]["ppi++"]["n_labels"] == 30 and row["means"]["ppi++"]["n_samples"] == len(samples)


def test_rag_run_continuous_judge_gets_a_cross_validated_threshold(rag_run: Path, tmp_path: Path, monkeypatch,
                                                                   capsys) -> None:
    """RB_agg against pass/fail labels: a person passes the answers that state the reference. The threshold is
    chosen on the other folds; the figures are those of the held-out decisions, equal to scikit-learn's on them."""
    samples = _samples(rag_run)
    judge = np.array([s["scores"]["RB_agg"]["value"] for s in samples])
    human = np.array([int(s["id"][1:]) % 3 == 0 for s in samples])
    labels = _write_labels(tmp_path / "p.jsonl", [(s["id"], "RB_agg", bool(h))
                                                  for s, h in zip(samples, human, strict=True)])
    figures = _report(rag_run, labels, monkeypatch, capsys)["RB_agg"]["agreement"]
    folds = figures["threshold_folds"]
    assert len(folds) == 5 and figures["threshold"] == pytest.approx(float(np.median(folds)))
    fold_of = np.random.default_rng(0).permutation(len(judge)) % 5
    decisions = judge >= np.array(folds)[fold_of]
    assert figures["balanced_accuracy"]["value"] == pytest.approx(balanced_accuracy_score(human, decisions))
    assert figures["balanced_accuracy"]["value"] > 0.9  # the copies score far above the others


def test_correlate_labels_refuses_flags_it_does_not_use(mtrag_run: Path, tmp_path: Path, monkeypatch,
                                                        capsys) -> None:
    labels = _write_labels(tmp_path / "l.jsonl", [("mini-c01::1", "idk_lexical", True)])
    code, _, err = run_cli(["correlate", str(mtrag_run), "--labels", str(labels), "--weighting", "inverse-frequency"],
                           monkeypatch, capsys)
    assert code == 2 and "--weighting does not apply with --labels" in err and err.count("\n") == 1
    unknown = _write_labels(tmp_path / "u.jsonl", [("nope", "idk_lexical", True)])
    code, _, err = run_cli(["correlate", str(mtrag_run), "--labels", str(unknown)], monkeypatch, capsys)
    assert code == 2 and "u.jsonl: field 'sample_id': sample 'nope' is not in" in err, err


def test_published_labels_schema_is_the_models() -> None:
    from conftest import REPO
    from ragjudge.trust.labels import json_schema

    published = json.loads((REPO / "docs" / "labels.schema.json").read_text(encoding="utf-8"))
    assert published == json_schema(), "docs/labels.schema.json is stale: `ragjudge schema labels > docs/...`"


# --------------------------------------------------------------------------- the summary's judge-only ci


def test_every_mean_in_the_summary_carries_a_judge_only_ci(mtrag_run: Path) -> None:
    summary = json.loads((mtrag_run / "summary.json").read_text())
    samples = _samples(mtrag_run)
    for name, metric in summary["metrics"].items():
        values = np.array([s["scores"][name]["value"] for s in samples
                           if s["scores"].get(name, {}).get("value") is not None])
        assert len(values) == metric["n"]
        rng = np.random.default_rng(0)  # the documented recipe: 1000 resamples of n draws, seed 0, percentiles
        means = np.array([values[row].mean() for row in rng.integers(0, len(values), size=(1000, len(values)))])
        assert metric["ci"] == pytest.approx(list(np.percentile(means, [2.5, 97.5])), abs=1e-12), name
        assert metric["details"]["ci"].startswith("judge only")
        assert metric["ci"][0] <= metric["value"] <= metric["ci"][1]


def test_a_figure_that_is_not_a_mean_of_its_samples_gets_no_ci() -> None:
    from ragjudge.engine.summary import MetricCatalog, MetricInfo, Summary, add_judge_only_cis
    from ragjudge.formats.samples import Sample, Score

    catalog = MetricCatalog([MetricInfo("f1", "a corpus-level F1"), MetricInfo("acc", "accuracy")])
    samples = [Sample(id=str(k), input="q", scores={"f1": Score(value=float(k % 2)), "acc": Score(value=float(k % 2))})
               for k in range(10)]
    summary = Summary(bench="b", title="t", n_samples=10, n_errors=0,
                      metrics={"f1": catalog.metric("f1", 0.3, n=10), "acc": catalog.metric("acc", 0.5, n=10)})
    add_judge_only_cis(summary, samples)
    assert summary.metrics["f1"].ci is None and "ci" not in summary.metrics["f1"].details
    assert summary.metrics["acc"].ci is not None


# --------------------------------------------------------------------------- assert_mean


def test_assert_mean_without_labels_uses_and_says_the_judge_only_interval(mtrag_run: Path) -> None:
    from ragjudge.api import load_run
    from ragjudge.pytest_plugin import assert_mean

    ci = json.loads((mtrag_run / "summary.json").read_text())["metrics"]["idk_lexical"]["ci"]
    passed = assert_mean("idk_lexical", at_least=ci[0], run=mtrag_run)
    assert (passed.low, passed.high) == pytest.approx(tuple(ci)) and passed.method == "judge only"
    assert assert_mean("idk_lexical", at_least=ci[0], run=load_run(mtrag_run)) == passed  # an EvalResult too
    with pytest.raises(AssertionError) as failed:
        assert_mean("idk_lexical", at_least=ci[0] + 0.01, run=mtrag_run)
    message = str(failed.value)
    assert f"the lower bound {ci[0]:.3f} is below {ci[0] + 0.01:g}" in message
    assert "judge only, no labels" in message and "95% judge only, 40 samples" in message


def test_assert_mean_with_labels_gates_on_the_ppi_interval(mtrag_run: Path, tmp_path: Path) -> None:
    from ragjudge.pytest_plugin import assert_mean
    from ragjudge.trust.ppi import ppi_mean

    samples = [s for s in _samples(mtrag_run) if "RB_agg" in s["scores"]]
    judge = {s["id"]: s["scores"]["RB_agg"]["value"] for s in samples}
    labelled = list(judge)[::2]  # every other sample, labelled a little above the judge
    labels = _write_labels(tmp_path / "l.jsonl", [(k, "RB_agg", min(1.0, judge[k] + 0.1)) for k in labelled])
    expected = ppi_mean(np.array([min(1.0, judge[k] + 0.1) for k in labelled]), np.array([judge[k] for k in labelled]),
                        np.array([judge[k] for k in judge if k not in labelled]))
    got = assert_mean("RB_agg", at_least=expected.low - 1e-9, run=mtrag_run, labels=labels)
    assert got == expected and got.method == "ppi++"
    with pytest.raises(AssertionError, match=r"ppi\+\+, 20 labels of 40\).*below 0\.9 \(with your labels\)"):
        assert_mean("RB_agg", at_least=0.9, run=mtrag_run, labels=labels)


# --------------------------------------------------------------------------- paired difference of two runs


def test_paired_difference_of_two_runs_on_the_same_samples(rag_run: Path, rag_run_b: Path, tmp_path: Path) -> None:
    """System B copies the reference on 6 more records. Judge only: the paired bootstrap of the per-sample
    differences; with both runs' answers labelled on the same 20 samples: PPI++, equal to ppi-python's."""
    from ragjudge.api.trust import paired_difference

    a = {s["id"]: s["scores"]["RB_agg"]["value"] for s in _samples(rag_run)}
    b = {s["id"]: s["scores"]["RB_agg"]["value"] for s in _samples(rag_run_b)}
    ids = list(a)
    diff = np.array([b[k] - a[k] for k in ids])
    assert (diff > 0.5).sum() == 6 and (np.abs(diff) < 1e-9).sum() == 30
    got = paired_difference(rag_run, rag_run_b, "RB_agg")
    rng = np.random.default_rng(0)
    means = np.array([diff[row].mean() for row in rng.integers(0, len(diff), size=(1000, len(diff)))])
    judge = got["judge only"]
    assert judge.estimate == pytest.approx(diff.mean()) and got["ppi++"] is None
    assert (judge.low, judge.high) == pytest.approx(tuple(np.percentile(means, [2.5, 97.5])), abs=1e-12)
    assert judge.low > 0  # B is better, and the interval says so

    labelled = ids[::2][:18]
    human_a = {k: float(a[k] > 0.5) for k in labelled}
    human_b = {k: float(b[k] > 0.5 or k == labelled[1]) for k in labelled}  # the person is kinder to one answer
    files = [_write_labels(tmp_path / f"{name}.jsonl", [(k, "RB_agg", bool(v)) for k, v in human.items()])
             for name, human in (("a", human_a), ("b", human_b))]
    got = paired_difference(rag_run, rag_run_b, "RB_agg", labels_a=files[0], labels_b=files[1])
    ppi_py = pytest.importorskip("ppi_py", reason="ppi-python (the `dev` extra) is the reference implementation")
    rest = [k for k in ids if k not in labelled]
    y = np.array([human_b[k] - human_a[k] for k in labelled])
    f_lab = np.array([b[k] - a[k] for k in labelled])
    f_unl = np.array([b[k] - a[k] for k in rest])
    low, high = (float(np.squeeze(v)) for v in ppi_py.ppi_mean_ci(y, f_lab, f_unl, alpha=0.05))
    point = float(np.squeeze(ppi_py.ppi_mean_pointestimate(y, f_lab, f_unl)))
    ppi = got["ppi++"]
    assert (ppi.estimate, ppi.low, ppi.high) == pytest.approx((point, low, high), abs=1e-9)
    assert ppi.n_labels == 18 and ppi.n_samples == 36


def test_report_a_b_with_labels_shows_the_ppi_paired_difference(rag_run: Path, rag_run_b: Path, tmp_path: Path,
                                                                monkeypatch, capsys) -> None:
    from ragjudge.api.trust import paired_difference

    ids = [s["id"] for s in _samples(rag_run)][::2][:18]
    scores = [{s["id"]: s["scores"]["RB_agg"]["value"] for s in _samples(run)} for run in (rag_run, rag_run_b)]
    files = [_write_labels(tmp_path / f"{n}.jsonl", [(k, "RB_agg", bool(v[k] > 0.5)) for k in ids])
             for n, v in zip("ab", scores, strict=True)]
    code, _, err = run_cli(["report", str(rag_run), str(rag_run_b), "--label", "a", "--label", "b",
                            "--human-labels", str(files[0]), "--human-labels", str(files[1]),
                            "--out", str(tmp_path / "r.html")], monkeypatch, capsys)
    assert code == 0, err
    html = (tmp_path / "r.html").read_text()
    found = paired_difference(rag_run, rag_run_b, "RB_agg", labels_a=files[0], labels_b=files[1])
    ppi, judge = found["ppi++"], found["judge only"]
    row = (f'<tr><th scope="row">RB_agg</th><td>18 of 36</td><td>{ppi.estimate:+.3f}</td><td>[{ppi.low:+.3f}, '
           f'{ppi.high:+.3f}]</td><td>{judge.estimate:+.3f}</td><td>[{judge.low:+.3f}, {judge.high:+.3f}]</td></tr>')
    assert row in html
    assert html.count("Against your labels: ") == 2  # each run against its own labels

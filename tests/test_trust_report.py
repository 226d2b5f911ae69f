"""The report's labelling mode in a real headless Chromium (Debian's /usr/bin/chromium, through Playwright): the
drawn samples come first, five are labelled by keyboard, the labels survive a reload (browser storage), the
downloaded file validates against `ragjudge schema labels` and `ragjudge correlate RUN --labels` accepts it; the
page makes no request and logs no error."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conftest import MINI, run_cli, run_cli_once
from ragjudge.report import build_report
from ragjudge.trust.labels import json_schema, read_labels
from test_report_browser import Watched, browser  # noqa: F401  (the module's Chromium fixture)


@pytest.fixture(scope="module")
def labelled_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("trust-report")
    run = folder / "mini"

    def make() -> None:  # Playwright's loop runs in this thread; the engine needs its own
        code, _, err = run_cli_once(["eval", "--bench", str(MINI), "--gen", "extractive", "--out", str(run)])
        assert code == 0, err
        code, _, err = run_cli_once(["label-sample", str(run), "--n", "5", "--seed", "0"])
        assert code == 0, err
        code, _, err = run_cli_once(["report", str(run), "--to-label", str(run / "label-sample.json"), "--out",
                                     str(folder / "report.html")])
        assert code == 0, err

    with ThreadPoolExecutor(1) as pool:
        pool.submit(make).result()
    return {"run": run, "report": folder / "report.html", "draw": run / "label-sample.json"}


def test_label_five_samples_by_keyboard_then_download(browser, labelled_report: dict[str, Path],  # noqa: F811
                                                      tmp_path: Path, monkeypatch, capsys) -> None:
    drawn = json.loads(labelled_report["draw"].read_text())["sample_ids"]
    watched = Watched(browser, labelled_report["report"])
    page = watched.page
    page.click("#tab-label")
    page.select_option("#l-metric", "idk_lexical")
    page.fill("#l-annotator", "ana")
    page.locator("#label-card").focus()
    keys = ["p", "f", "p", "p", "f"]
    for k, key in enumerate(keys):
        assert page.inner_text("#label-title") == f"Drawn sample {drawn[k]}"  # the draw first, in its order
        assert "judge's idk_lexical" in page.inner_text("#label-card")
        page.keyboard.press(key)
    assert page.inner_text("#label-progress").startswith("5 of 5 drawn samples labelled for idk_lexical")
    assert page.inner_text("#label-title") == "Sample " + page.inner_text("#label-title").split()[-1]  # past the draw
    page.click("#l-back")  # a click works as the key does
    assert page.inner_text("#label-title") == f"Drawn sample {drawn[4]}" and page.inner_text("#label-given") == "fail"

    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    page.click("#tab-label")
    assert page.input_value("#l-metric") == "idk_lexical" and page.input_value("#l-annotator") == "ana"
    assert page.inner_text("#label-progress").startswith("5 of 5 drawn samples labelled")  # kept in the browser

    with page.expect_download() as download:
        page.click("#l-download")
    saved = tmp_path / "labels.jsonl"
    download.value.save_as(saved)
    assert download.value.suggested_filename == "labels.jsonl"
    assert watched.outside == [] and watched.errors == []
    watched.close()

    import jsonschema

    records = [json.loads(line) for line in saved.read_text().splitlines()]
    for record in records:
        jsonschema.validate(record, json_schema())
    assert [(r["sample_id"], r["value"], r["annotator"]) for r in records] == sorted(
        [(sid, key == "p", "ana") for sid, key in zip(drawn, keys, strict=True)],
        key=lambda r: [s["id"] for s in map(json.loads, (labelled_report["run"] / "samples.jsonl").open())].index(
            r[0]))
    assert len(read_labels(saved)) == 5

    code, out, err = run_cli(["correlate", str(labelled_report["run"]), "--labels", str(saved), "--format", "json",
                              "--bootstrap", "100"], monkeypatch, capsys)
    assert code == 0, err
    (row,) = json.loads(out)["metrics"]
    assert row["metric"] == "idk_lexical" and row["n_labelled"] == 5
    assert row["means"]["labels only"]["estimate"] == pytest.approx(3 / 5)


def test_samples_to_label_must_be_in_the_run(labelled_report: dict[str, Path], tmp_path: Path, monkeypatch,
                                             capsys) -> None:
    other = tmp_path / "draw.json"
    other.write_text(json.dumps({"schema": "ragjudge.label-sample/1", "sample_ids": ["nope"]}))
    code, _, err = run_cli(["report", str(labelled_report["run"]), "--to-label", str(other), "--out",
                            str(tmp_path / "r.html")], monkeypatch, capsys)
    assert code == 2 and "'nope', which is not in this run" in err and err.count("\n") == 1
    assert build_report([labelled_report["run"]], tmp_path / "plain.html").path.read_text().count("tab-label") == 0


def test_report_shows_judge_only_cis_and_the_labels_section(labelled_report: dict[str, Path], tmp_path: Path,
                                                            monkeypatch, capsys) -> None:
    """Without a browser: the overview prints each mean's judge-only interval; with --human-labels the Judges tab
    holds the agreement and the three means of `correlate --labels`, and links each disagreement to its task."""
    from conftest import REPO

    labels = REPO / "examples" / "mini" / "labels.csv"
    code, _, err = run_cli(["report", str(labelled_report["run"]), "--human-labels", str(labels), "--out",
                            str(tmp_path / "r.html")], monkeypatch, capsys)
    assert code == 0, err
    html = (tmp_path / "r.html").read_text()
    summary = json.loads((labelled_report["run"] / "summary.json").read_text())
    low, high = summary["metrics"]["RB_agg"]["ci"]
    assert f"[{low:.3f}, {high:.3f}]" in html and "judge only" in html
    code, out, _ = run_cli(["correlate", str(labelled_report["run"]), "--labels", str(labels), "--format", "json"],
                           monkeypatch, capsys)
    (row,) = json.loads(out)["metrics"]
    assert "Against your labels" in html and "labels.csv" in html
    ppi = row["means"]["ppi++"]
    assert f"<th scope=\"row\">mean (ppi++)</th><td>{ppi['estimate']:.3f}</td><td>[{ppi['low']:.3f}, " \
           f"{ppi['high']:.3f}]</td>" in html
    assert f"<td>{row['agreement']['kappa']['value']:.3f}</td>" in html
    for d in row["disagreements"]:
        assert f'data-task="{d["sample_id"]}"' in html
    code, _, err = run_cli(["report", str(labelled_report["run"]), str(labelled_report["run"]), "--label", "a",
                            "--label", "b", "--human-labels", str(labels), "--out", str(tmp_path / "two.html")],
                           monkeypatch, capsys)
    assert code == 2 and "--human-labels was given 1 time(s) for 2 run(s)" in err

"""`ragjudge report` without a browser: any bench's outputs and `ragjudge judge` outputs are valid input, the
bench's view is found by name, bad input is one line and exit 2, the comparison statistics equal scipy's,
texts are stored once, `--correlate` output is embedded, and the data inlined in the page is the data read."""

from __future__ import annotations

import base64
import gzip
import json
import re
import statistics
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

from conftest import MINI, run_cli
from ragjudge.bench.mtrag.view import MtragView
from ragjudge.formats.samples import Passage, Sample, Score
from ragjudge.report.compare import compare_metric
from ragjudge.report.load import find_view, load_run
from ragjudge.report.pack import MIN_INTERNED, TextTable, page_data, read_samples
from ragjudge.report.view import ReportView
from ragjudge.testing.synthetic_mtrag import write_run

CXM = Path(__file__).resolve().parents[1] / "examples" / "cxm"
CORRELATE_FIXTURES = Path(__file__).parent / "fixtures" / "inspectorraget"


def page_json(html: str) -> dict:
    """The task data the page carries (gzip + base64 in a script element)."""
    found = re.search(r'<script type="application/octet-stream" id="rj-data" data-encoding="([^"]+)">(.*?)</script>',
                      html, re.S)
    assert found is not None
    encoding, body = found.groups()
    text = gzip.decompress(base64.b64decode(body)).decode() if encoding == "gzip+base64" else body
    return json.loads(text)


def no_external_urls(html: str) -> None:
    """Nothing in the page points outside it (the browser test checks requests; this checks the text)."""
    assert not re.search(r'(src|href)\s*=\s*"(https?:)?//', html)
    assert "Content-Security-Policy" in html and "default-src 'none'" in html


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`ragjudge judge` output on the mini tasks answered with their references (offline judges)."""
    tmp = tmp_path_factory.mktemp("judged")
    rows = [json.loads(line) for line in (MINI / "tasks.jsonl").read_text().splitlines()]
    for n, row in enumerate(rows):
        text = row["targets"][0]["text"] if n % 4 else "I do not have specific information about that."
        row["predictions"] = [{"text": text}]
    source = tmp / "preds.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return source


def write_summary(path: Path, bench: str, n: int, values: dict[str, float], unit: str = "samples",
                  breakdowns: dict | None = None) -> None:
    """A minimal summary in the result contract (what any bench writes beside its results)."""
    from ragjudge.engine.summary import Summary

    metrics = {m: {"value": v, "n": n, "higher_is_better": True, "kind": "score", "description": m}
               for m, v in values.items()}
    name = next(iter(values))
    summary = Summary.model_validate({"bench": bench, "title": f"{bench}: {n} {unit}", "unit": unit, "n_samples": n,
                                      "n_errors": 0, "metrics": metrics, "breakdowns": breakdowns or {},
                                      "headline": {"metric": name, "value": values[name], "text": f"{name} {values[name]:.3f}"}})
    path.write_text(json.dumps(summary.to_dict()))


def write_samples(path: Path, samples: list[Sample]) -> None:
    path.write_text("".join(json.dumps(s.to_dict()) + "\n" for s in samples))


def with_summary(results: Path, text: str, summary: dict | None = None) -> Path:
    """`ragjudge judge`'s files: results (`X.jsonl`), its sample log (`X.samples.jsonl`, `text`) and summary."""
    results.write_text('{"task_id": "t"}\n')
    results.with_name(results.name.removesuffix(".jsonl") + ".samples.jsonl").write_text(text)
    sibling = results.with_name(results.name.removesuffix(".jsonl") + ".summary.json")
    if summary is None:
        write_summary(sibling, "faq", 2, {"m": 0.5})
    else:
        sibling.write_text(json.dumps(summary))
    return results


def judge(source: Path, out: Path, monkeypatch, capsys) -> Path:
    code, _, err = run_cli(["judge", str(source), "--judges", "idk_lexical", "--out", str(out)], monkeypatch, capsys)
    assert code in (0, 1), err
    return out


def test_judge_output_is_valid_report_input(judged: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    results = judge(judged, tmp_path / "scored.jsonl", monkeypatch, capsys)
    assert (tmp_path / "scored.summary.json").exists() and (tmp_path / "scored.run.json").exists()
    code, _, err = run_cli(["report", str(results), "--out", str(tmp_path / "r.html")], monkeypatch, capsys)
    assert code == 0, err
    assert "report: " in err and "40 tasks" in err
    html = (tmp_path / "r.html").read_text()
    no_external_urls(html)
    data = page_json(html)
    records = [json.loads(line) for line in results.open()]
    samples = [json.loads(line) for line in (tmp_path / "scored.samples.jsonl").open()]
    assert data["ids"] == [r["task_id"] for r in records] == [s["id"] for s in samples]
    idk = data["metrics"].index(next(m for m in data["metrics"] if m["name"] == "idk_lexical"))
    assert data["runs"][0]["values"][idk] == [r["metrics"]["idk_lexical"][0] for r in records]
    assert {f["name"] for f in data["facets"]} >= {"answerability", "domain", "turn"}
    summary = json.loads((tmp_path / "scored.summary.json").read_text())
    assert f"{summary['metrics']['answerability_acc']['value']:.3f}" in html  # the overview's metric table


def test_same_data_same_hash_and_compare(judged: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    first = judge(judged, tmp_path / "a.jsonl", monkeypatch, capsys)
    second = judge(judged, tmp_path / "b.jsonl", monkeypatch, capsys)
    hashes = [json.loads((tmp_path / f"{n}.run.json").read_text())["data_hash"] for n in "ab"]
    assert hashes[0] == hashes[1]
    changed = tmp_path / "changed.jsonl"
    lines = judged.read_text().splitlines()
    changed.write_text("\n".join([lines[0].replace("Mars", "Venus")] + lines[1:]) + "\n")
    judge(changed, tmp_path / "c.jsonl", monkeypatch, capsys)
    assert json.loads((tmp_path / "c.run.json").read_text())["data_hash"] != hashes[0]

    code, _, err = run_cli(["report", str(first), str(second), str(tmp_path / "c.jsonl"), "--label", "one", "--label",
                            "two", "--label", "venus", "--out", str(tmp_path / "cmp.html")], monkeypatch, capsys)
    assert code == 0, err
    html = (tmp_path / "cmp.html").read_text()
    assert "two vs one" in html and "Both runs recorded the same data hash." in html
    assert "venus vs one" in html and "different data hashes" in html


def test_cxm_run_is_shown_from_its_samples(tmp_path: Path, monkeypatch, capsys) -> None:
    out = tmp_path / "cxm"
    predictions = CXM / "predictions" / "intent.jsonl"
    code, _, err = run_cli(["eval", "--bench", "cxm-intent", "--data", str(CXM), "-T", f"predictions={predictions}",
                            "--out", str(out)], monkeypatch, capsys)
    assert code == 0, err
    code, _, err = run_cli(["report", str(out), "--out", str(tmp_path / "cxm.html")], monkeypatch, capsys)
    assert code == 0, err
    html = (tmp_path / "cxm.html").read_text()
    summary = json.loads((out / "summary.json").read_text())
    assert "Per intent" in html and f"{summary['metrics']['macro-F1']['value']:.3f}" in html
    data = page_json(html)
    assert len(data["ids"]) == summary["n_samples"]


def test_generic_view_for_an_unknown_bench(tmp_path: Path, monkeypatch, capsys) -> None:
    """Samples of a bench this install does not have: shown by the generic view."""
    folder = tmp_path / "faq"
    folder.mkdir()
    samples = [Sample(id=f"q{i}", input=f"How do returns work? ({i})",
                      output="Returns are free within 30 days. " * (2 * i + 1),
                      scores={"mentions": Score(value=i / 4, judge="mentions", raw="yes" if i % 2 else "no")},
                      metadata={"channel": "chat"}) for i in range(5)]
    samples[2].scores["mentions"] = Score(error="judge timed out", raw="(nothing parsable)")
    write_samples(folder / "samples.jsonl", samples)
    (folder / "run.json").write_text(json.dumps({"bench": "support-faq-not-installed", "options": {"gen": "lookup"}}))
    write_summary(folder / "summary.json", "support-faq-not-installed", 5, {"mentions": 0.5})
    code, _, err = run_cli(["report", str(folder), "--out", str(tmp_path / "faq.html")], monkeypatch, capsys)
    assert code == 0, err
    html = (tmp_path / "faq.html").read_text()
    assert "bench support-faq-not-installed is not installed here" in html
    data = page_json(html)
    mentions = next(k for k, m in enumerate(data["metrics"]) if m["name"] == "mentions")
    assert data["runs"][0]["values"][mentions] == [0.0, 0.25, None, 0.75, 1.0]
    assert data["runs"][0]["errors"] == [0, 0, 1, 0, 0]
    kinds = [b["kind"] for b in data["runs"][0]["detail"][2]]
    assert kinds == ["errors", "text", "judges", "fields"]  # the answer; the judge's raw text; the metadata


def test_retrieval_samples_by_query_kind(tmp_path: Path) -> None:
    """A retrieval run's samples (one per query kind of a task): ids apart, the ranking as passages with the relevant
    ones marked; the summary's breakdown by query kind is the one drawn, and nothing else."""
    folder = tmp_path / "retrieval"
    folder.mkdir()
    samples = []
    for n in range(4):
        for kind, recall in (("lastturn", 0.25 * n), ("rewrite", 0.25 * n + 0.1)):
            samples.append(Sample(id=f"{kind}/c{n}::2", input=f"{kind} question {n}",
                                  contexts=[Passage(id=f"d{n}", score=3.0, text="passage " * 30, title="t"),
                                            Passage(id="x", score=1.0, text="other")],
                                  target_contexts=[Passage(id=f"d{n}", score=1)],
                                  scores={"R@5": Score(value=recall)}, labels={"queries": kind},
                                  metadata={"query_id": f"c{n}::2"}))
    write_samples(folder / "samples.jsonl", samples)
    (folder / "run.json").write_text(json.dumps({"bench": "mtrag-retrieval", "options": {"domain": "x"}}))
    by_kind = {kind: statistics.fmean(0.25 * n + bonus for n in range(4)) for kind, bonus in (("lastturn", 0), ("rewrite", 0.1))}
    write_summary(folder / "summary.json", "mtrag-retrieval", 8, {"R@5": by_kind["rewrite"]}, unit="queries",
                  breakdowns={"queries": {"title": "By query kind", "label": "queries", "columns": ["R@5"],
                                          "groups": {k: {"n": 4, "metrics": {"R@5": {"value": v, "n": 4}}}
                                                     for k, v in by_kind.items()}}})
    run = load_run(folder)
    read = read_samples(run)
    assert read.ids[:3] == ["lastturn/c0::2", "rewrite/c0::2", "lastturn/c1::2"]
    from ragjudge.report.overview import build_overview

    overview = build_overview([run], [read])
    by_kind = next(b for b in overview.breakdowns if b.dimension == "queries")
    assert [row[0] for row in by_kind.rows] == ["lastturn", "rewrite"]
    assert by_kind.rows[1][2] == pytest.approx(statistics.fmean(0.25 * n + 0.1 for n in range(4)))
    kinds = [b["kind"] for b in read.blocks[0]]
    assert kinds == ["text", "passages", "passages", "text", "metrics", "fields"]
    ranking = read.blocks[0][2]
    assert [p.get("mark") for p in ranking["items"]] == ["reference", None] and ranking["note"] == \
        "1 of 2 are reference passages"
    assert [b.dimension for b in overview.breakdowns] == ["queries"]  # not the query text, not one collection


def test_views_are_found_by_bench_name() -> None:
    assert isinstance(find_view("mtrag", {})[0], MtragView)
    assert type(find_view("cdr", {})[0]) is ReportView
    view, notes = find_view("not-a-bench", {})
    assert type(view) is ReportView and "not installed" in notes[0]


def test_mtrag_view_flags_idk_against_rb() -> None:
    declined = Sample(id="c::1", input="q", output="I don't know.",
                      scores={"idk": Score(value=1.0, judge="idk", raw="yes"), "RB_llm": Score(value=0.8)})
    assert MtragView().flags(declined) == {"IDK says declined, RB ≥ 0.5": True}
    answered = declined.model_copy(update={"scores": {"idk": Score(value=0.0, judge="idk"),
                                                      "RB_llm": Score(value=0.8)}})
    assert MtragView().flags(answered) == {"IDK says declined, RB ≥ 0.5": False}
    assert MtragView().flags(Sample(id="c::2", input="q")) == {}


def test_compare_metric_equals_scipy() -> None:
    rng = np.random.default_rng(1)
    a = {f"t{i}": {"m": float(x)} for i, x in enumerate(rng.random(30))}
    b = {f"t{i}": {"m": a[f"t{i}"]["m"] + float(d)} for i, d in enumerate(rng.normal(0.05, 0.1, 30))}
    b["t0"]["m"] = a["t0"]["m"]  # a tie
    del b["t1"]  # a task only one run has
    result = compare_metric("m", a, b, True)
    ids = [f"t{i}" for i in range(30) if i != 1]
    x, y = np.array([a[i]["m"] for i in ids]), np.array([b[i]["m"] for i in ids])
    assert result.n == 29 and result.p_value == pytest.approx(sps.ttest_rel(x, y).pvalue)
    assert result.diff == pytest.approx((y - x).mean())
    low, high = sps.t.interval(0.95, 28, loc=(y - x).mean(), scale=sps.sem(y - x))
    assert result.ci == pytest.approx((low, high))
    assert (result.wins, result.same, result.losses) == (int((y > x).sum()), 1, int((y < x).sum()))
    assert result.top[0]["diff"] == pytest.approx(max(y - x, key=abs))
    lower_better = compare_metric("m", a, b, False)
    assert (lower_better.wins, lower_better.losses) == (result.losses, result.wins)


def test_texts_are_stored_once_across_tasks_and_runs(tmp_path: Path) -> None:
    runs = [load_run(write_run(tmp_path / f"s{k}", 24, system=k)) for k in range(2)]
    samples = [read_samples(r) for r in runs]
    data = page_data(runs, samples, ["RB_llm"], ["RB_llm"], {"RB_llm": True})
    assert len(data["T"]) == len(set(data["T"]))
    passages = {c.text for s in runs[0].samples for c in s.contexts}
    assert passages <= set(data["T"])
    # the conversation and reference are the same in both runs: kept once, in the shared list
    assert not any(b.get("shared") or b["kind"] == "conversation" for run in data["runs"] for d in run["detail"]
                   for b in d)
    assert {b["kind"] for s in data["shared"] for b in s} == {"conversation", "passages", "text"}
    table = TextTable()
    assert table.ref("short") == "short" and table.ref("x" * MIN_INTERNED) == table.ref("x" * MIN_INTERNED)


def test_correlate_json_and_png_are_embedded(tmp_path: Path, monkeypatch, capsys) -> None:
    humans = CORRELATE_FIXTURES / "human_eval.json"
    code, out, err = run_cli(["correlate", str(humans), "--format", "json", "--bootstrap", "0", "--heatmap",
                              str(tmp_path / "heat.png")], monkeypatch, capsys)
    assert code == 0, err
    (tmp_path / "corr.json").write_text(out)
    report = json.loads(out)
    folder = write_run(tmp_path / "run", 16)
    code, _, err = run_cli(["report", str(folder), "--correlate", str(tmp_path / "corr.json"), "--correlate",
                            str(tmp_path / "heat.png"), "--out", str(tmp_path / "r.html")], monkeypatch, capsys)
    assert code == 0, err
    html = (tmp_path / "r.html").read_text()
    assert 'id="tab-humans"' in html and "of judges with human ratings" in html
    row = report["correlations"][0]
    assert f"{row[report['stat']]['value']:.3f}" in html
    assert 'src="data:image/png;base64,' in html
    no_external_urls(html)


OK = '{"schema": "ragjudge.sample/1", "id": "1", "input": "q"}'
"""The smallest valid sample line."""


@pytest.mark.parametrize("make, expected", [
    (lambda d: d / "missing", "no such run folder or results file"),
    (lambda d: (d / "empty").mkdir() or d / "empty", "not a ragjudge run folder (it has no summary.json or samples"),
    (lambda d: with_summary(d / "bad.jsonl", f'{OK}\n{OK}\n{{oops\n'), "bad.samples.jsonl:3: invalid JSON"),
    (lambda d: with_summary(d / "blank.jsonl", "\n"), "no samples in this file"),
    (lambda d: (d / "tasks.jsonl").write_text('{"id": 1}\n') and d / "tasks.jsonl",
     "tasks.jsonl: not a ragjudge run: no tasks.summary.json beside it"),
    (lambda d: with_summary(d / "old.jsonl", f'{OK}\n', {"n_tasks": 1, "metrics": {}}),
     "old.summary.json: not a ragjudge.summary/1 summary (no 'schema'"),
    (lambda d: with_summary(d / "noschema.jsonl", '{"id": "1", "input": "q"}\n'),
     "noschema.samples.jsonl:1: field 'schema': not a ragjudge.sample/1 record (no 'schema')"),
    (lambda d: with_summary(d / "typed.jsonl", f'{OK}\n{OK[:-1]}, "scores": {{"m": "high"}}}}\n'),
     "typed.samples.jsonl:2: field 'scores.m': must be an object, got a string"),
    (lambda d: with_summary(d / "value.jsonl", f'{OK[:-1]}, "scores": {{"m": {{"value": "high"}}}}}}\n'),
     "value.samples.jsonl:1: field 'scores.m.value': must be a number, got a string"),
    (lambda d: with_summary(d / "noid.jsonl", '{"schema": "ragjudge.sample/1", "input": "q"}\n'),
     "noid.samples.jsonl:1: field 'id': is missing"),
    (lambda d: (d / "old").mkdir() or (d / "old" / "results.jsonl").write_text('{"id": 1}\n') and
     (write_summary(d / "old" / "summary.json", "faq", 1, {"m": 0.5}) or d / "old"),
     "no sample log (samples.jsonl) beside this run: it was written by an older ragjudge"),
])
def test_bad_runs_are_one_line_and_exit_2(make, expected: str, tmp_path: Path, monkeypatch, capsys) -> None:
    code, _, err = run_cli(["report", str(make(tmp_path)), "--out", str(tmp_path / "r.html")], monkeypatch, capsys)
    assert code == 2 and expected in err and err.startswith("error: ") and err.count("\n") == 1, err
    assert not (tmp_path / "r.html").exists()


def test_bad_summary_label_and_correlate_are_usage_errors(tmp_path: Path, monkeypatch, capsys) -> None:
    folder = write_run(tmp_path / "run", 8)
    (folder / "summary.json").write_text("{not json")
    code, _, err = run_cli(["report", str(folder), "--out", str(tmp_path / "r.html")], monkeypatch, capsys)
    assert code == 2 and "summary.json:1: invalid JSON" in err
    folder = write_run(tmp_path / "run2", 8)
    code, _, err = run_cli(["report", str(folder), "--label", "a", "--label", "b", "--out", str(tmp_path / "r.html")],
                           monkeypatch, capsys)
    assert code == 2 and "--label was given 2 time(s) for 1 run(s)" in err
    (tmp_path / "other.json").write_text('{"metrics": {}}')
    code, _, err = run_cli(["report", str(folder), "--correlate", str(tmp_path / "other.json"), "--out",
                            str(tmp_path / "r.html")], monkeypatch, capsys)
    assert code == 2 and "other.json: field 'correlations': not a `ragjudge correlate --format json` output" in err


def test_runs_of_different_benches_are_refused_together(tmp_path: Path, monkeypatch, capsys) -> None:
    """A report compares runs of one bench: mtrag beside a CDR-like run is a usage error naming both."""
    mtrag = write_run(tmp_path / "mtrag", 8)
    other = tmp_path / "cdr"
    other.mkdir()
    write_samples(other / "samples.jsonl", [Sample(id="q1", input="q", scores={"hit@1": Score(value=1.0)})])
    write_summary(other / "summary.json", "cdr", 1, {"hit@1": 1.0}, unit="queries")
    code, _, err = run_cli(["report", str(mtrag), str(other), "--out", str(tmp_path / "r.html")], monkeypatch, capsys)
    assert code == 2 and err.count("\n") == 1 and "different benches" in err and "mtrag" in err and "cdr" in err, err
    assert not (tmp_path / "r.html").exists()


def test_chart_labels_of_one_family_stay_apart() -> None:
    """Cut at the end, `tool-selection accuracy @4 tools` and `@16 tools` were drawn as the same label."""
    from ragjudge.report.charts import bar_chart

    names = ["tool-selection accuracy @4 tools", "tool-selection accuracy @16 tools"]
    svg = bar_chart("t", names, ["run"], {(n, "run"): 0.5 for n in names})
    labels = re.findall(r'class="label"[^>]*>([^<]+)<', svg)
    assert len(labels) == 2 and len(set(labels)) == 2 and all(len(x) <= 22 for x in labels), labels
    assert labels[0].endswith("@4 tools") and labels[1].endswith("@16 tools")

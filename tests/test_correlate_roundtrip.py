"""Round trip `ragjudge judge` → `ragjudge export --to inspectorraget` → `ragjudge correlate` (export and one
correlate through the real console script, the rest in-process), with human ratings joined by task and model three
ways that must agree."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cli_once
from scipy import stats as sps

from ragjudge.correlation import load_humans
from ragjudge.formats.inspectorraget import read_inspectorraget
from ragjudge.models import normalize_task_id

FIXTURES = Path(__file__).parent / "fixtures" / "inspectorraget"
HUMANS = FIXTURES / "human_eval.json"


def ragjudge(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ragjudge", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=300)


def cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, str, str]:
    """The console entry point in-process (faster than a subprocess): (exit code, stdout, stderr)."""
    from ragjudge.cli import main

    monkeypatch.setattr(sys, "argv", ["ragjudge", *args])
    with pytest.raises(SystemExit) as exc:
        main()
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


def results_metrics(path: Path) -> dict[str, dict[str, float]]:
    """task key → metric → value, read straight from a results.jsonl."""
    out = {}
    for line in path.read_text().splitlines():
        record = json.loads(line)
        out[normalize_task_id(record["task_id"])] = {k: v[0] for k, v in record["metrics"].items() if v[0] is not None}
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """model-a judged offline by idk_lexical and rb_alg (a small BERT), model-b by idk_lexical only."""
    root = tmp_path_factory.mktemp("roundtrip")
    code, _, err = run_cli_once(["judge", str(FIXTURES / "predictions_model_a.jsonl"), "--judges", "idk_lexical,rb_alg",
                            "--out", str(root / "a" / "results.jsonl"), "--format", "json"])
    assert code == 0, err
    code, _, err = run_cli_once(["judge", str(FIXTURES / "predictions_model_b.jsonl"), "--judges", "idk_lexical",
                            "--out", str(root / "b.judged.jsonl"), "--format", "json"])
    assert code == 0, err
    exported = root / "exported.json"
    # Through the console script: the one run of `export` in a fresh interpreter.
    proc = ragjudge("export", "model-a=" + str(root / "a"), "model-b=" + str(root / "b.judged.jsonl"),
                    "--to", "inspectorraget", "--out", str(exported))
    assert proc.returncode == 0, proc.stderr
    assert "8 tasks, 2 model(s) (model-a, model-b)" in proc.stderr
    return {"root": root, "a": root / "a" / "results.jsonl", "b": root / "b.judged.jsonl", "exported": exported}


def test_export_writes_an_inspectorraget_file(runs: dict[str, Path]) -> None:
    data = read_inspectorraget(runs["exported"])
    assert [m.model_id for m in data.models] == ["model-a", "model-b"]
    assert len(data.tasks) == 8 and len(data.documents) == 5 and len(data.evaluations) == 16
    task = data.task_index()["c1::2"]
    assert task.enrichments["Answerability"] == ["PARTIAL"] and task.enrichments["Turn"] == 2
    assert [c.document_id for c in task.contexts] == ["p2"] and task.input[-1]["speaker"] == "user"
    metrics = {m.name: m for m in data.metrics}
    assert all(m.author == "algorithm" for m in metrics.values())
    assert metrics["RB_agg"].type == "numerical" and metrics["RB_agg"].range == [0.0, 1.0, 0.1]
    idk = metrics["idk_lexical"]  # word labels: a categorical metric whose values map back to the judge's numbers
    assert idk.type == "categorical" and {(v.value, v.numeric_value) for v in idk.values} >= {("yes", 1.0), ("no", 0.0)}
    # Every value in the file is the value in the results files.
    expected = {"model-a": results_metrics(runs["a"]), "model-b": results_metrics(runs["b"])}
    for ev in data.evaluations:
        want = expected[ev.model_id][normalize_task_id(ev.task_id)]
        got = {name: metrics[name].to_number(by_rater["system"].value) for name, by_rater in ev.annotations.items()}
        assert got == pytest.approx(want)
    assert "RB_agg" not in expected["model-b"]["c1::1"] and "RB_agg" in expected["model-a"]["c1::1"]


def test_results_export_correlate_round_trip(runs: dict[str, Path], capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    # Human ratings added to the exported file (as annotators would in InspectorRAGet), matched by task and model.
    humans = json.loads(HUMANS.read_text())
    exported = json.loads(runs["exported"].read_text())
    human_metrics = [m for m in humans["metrics"] if m["author"] == "human"]
    ratings = {(normalize_task_id(ev["task_id"]), ev["model_id"]): ev["annotations"] for ev in humans["evaluations"]}
    for ev in exported["evaluations"]:
        source = ratings[(normalize_task_id(ev["task_id"]), ev["model_id"])]
        ev["annotations"].update({m["name"]: source[m["name"]] for m in human_metrics if m["name"] in source})
    exported["metrics"] += human_metrics
    merged = runs["root"] / "merged.json"
    merged.write_text(json.dumps(exported))

    common = ["--format", "json", "--bootstrap", "200", "--seed", "7", "--judge-metrics",
              "RB_agg,idk_lexical,RougeL_stemFalse,RB_agg_idk"]
    via_merged = ragjudge("correlate", str(merged), *common)  # through the console script
    assert via_merged.returncode == 0, via_merged.stderr
    reports = [json.loads(via_merged.stdout)]
    for judges in (["--judges", "model-a=" + str(runs["a"].parent), "--judges", "model-b=" + str(runs["b"])],
                   ["--judges", str(runs["exported"])]):
        code, out, err = cli(capsys, monkeypatch, "correlate", str(HUMANS), *judges, "--exclude-model", "reference",
                             *common)
        assert code == 0, err
        reports.append(json.loads(out))
    assert reports[0]["correlations"] == reports[1]["correlations"] == reports[2]["correlations"]
    assert reports[0]["agreement"] == reports[1]["agreement"]
    assert reports[1]["idk_accuracy"]["idk_lexical"] == reports[2]["idk_accuracy"]["idk_lexical"]

    # And the numbers are scipy's on vectors built straight from the results files and the human medians.
    ds = load_humans(HUMANS)
    judged = {"model-a": results_metrics(runs["a"]), "model-b": results_metrics(runs["b"])}
    for row in reports[1]["correlations"]:
        human = ds.humans[row["human"]].values
        pairs = [(judged[k.model][k.task][row["judge"]], v) for k, v in sorted(human.items())
                 if k.model in judged and row["judge"] in judged[k.model].get(k.task, {})]
        x, y = zip(*pairs, strict=True)
        assert row["n"] == len(pairs)
        assert row["spearman"]["value"] == pytest.approx(sps.spearmanr(x, y).statistic, abs=1e-12)
        assert row["kendall"]["value"] == pytest.approx(sps.kendalltau(x, y).statistic, abs=1e-12)
    rb = next(r for r in reports[1]["correlations"] if (r["judge"], r["human"]) == ("RB_agg", "faithfulness"))
    assert rb["n"] == 8  # RB_agg was only run for model-a
    assert reports[1]["idk_accuracy"]["idk_lexical"]["n"] == 14  # 2 models × 7 non-conversational tasks


def test_results_that_match_nothing_are_an_error(runs: dict[str, Path], capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    code, _, err = cli(capsys, monkeypatch, "correlate", str(HUMANS), "--judges", str(runs["a"]), "--bootstrap", "0")
    assert code == 2 and err.count("\n") == 1
    assert "which model of" in err and "models: model-a, model-b, reference" in err
    code, _, err = cli(capsys, monkeypatch, "correlate", str(HUMANS), "--judges", "model-x=" + str(runs["a"]))
    assert code == 2 and "--judges: no model 'model-x'" in err
    other = runs["root"] / "renamed.jsonl"  # a run whose sample log names other tasks
    samples = runs["a"].with_name("samples.jsonl").read_text().splitlines()
    other.with_name("renamed.samples.jsonl").write_text("".join(json.dumps({**json.loads(line), "id": "zz::" + str(i)})
                                                                + "\n" for i, line in enumerate(samples)))
    code, _, err = cli(capsys, monkeypatch, "correlate", str(HUMANS), "--judges", "model-a=" + str(other))
    assert code == 2 and "no result matches a task of" in err and err.count("\n") == 1
    # Judge values that disagree with the same metric from another source are an error, not a silent pick.
    changed = runs["root"] / "changed.jsonl"
    changed.with_name("changed.samples.jsonl").write_text("".join(
        json.dumps({**json.loads(line), "scores": {"RB_agg": {"value": 0.123}}}) + "\n" for line in samples))
    code, _, err = cli(capsys, monkeypatch, "correlate", str(HUMANS), "--judges", str(runs["exported"]),
                       "--judges", "model-a=" + str(changed))
    assert code == 2 and "judge metric 'RB_agg' for task" in err and "is 0.123 here but" in err


def test_export_model_ids_and_errors(runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    def export(*args: str) -> tuple[int, str]:
        code, _, err = cli(capsys, monkeypatch, "export", *args)
        return code, err

    out = tmp_path / "default_ids.json"
    code, err = export(str(runs["a"].parent), str(runs["b"]), "--out", str(out))
    assert code == 0, err
    assert [m.model_id for m in read_inspectorraget(out).models] == ["a", "b"]  # run folder name; file minus .judged
    code, err = export(str(runs["a"]), str(runs["a"].parent), "--out", str(out))
    assert code == 2 and "model id 'a' is used for both" in err
    code, err = export(str(runs["a"]), "--to", "ragas", "--out", str(out))
    assert code == 2 and err == ("error: --to must be one of inspectorraget, mtrageval-a, mtrageval-b, mtrageval-c, "
                                 "got 'ragas'\n")
    code, err = export(str(FIXTURES / "human_eval.json"), "--out", str(out))
    assert code == 2 and "human_eval.json: not a ragjudge run" in err
    code, err = export(str(FIXTURES / "predictions_model_a.jsonl"), "--out", str(out))
    assert code == 2 and "predictions_model_a.jsonl: not a ragjudge run (no predictions_model_a.samples.jsonl beside " \
        "it): judge it first" in err


def test_an_inspectorraget_judge_file_that_matches_nothing(runs: dict[str, Path], tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    code, _, err = cli(capsys, monkeypatch, "export", "other-model=" + str(runs["b"]), "--out",
                       str(tmp_path / "other.json"))
    assert code == 0, err
    code, _, err = cli(capsys, monkeypatch, "correlate", str(HUMANS), "--judges", str(tmp_path / "other.json"))
    assert code == 2 and "no evaluation matches a task and model of" in err
    assert "models there: model-a, model-b, reference" in err and err.count("\n") == 1


def test_an_mtrag_results_file_alone_is_read_as_it_is(runs: dict[str, Path], tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Judged MTRAG results with no sample log beside them (as MTRAG's own evaluation scripts write them) export and
    correlate as the ragjudge run they came from does."""
    alone = tmp_path / "official.jsonl"
    alone.write_text((runs["a"]).read_text(encoding="utf-8"), encoding="utf-8")
    assert "metrics" in json.loads(alone.read_text().splitlines()[0])
    for source, out in ((runs["a"], tmp_path / "run.json"), (alone, tmp_path / "alone.json")):
        code, _, err = cli(capsys, monkeypatch, "export", f"model-a={source}", "--out", str(out))
        assert code == 0, err
    ours, theirs = read_inspectorraget(tmp_path / "run.json"), read_inspectorraget(tmp_path / "alone.json")
    assert [(e.task_id, e.model_response, e.annotations) for e in ours.evaluations] == \
        [(e.task_id, e.model_response, e.annotations) for e in theirs.evaluations]
